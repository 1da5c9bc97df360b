"""Reading parts of a tensor: ``gather_nd``, ``slice``, ``broadcast_to``, ``newaxis``,
``boolean_mask``, ``searchsorted``.

>>> import gradkit.tf as tf
>>> x = tf.reshape(tf.range(6.0), [2, 3])
>>> tf.gather_nd(x, [[1, 2], [0, 0]]).numpy().tolist(), tf.slice(x, [0, 1], [-1, 2]).numpy().tolist()
([5.0, 0.0], [[1.0, 2.0], [4.0, 5.0]])
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from . import _shape_args
from ._convert import call, convert, known_value, static_ints

newaxis = None


def _gather_nd(params, indices, batch_dims):
    if batch_dims:
        return jax.vmap(lambda p, i: _gather_nd(p, i, batch_dims - 1))(params, indices)
    return params[tuple(jnp.moveaxis(indices, -1, 0))]


def gather_nd(params, indices, batch_dims=0, name=None):
    """``params[tuple(index)]`` for each index along ``indices``' last axis."""
    params, indices = convert(params), convert(indices)
    k = indices.shape[-1] if indices.ndim else 0
    check_indices(indices, params.shape[int(batch_dims) : int(batch_dims) + k], "tf.gather_nd")
    return call(_gather_nd, params, indices, batch_dims=int(batch_dims))


def check_indices(indices, bounds, what: str) -> None:
    """Refuse an index outside ``[0, bound)`` (``bounds``: one per component of the indices' last
    axis, or one for all), as TensorFlow does on the CPU where jax would clamp or fill; indices
    known now are checked, traced ones inside tf.function cannot be."""
    value = known_value(indices)
    if value is None or not value.size:
        return
    bounds = np.broadcast_to(np.asarray(bounds), value.shape)
    bad = (value < 0) | (value >= bounds)
    if bad.any():
        at = tuple(np.argwhere(bad)[0])
        raise IndexError(
            f"[gradkit] {what}: index {int(value[at])} is not in [0, {int(bounds[at])}), as TensorFlow requires."
        )


def _slice(x, begin, size):
    limit = tuple(x.shape[i] if s == -1 else b + s for i, (b, s) in enumerate(zip(begin, size)))
    return jax.lax.slice(x, begin, limit)


def slice(input_, begin, size, name=None):  # noqa: A001  (TensorFlow's name)
    """``size[i]`` entries from ``begin[i]`` along each axis (``-1``: to the end)."""
    x, begin, size = convert(input_), static_ints(begin), static_ints(size)
    _shape_args.check_slice(begin, size, tuple(x.shape))
    return call(_slice, x, begin=begin, size=size)


def _broadcast_to(x, shape):
    return jnp.broadcast_to(x, shape)


def broadcast_to(input, shape, name=None):  # noqa: A002
    return call(_broadcast_to, convert(input), shape=static_ints(shape))


def _take_flat(x, indices, axis, k):
    """``x`` with axes ``axis .. axis+k`` flattened, then those positions taken."""
    flat = x.reshape((*x.shape[:axis], -1, *x.shape[axis + k :]))
    return jnp.take(flat, indices, axis=axis)


def boolean_mask(tensor, mask, axis=None, name="boolean_mask"):
    """``tf.boolean_mask``: the entries of ``tensor`` where ``mask`` is True (the mask spans
    ``tensor``'s axes from ``axis``). The result's size depends on the mask's values, so the
    mask must be concrete: it may be a recorded tensor eagerly, not a traced one inside
    ``tf.function``, where ``tf.where(mask, tensor, 0)`` keeps the shape instead.
    """
    x = convert(tensor)
    # A Python or NumPy mask is known now, also inside tf.function (convert would trace it there).
    value = known_value(mask if isinstance(mask, (list, tuple, np.ndarray, np.generic, bool)) else convert(mask))
    if value is None:
        raise _errors.GradkitTypeError(
            "tf.boolean_mask inside tf.function needs a concrete mask: its result's size depends on the mask's "
            "values, which a traced program cannot have. Use tf.where(mask, tensor, 0) to keep the shape."
        )
    axis = 0 if axis is None else int(axis)
    axis = axis + len(x.shape) if axis < 0 else axis
    k = value.ndim
    if k == 0 or tuple(x.shape[axis : axis + k]) != value.shape:
        raise _errors.GradkitValueError(
            f"tf.boolean_mask: the mask's shape {value.shape} must be the tensor's shape from axis {axis} "
            f"({tuple(x.shape[axis : axis + max(k, 1)])}), as TensorFlow requires, and not a scalar."
        )
    indices = jnp.asarray(np.flatnonzero(value.astype(bool).reshape(-1)), jnp.int32)
    return call(_take_flat, x, indices, axis=axis, k=k)


def _searchsorted(sorted_sequence, values, side):
    return jax.vmap(lambda s, v: jnp.searchsorted(s, v, side=side))(
        sorted_sequence.reshape(-1, sorted_sequence.shape[-1]), values.reshape(-1, values.shape[-1])
    ).reshape(values.shape)


def searchsorted(sorted_sequence, values, side="left", out_type=jnp.int32, name=None):
    """``tf.searchsorted``: for each row of ``values``, where it would go in the matching row of
    ``sorted_sequence`` (innermost axis); an integer result, so no gradient."""
    return call(_searchsorted, convert(sorted_sequence), convert(values), side=side)
