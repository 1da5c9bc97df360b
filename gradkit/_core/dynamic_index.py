"""Basic indices whose start positions are runtime values: one compiled program for every position.

An index made of Python ints and slices of step 1 (``x[i]``, ``x[i:i + 16]``, ``x[:, t]``) fixes
by value where each axis it narrows starts. Compiled as jax's static ``slice``, each new start is
a new program: a loop that walks an array (``X[i * 16:(i + 1) * 16]`` of a Variable under an eager
tape, ``v[i].assign(row)``, ``tf.slice(x, [i, 0], [4, -1])``) would compile at every step, about
100 ms each. Outside a jax trace gradkit passes the starts instead as one small int32 array, an
argument of the program (jax.numpy does the same for its own eager indexing, jax-ml/jax#12198),
so such a loop compiles once. Under a trace (``gk.jit``, ``tf.function``, the transforms) the
index stays static: the starts are constants there, which XLA folds, and a new start is a new
trace anyway.

The index is checked before it comes here (no index is out of range), so ``dynamic_slice``
never clamps. A write does not update the array in place (see ``index_update`` for why): the
new values are placed into zeros and selected into the array by a mask of the box.

>>> import jax.numpy as jnp
>>> box, starts = box_of((slice(1, 3), 0), (4, 2))
>>> take(jnp.arange(8.0).reshape(4, 2), starts_array(starts), box)
Array([2., 4.], dtype=float32)
>>> write(jnp.zeros((4, 2)), starts_array(starts), box, jnp.ones(2), "add")[:, 0]
Array([0., 1., 1., 0.], dtype=float32)
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np

from . import frames

# How each update combines the box's current values with the update, as jax's ``.at[]`` updates.
COMBINE = {
    "set": lambda old, u: u,
    "add": lambda old, u: old + u,
    "subtract": lambda old, u: old - u,
    "multiply": lambda old, u: old * u,
    "divide": lambda old, u: old / u,
    "power": lambda old, u: old**u,
    "min": jnp.minimum,
    "max": jnp.maximum,
}
WRITES = frozenset(COMBINE)


@dataclasses.dataclass(frozen=True)
class Box:
    """The static part of a basic index: each input axis' extent, and the result's shape
    (the integer-indexed axes dropped, a ``None``'s axis of 1 added)."""

    sizes: tuple
    shape: tuple


def box_of(index, shape) -> tuple[Box, tuple] | None:
    """``(box, starts)`` for a basic ``index`` into an array of ``shape`` made of Python ints,
    slices of step 1 with int bounds, None and one Ellipsis, where some axis starts past 0; None
    for any other index (it stays static: ``x[0]`` and ``x[:, :3]`` are one program each)."""
    items = index if type(index) is tuple else (index,)
    narrowing = ellipses = 0
    for item in items:
        kind = type(item)
        if kind is int or isinstance(item, np.integer):
            narrowing += 1
        elif kind is slice:
            if item.step not in (None, 1) or not (_bound(item.start) and _bound(item.stop)):
                return None
            narrowing += 1
        elif item is Ellipsis:
            ellipses += 1
        elif item is not None:
            return None
    if ellipses > 1 or narrowing > len(shape):
        return None
    starts, sizes, out = [], [], []
    axis = 0
    for item in items:
        if item is None:
            out.append(1)
        elif item is Ellipsis:
            for _ in range(len(shape) - narrowing):
                starts.append(0), sizes.append(shape[axis]), out.append(shape[axis])
                axis += 1
        elif type(item) is slice:
            start, stop, _ = item.indices(shape[axis])
            size = max(0, stop - start)
            starts.append(start if size else 0), sizes.append(size), out.append(size)
            axis += 1
        else:
            starts.append(int(item) % shape[axis]), sizes.append(1)
            axis += 1
    for rest in shape[axis:]:
        starts.append(0), sizes.append(rest), out.append(rest)
    if not any(starts):
        return None
    return Box(tuple(sizes), tuple(out)), tuple(starts)


def _bound(b) -> bool:
    return b is None or (type(b) is int or isinstance(b, np.integer))


def runtime_box(index, shape) -> tuple[Box, jax.Array] | None:
    """``(box, starts)`` with the starts a device array, for an index outside every jax trace;
    None under a trace or for an index ``box_of`` leaves static."""
    if frames.under_jax_trace():
        return None
    found = box_of(index, shape)
    if found is None:
        return None
    box, starts = found
    return box, starts_array(starts)


@functools.lru_cache(maxsize=4096)
def starts_array(starts: tuple | int) -> jax.Array:
    """The starts (a tuple, or one int: a shift) as an int32 device array, one per distinct
    value: held on the device, a program's argument costs no transfer, and a tape records one
    input for it per session."""
    return jax.device_put(np.asarray(starts, np.int32))  # a transfer: jnp.asarray would compile a copy


def take(x, starts, box: Box):
    """``x[index]`` for the index ``box`` and ``starts`` stand for."""
    starts = [starts[k] for k in range(len(box.sizes))]
    return jnp.reshape(jax.lax.dynamic_slice(x, starts, box.sizes), box.shape)


def write(current, starts, box: Box, update, how: str):
    """``getattr(current.at[index], how)(update)`` for the index ``box`` and ``starts`` stand for."""
    current = jnp.asarray(current)
    begin = [starts[k] for k in range(len(box.sizes))]
    old = jnp.reshape(jax.lax.dynamic_slice(current, begin, box.sizes), box.shape)
    new = COMBINE[how](old, jnp.asarray(update).astype(current.dtype))
    new = jnp.reshape(jnp.broadcast_to(jnp.asarray(new).astype(current.dtype), box.shape), box.sizes)
    placed = jax.lax.dynamic_update_slice(jnp.zeros_like(current), new, begin)
    inside = None
    for axis, (size, full) in enumerate(zip(box.sizes, current.shape)):
        if size == full:
            continue
        position = jax.lax.broadcasted_iota(np.int32, current.shape, axis)
        on_axis = (position >= begin[axis]) & (position < begin[axis] + size)
        inside = on_axis if inside is None else inside & on_axis
    return placed if inside is None else jnp.where(inside, placed, current)


# One dispatch for an eager write (a Variable's slice assigned outside any tape): compiled once
# per array shape, box and update, whatever the starts.
write_compiled = jax.jit(write, static_argnums=(2, 4))
