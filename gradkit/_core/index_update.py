"""Writing into part of an array, ``x.at[index].set(u)`` and the other updates, safely compiled.

XLA's CPU backend can compile a write into a basic slice (``x.at[1:].set(u)``, ``.add``, ...,
a dynamic-update-slice) as an in-place kernel that reads ``u`` while it overwrites ``x``, and
where ``u`` is computed from ``x`` in the same fused loop (``x.at[1:].set(x[:-1] * c)`` after
``x`` was computed from a slice of another array) it reads values it has already overwritten:
openxla/xla#49176, still open in jaxlib 0.10.2. gradkit compiles a whole recorded step as one
program, so an imperative ``v[1:].assign(f(v))`` meets that pattern more often than op-by-op
JAX code does.

A write into a basic slice is therefore built so that no kernel can write where it reads: the
slice's new values are computed first and the result is spliced together from them and the
untouched parts of the array (a concatenation along each axis the index narrows), which XLA
compiles to pads and adds, never to an update in place. A strided slice (a step other than 1
or -1) is written into a fresh array of zeros and selected into place with a mask built from
each axis's positions. (A mask held as an array-sized constant instead makes XLA's compile
time grow several-fold in a long chain of slice writes.) The values and gradients are those of
``x.at[index].<update>(u)``. Integer-array indices compile to a scatter, which does not take
that path, and stay jax's own update (repeated indices keep its meaning).

>>> import jax, jax.numpy as jnp
>>> from gradkit._core.index_update import index_update
>>> base = jnp.array([[0.5, -0.8, 0.7]])
>>> jax.jit(lambda b: (lambda h: index_update(h, slice(1, None), h[:2] * 2.0, "set"))(b[0] * 1.0))(base)
Array([ 0.5,  1. , -1.6], dtype=float32)
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from . import dynamic_index
from .index_bounds import check_indices

_COMBINE = dynamic_index.COMBINE  # how each update combines the slice's values with the update


def index_update(current, index, update, how: str, **kwargs):
    """``getattr(current.at[index], how)(update, **kwargs)``, compiled without the in-place hazard.

    ``how`` is one of jax's updates: ``set``, ``add``, ``subtract``, ``multiply``, ``divide``,
    ``power``, ``min``, ``max``, or ``apply`` (``update`` is then the function).
    """
    current = jnp.asarray(current)
    if "mode" in kwargs:  # jax's own out-of-range modes, asked for by name: jax's update as it is
        return getattr(current.at[index], how)(update, **kwargs)
    check_indices(index, current.shape)
    if (how not in _COMBINE and how != "apply") or _scatters(index):
        return getattr(current.at[index], how)(update, **kwargs)
    if how in dynamic_index.WRITES:
        runtime = dynamic_index.runtime_box(index, current.shape)
        if runtime is not None:  # eager: one compiled program for every start (see dynamic_index)
            box, starts = runtime
            return dynamic_index.write_compiled(current, starts, box, update, how)
    old = current[index]
    if how == "apply":
        new = update(old)
    else:
        # As jax's updates do: the update in the array's dtype, then combined.
        new = _COMBINE[how](old, jnp.asarray(update).astype(current.dtype))
    new = jnp.broadcast_to(jnp.asarray(new).astype(current.dtype), old.shape)
    bounds = _axis_bounds(current.shape, index)
    if bounds is not None and all(abs(step) == 1 for _, _, step in bounds.values()):
        return _spliced(current, bounds, new)
    return jnp.where(_written(current.shape, index, bounds), jnp.zeros_like(current).at[index].set(new), current)


def _spliced(current, bounds, new):
    """``current`` with the box ``bounds`` (steps of 1 or -1) replaced by ``new`` (``current[index]``'s shape)."""
    box, reversed_axes = [], []
    for axis, (start, stop, step) in sorted(bounds.items()):
        if step < 0:  # the same positions, read from the other end
            start, stop = stop + 1, start + 1
            reversed_axes.append(axis)
        box.append((axis, start, max(start, stop)))
    box_shape = list(current.shape)
    for axis, lo, hi in box:
        box_shape[axis] = hi - lo
    # A basic index keeps the axes' order: the box differs from ``new`` only by axes of size 1.
    new = jnp.reshape(new, box_shape)
    if reversed_axes:
        new = jnp.flip(new, reversed_axes)
    return _splice(current, box, new)


def _splice(current, box, new):
    if not box:
        return new
    (axis, lo, hi), inner = box[0], box[1:]
    middle = jax.lax.slice_in_dim(current, lo, hi, axis=axis)
    parts = [
        jax.lax.slice_in_dim(current, 0, lo, axis=axis),
        _splice(middle, inner, new),
        jax.lax.slice_in_dim(current, hi, current.shape[axis], axis=axis),
    ]
    return jax.lax.concatenate([p for p in parts if p.shape[axis]] or [parts[1]], axis)


def _written(shape, index, bounds):
    """A boolean array of ``shape``: True where the basic ``index`` (narrowing ``bounds``) writes."""
    if bounds is None:  # an index form ``_axis_bounds`` does not read: the mask jax's own update makes
        return jnp.zeros(shape, bool).at[index].set(True)
    written = jnp.ones(shape, bool)
    for axis, (start, stop, step) in bounds.items():
        position = jax.lax.broadcasted_iota(np.int32, shape, axis)
        if step > 0:
            on_axis = (position >= start) & (position < stop)
        else:
            on_axis = (position <= start) & (position > stop)
        if abs(step) != 1:
            on_axis = on_axis & ((position - start) % abs(step) == 0)
        written = written & on_axis
    return written


def _axis_bounds(shape, index):
    """``{axis: (start, stop, step)}`` for each axis the basic ``index`` narrows, as ``slice.indices``
    gives them (an integer ``i`` is ``(i, i + 1, 1)``), or None for an index form it does not read."""
    items = index if type(index) is tuple else (index,)
    if any(type(i) is bool or isinstance(i, np.bool_) for i in items):
        return None
    narrowing = [i for i in items if i is not None and i is not Ellipsis]
    ellipses = sum(i is Ellipsis for i in items)
    if ellipses > 1 or len(narrowing) > len(shape):
        return None
    bounds, axis = {}, 0
    for item in items:
        if item is None:
            continue
        if item is Ellipsis:
            axis += len(shape) - len(narrowing)
            continue
        size = shape[axis]
        if isinstance(item, slice):
            if not all(p is None or isinstance(p, (int, np.integer)) for p in (item.start, item.stop, item.step)):
                return None
            start, stop, step = item.indices(size)
        elif isinstance(item, (int, np.integer)):
            start = int(item) % size if size else 0
            stop, step = start + 1, 1
        else:
            return None
        if (start, stop, step) != (0, size, 1):
            bounds[axis] = (start, stop, step)
        axis += 1
    return bounds


def _scatters(index) -> bool:
    """Whether ``index`` holds an integer or boolean array (a scatter), not only basic indices."""
    items = index if type(index) is tuple else (index,)
    for i in items:
        if isinstance(i, (jax.Array, np.ndarray, jax.core.Tracer, list)) or hasattr(i, "__jax_array__"):
            return True
    return False
