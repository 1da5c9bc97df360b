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
from gradkit._core import dynamic_index, frames

from . import _shape_args
from ._convert import call, convert, known_value, static_ints

newaxis = None


def _gather_nd(params, indices, batch_dims, ignore=False):
    if batch_dims:
        return jax.vmap(lambda p, i: _gather_nd(p, i, batch_dims - 1, ignore))(params, indices)
    if indices.shape[-1] == 0:  # each (empty) index selects all of params
        return jnp.broadcast_to(params, indices.shape[:-1] + params.shape)
    if ignore:
        indices = out_of_range_dropped(indices, params.shape[: indices.shape[-1]])
        return params.at[tuple(jnp.moveaxis(indices, -1, 0))].get(mode="fill", fill_value=0)
    return params[tuple(jnp.moveaxis(indices, -1, 0))]


def gather_nd(params, indices, batch_dims=0, name=None, bad_indices_policy=""):
    """``params[tuple(index)]`` for each index along ``indices``' last axis. An index out of
    range raises, as TensorFlow's default on the CPU; with ``bad_indices_policy='IGNORE'`` it
    reads 0 instead."""
    params, indices = convert(params), convert(indices)
    k = indices.shape[-1] if indices.ndim else 0
    if k > params.ndim - int(batch_dims):
        raise _errors.InvalidArgumentValueError(
            f"tf.gather_nd: indices of depth {k} (their last dimension) index params of shape {tuple(params.shape)} "
            f"past its {params.ndim - int(batch_dims)} dimensions after batch_dims={int(batch_dims)}; TensorFlow "
            "refuses them too. Each index holds at most one entry per dimension of params."
        )
    if bad_indices(bad_indices_policy, "tf.gather_nd"):
        return call(_gather_nd, params, indices, batch_dims=int(batch_dims), ignore=True)
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
        raise _errors.GradkitIndexError(
            f"[gradkit] {what}: index {int(value[at])} is not in [0, {int(bounds[at])}), as TensorFlow requires."
        )


def _slice(x, begin, size):
    limit = tuple(x.shape[i] if s == -1 else b + s for i, (b, s) in enumerate(zip(begin, size)))
    return jax.lax.slice(x, begin, limit)


def _dynamic_slice(x, *starts, size):
    if len(starts) == 1 and starts[0].ndim == 1:  # one begin vector
        starts = list(starts[0])
    return jax.lax.dynamic_slice(x, [jnp.asarray(b, jnp.int32) for b in starts], size)


def _begin_entries(begin) -> list | None:
    """``begin``'s entries, each a Python int or a traced scalar tensor; None where ``begin`` is
    one traced vector."""
    if isinstance(begin, (list, tuple)):
        entries = []
        for b in begin:
            b = b if isinstance(b, (int, np.integer)) else convert(b)
            value = known_value(b)
            entries.append(int(value) if value is not None else b)
        return entries
    value = known_value(convert(begin))
    return None if value is None else [int(v) for v in value.reshape(-1)]


def slice(input_, begin, size, name=None):  # noqa: A001  (TensorFlow's name)
    """``size[i]`` entries from ``begin[i]`` along each axis (``-1``: to the end).

    Inside ``tf.function`` the begin may be traced (``tf.slice(x, [i, 0], [1, -1])``, ``i`` a loop
    counter) where the sizes are known: a size of ``-1`` needs that axis' begin known.
    """
    x, size = convert(input_), static_ints(size)
    shape = tuple(x.shape)
    entries = _begin_entries(begin)
    if entries is not None and all(isinstance(b, int) for b in entries):
        _shape_args.check_slice(tuple(entries), size, shape)
        if any(entries) and not frames.under_jax_trace():
            # Eagerly the begin is an input of the program: a loop's tf.slice(x, [i, 0], ...)
            # compiles once (see gradkit._core.dynamic_index).
            sizes = tuple(n - b if s == -1 else s for n, b, s in zip(shape, entries, size))
            box = dynamic_index.Box(sizes, sizes)
            return call(dynamic_index.take, x, dynamic_index.starts_array(tuple(entries)), box=box)
        return call(_slice, x, begin=tuple(entries), size=size)
    known = [b if isinstance(b, int) else 0 for b in entries or [0] * len(shape)]
    _shape_args.check_slice(tuple(known), size, shape)  # ranks, and what is known of the ranges
    sizes = []
    for axis, n in enumerate(size):
        if n == -1 and (entries is None or not isinstance(entries[axis], int)):
            raise _errors.GradkitTypeError(
                f"tf.slice inside tf.function got a traced begin on axis {axis} with size -1: that axis' size "
                "would depend on a value the traced program does not know. Give the size there, a number."
            )
        sizes.append(shape[axis] - entries[axis] if n == -1 else n)
    starts = [convert(begin)] if entries is None else entries
    return call(_dynamic_slice, x, *starts, size=tuple(sizes))


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


def _searchsorted(sorted_sequence, values, side, dtype):
    if sorted_sequence.shape[-1] == 0 or values.size == 0:
        return jnp.zeros(values.shape, dtype)  # every value goes first in an empty row
    found = jax.vmap(lambda s, v: jnp.searchsorted(s, v, side=side))(
        sorted_sequence.reshape(-1, sorted_sequence.shape[-1]), values.reshape(-1, values.shape[-1])
    ).reshape(values.shape)
    if side == "left" and jnp.issubdtype(values.dtype, jnp.floating):
        # TensorFlow's lower bound asks `entry < value`, false for a NaN value: it goes first
        # (jax orders NaN last, as a sort does).
        found = jnp.where(jnp.isnan(values), 0, found)
    return found.astype(dtype)


def searchsorted(sorted_sequence, values, side="left", out_type=jnp.int32, name=None):
    """``tf.searchsorted``: for each row of ``values``, where it would go in the matching row of
    ``sorted_sequence`` (innermost axis); an integer result (``out_type``: int32 or int64, which
    is int32 unless jax's x64 mode is on), so no gradient."""
    dtype = np.dtype(out_type)
    if dtype not in (np.dtype(np.int32), np.dtype(np.int64)) or side not in ("left", "right"):
        raise _errors.GradkitValueError(
            f"tf.searchsorted got side={side!r}, out_type={dtype.name}; TensorFlow takes side 'left' or 'right' "
            "and out_type tf.int32 or tf.int64."
        )
    dtype = jax.dtypes.canonicalize_dtype(dtype)
    return call(_searchsorted, convert(sorted_sequence), convert(values), side=side, dtype=dtype)


def bad_indices(policy, what: str) -> bool:
    """TensorFlow's ``bad_indices_policy``: True for 'IGNORE' (an index out of range is skipped,
    or reads 0), False for '', 'DEFAULT' and 'ERROR' (it raises, TensorFlow's default on the CPU)."""
    if policy in ("", "DEFAULT", "ERROR"):
        return False
    if policy == "IGNORE":
        return True
    raise _errors.GradkitValueError(
        f"{what} got bad_indices_policy={policy!r}; TensorFlow takes '', 'DEFAULT', 'ERROR' or 'IGNORE'."
    )


def out_of_range_dropped(indices, bounds):
    """``indices`` (last axis: one component per bound) with every index that has a component
    outside ``[0, bound)`` moved past the end on all its components, so that a scatter in mode
    'drop' skips it and a gather in mode 'fill' reads the fill value (jax would wrap a negative one)."""
    bounds = jnp.asarray(bounds, indices.dtype).reshape((1,) * (indices.ndim - 1) + (-1,))
    bad = jnp.any((indices < 0) | (indices >= bounds), axis=-1, keepdims=True)
    return jnp.where(bad, bounds, indices)
