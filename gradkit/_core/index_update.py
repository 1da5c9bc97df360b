"""Writing into part of an array, ``x.at[index].set(u)`` and the other updates, safely compiled.

XLA's CPU backend can compile a write into a basic slice (``x.at[1:].set(u)``, ``.add``, ...,
a dynamic-update-slice) as an in-place kernel that reads ``u`` while it overwrites ``x``, and
where ``u`` is computed from ``x`` in the same fused loop (``x.at[1:].set(x[:-1] * c)`` after
``x`` was computed from a slice of another array) it reads values it has already overwritten:
openxla/xla#49176, still open in jaxlib 0.10.2. gradkit compiles a whole recorded step as one
program, so an imperative ``v[1:].assign(f(v))`` meets that pattern more often than op-by-op
JAX code does.

A write into a basic slice is therefore built so that no kernel can write where it reads: the
slice's new values are computed first, written into a fresh array of zeros, and selected into
place with a mask that XLA folds to a constant. The values and gradients are those of
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

from .index_bounds import check_indices

# How each update combines the slice's current values with the update (``apply`` takes a function).
_COMBINE = {
    "set": lambda old, u: u,
    "add": lambda old, u: old + u,
    "subtract": lambda old, u: old - u,
    "multiply": lambda old, u: old * u,
    "divide": lambda old, u: old / u,
    "power": lambda old, u: old**u,
    "min": jnp.minimum,
    "max": jnp.maximum,
}


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
    old = current[index]
    if how == "apply":
        new = update(old)
    else:
        # As jax's updates do: the update in the array's dtype, then combined.
        new = _COMBINE[how](old, jnp.asarray(update).astype(current.dtype))
    new = jnp.broadcast_to(jnp.asarray(new).astype(current.dtype), old.shape)
    written = jnp.zeros(current.shape, bool).at[index].set(True)  # a constant once compiled
    return jnp.where(written, jnp.zeros_like(current).at[index].set(new), current)


def _scatters(index) -> bool:
    """Whether ``index`` holds an integer or boolean array (a scatter), not only basic indices."""
    items = index if type(index) is tuple else (index,)
    for i in items:
        if isinstance(i, (jax.Array, np.ndarray, jax.core.Tracer, list)) or hasattr(i, "__jax_array__"):
            return True
    return False
