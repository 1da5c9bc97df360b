"""Splitting a tensor into groups and merging groups back: ``tf.dynamic_partition`` and
``tf.dynamic_stitch``.

The results' sizes depend on the values of ``partitions`` / ``indices``, so those must be known
(a Python list, NumPy array or eager tensor; not a value traced inside ``tf.function``); the
data may be traced. Gradients are TensorFlow's: a partition's gradient goes back to the entries
it took, and every entry of ``dynamic_stitch``'s data gets the gradient at its index, also one
that a later duplicate index overwrote (TensorFlow's gradient gathers at every index).

>>> import gradkit.tf as tf
>>> [p.numpy().tolist() for p in tf.dynamic_partition([10, 20, 30, 40], [1, 0, 1, 1], 2)]
[[20], [10, 30, 40]]
>>> tf.dynamic_stitch([[0, 2], [1, 2]], [[1.0, 2.0], [3.0, 4.0]]).numpy().tolist()
[1.0, 3.0, 4.0]
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from ._convert import call, convert, convert_like
from ._shape_utils import static_value


def _take_rows(x, positions, k):
    rows = x.reshape((-1, *x.shape[k:]))
    return tuple(jnp.take(rows, p, axis=0) for p in positions)


def _as_indices(x):
    # An empty Python list is int32 here, as TensorFlow converts it (convert would give float32).
    return convert(x, np.int32) if isinstance(x, (list, tuple)) and not np.size(x) else convert(x)


def _known_ints(x, what: str, arg: str) -> np.ndarray:
    value = static_value(x)
    if value is None:
        raise _errors.GradkitTypeError(
            f"{what} inside tf.function needs {arg} known when tracing (a Python list, a NumPy array or a constant): "
            "the results' sizes depend on its values, which a traced program cannot have. Compute it outside the "
            "tf.function, or use a masked op that keeps the shape (tf.where, tf.math.unsorted_segment_sum)."
        )
    return value


def dynamic_partition(data, partitions, num_partitions, name=None):
    """``tf.dynamic_partition``: ``num_partitions`` tensors; the ``i``-th holds, in order, the
    slices ``data[j]`` with ``partitions[j] == i`` (``partitions``' shape is a prefix of
    ``data``'s, and its int32 values are in ``[0, num_partitions)``, as TensorFlow requires)."""
    what = "tf.dynamic_partition"
    x, parts = convert(data), _as_indices(partitions)
    if not jnp.issubdtype(parts.dtype, jnp.integer):
        raise _errors.GradkitTypeError(
            f"{what} takes int32 partitions, but got {np.dtype(parts.dtype).name}. Cast them: tf.cast(p, tf.int32)."
        )
    count = static_value(num_partitions)
    if count is None or count.ndim or not np.issubdtype(count.dtype, np.integer) or count < 1:
        raise _errors.GradkitValueError(f"{what}: num_partitions must be a positive int, but got {num_partitions!r}.")
    count = int(count)
    if tuple(x.shape[: parts.ndim]) != tuple(parts.shape):
        raise _errors.GradkitValueError(
            f"{what}: data's shape {tuple(x.shape)} must start with partitions' shape {tuple(parts.shape)}, "
            "as TensorFlow requires."
        )
    value = _known_ints(partitions, what, "partitions").reshape(-1)
    bad = (value < 0) | (value >= count)
    if bad.any():
        raise _errors.GradkitValueError(
            f"{what}: partition {int(value[bad][0])} is not in [0, {count}), as TensorFlow requires."
        )
    positions = [jnp.asarray(np.flatnonzero(value == i), jnp.int32) for i in range(count)]
    return list(call(_take_rows, x, positions, k=parts.ndim))


@jax.custom_jvp
def _stitched(flat, flat_indices, winner):
    """Row ``r`` of the result: ``flat[winner[r]]`` (the last row written there), or 0."""
    rows = jnp.take(flat, jnp.maximum(winner, 0), axis=0)
    written = (winner >= 0).reshape((-1,) + (1,) * (flat.ndim - 1))
    return jnp.where(written, rows, jnp.zeros((), flat.dtype))


@_stitched.defjvp
def _stitched_jvp(primals, tangents):
    # TensorFlow's gradient gathers the output's gradient at every index, also at one a later
    # duplicate overwrote: the transpose of a sum over the rows written to each index. As a
    # tangent rule that is that sum (forward mode matches TensorFlow's, derived from the same).
    flat, flat_indices, winner = primals
    return _stitched(flat, flat_indices, winner), jax.ops.segment_sum(tangents[0], flat_indices, winner.shape[0])


def _stitch(data, flat_indices, winner, rest):
    flat = jnp.concatenate([d.reshape((-1, *rest)) for d in data], axis=0)
    return _stitched(flat, flat_indices, winner)


def dynamic_stitch(indices, data, name=None):
    """``tf.dynamic_stitch``: ``merged[indices[m][i]] = data[m][i]``; the result has
    ``max(indices) + 1`` rows (an index nobody writes stays 0), and where an index repeats the
    later write wins (in the order of ``indices``, then within each), as on TensorFlow's CPU."""
    what = "tf.dynamic_stitch"
    if len(indices) != len(data) or not len(indices):
        raise _errors.GradkitValueError(
            f"{what} takes lists of indices and data of one nonzero length, but got {len(indices)} and {len(data)}."
        )
    idx = [_as_indices(i) for i in indices]
    if any(not jnp.issubdtype(i.dtype, jnp.integer) for i in idx):
        raise _errors.GradkitTypeError(f"{what} takes int32 indices, but got {[np.dtype(i.dtype).name for i in idx]}.")
    values = list(convert_like(*data, what=what))
    if len({np.dtype(v.dtype) for v in values}) > 1:
        raise _errors.GradkitTypeError(
            f"{what}: the data have dtypes {[np.dtype(v.dtype).name for v in values]}; TensorFlow requires one."
        )
    rest = None
    for m, (i, v) in enumerate(zip(idx, values)):
        if tuple(v.shape[: i.ndim]) != tuple(i.shape) or (rest is not None and tuple(v.shape[i.ndim :]) != rest):
            raise _errors.GradkitValueError(
                f"{what}: data[{m}] of shape {tuple(v.shape)} must be indices[{m}].shape {tuple(i.shape)} followed "
                f"by the same trailing shape as the other data{'' if rest is None else f' {rest}'}, as TensorFlow "
                "requires."
            )
        rest = tuple(v.shape[i.ndim :])
    flat_indices = np.concatenate([_known_ints(i, what, "indices").reshape(-1) for i in indices]).astype(np.int64)
    if (flat_indices < 0).any():
        raise _errors.GradkitValueError(f"{what}: index {int(flat_indices.min())} is negative; TensorFlow refuses it.")
    size = int(flat_indices.max()) + 1 if flat_indices.size else 0
    winner = np.full(size, -1, np.int64)
    np.maximum.at(winner, flat_indices, np.arange(flat_indices.size))  # the last write to each row wins
    flat_indices, winner = jnp.asarray(flat_indices, jnp.int32), jnp.asarray(winner, jnp.int32)
    return call(_stitch, values, flat_indices, winner, rest=rest)
