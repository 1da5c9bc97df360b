"""``tf.sparse``'s segment reductions: ``segment_sum``, ``segment_mean``, ``segment_sqrt_n``.

Each reduces the rows ``data[indices]`` by ``segment_ids`` (sorted, one per index), as
``tf.math.segment_*`` of ``tf.gather(data, indices)``; with ``num_segments`` the result has that
many rows (empty segments are 0). gradkit.tf has no ``SparseTensor``, so these dense-in,
dense-out ops are all of ``tf.sparse`` it has; ``sparse_gradient=True`` (TensorFlow's
IndexedSlices gradient) gives the same gradient, dense.

>>> import gradkit.tf as tf
>>> data = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
>>> tf.sparse.segment_sum(data, [0, 2, 1], [0, 0, 1]).numpy().tolist()
[[6.0, 8.0], [3.0, 4.0]]
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from . import _segment
from ._array import gather
from ._convert import convert

__all__ = ["segment_sum", "segment_mean", "segment_sqrt_n"]


def _rows(data, indices, segment_ids, what):
    indices, ids = convert(indices), convert(segment_ids)
    if not jnp.issubdtype(indices.dtype, jnp.integer) or indices.ndim != 1 or tuple(ids.shape) != tuple(indices.shape):
        raise _errors.InvalidArgumentValueError(
            f"{what} got indices of shape {tuple(indices.shape)} ({np.dtype(indices.dtype).name}) and segment_ids of "
            f"shape {tuple(ids.shape)}: give one integer index per segment id, both vectors of the same length."
        )
    return gather(data, indices), ids


def _reduce(kind, data, indices, segment_ids, num_segments, name):
    what = f"tf.sparse.segment_{kind}"
    if kind != "sum" and not jnp.issubdtype(convert(data).dtype, jnp.inexact):
        raise _errors.InvalidArgumentTypeError(
            f"{what} takes float data, as TensorFlow's kernel does (it divides), but got "
            f"{np.dtype(convert(data).dtype).name}. Cast it first: tf.cast(data, tf.float32)."
        )
    rows, ids = _rows(data, indices, segment_ids, what)
    if num_segments is None:
        return _segment._sorted(kind, rows, ids, what)
    return _segment._unsorted(kind, rows, ids, num_segments, what)


def segment_sum(data, indices, segment_ids, num_segments=None, name=None, sparse_gradient=False):
    """``tf.sparse.segment_sum``: the sum of ``data[indices]`` per segment."""
    return _reduce("sum", data, indices, segment_ids, num_segments, name)


def segment_mean(data, indices, segment_ids, num_segments=None, name=None, sparse_gradient=False):
    """``tf.sparse.segment_mean``: the mean of ``data[indices]`` per segment."""
    return _reduce("mean", data, indices, segment_ids, num_segments, name)


def segment_sqrt_n(data, indices, segment_ids, num_segments=None, name=None, sparse_gradient=False):
    """``tf.sparse.segment_sqrt_n``: the sum of ``data[indices]`` per segment over the square
    root of its number of rows."""
    return _reduce("sqrt_n", data, indices, segment_ids, num_segments, name)
