"""Segment reductions: ``tf.math.segment_sum / _mean / _max`` and their ``unsorted_`` forms.

Row ``i`` of ``data`` (or, for the unsorted forms, the entry ``segment_ids`` has at ``i``,
whose shape is a prefix of ``data``'s) goes to segment ``segment_ids[i]``. An empty segment
is 0, except for ``unsorted_segment_max``, where it is the dtype's lowest value, as in
TensorFlow. The maximum's gradient is split evenly among the entries that tie for it, as
TensorFlow's gradient does. A negative id drops its row (unsorted forms); an id past the
segments raises. The sorted forms take ``max(segment_ids) + 1`` segments, so their ids must
be known: inside ``tf.function`` use the unsorted form with ``num_segments``.

>>> import gradkit.tf as tf
>>> tf.math.segment_sum(tf.constant([1.0, 2.0, 3.0]), [0, 0, 2]).numpy().tolist()
[3.0, 0.0, 3.0]
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from ._convert import call, convert, known_value


def _rows(data, ids):
    rest = data.shape[ids.ndim :]
    return data.reshape((-1, *rest)), ids.reshape(-1)


def _count(ids, num, dtype, rest_ndim):
    count = jax.ops.segment_sum(jnp.ones(ids.shape, dtype), ids, num)
    return count.reshape(count.shape + (1,) * rest_ndim)


def _segment(data, ids, num, kind, empty):
    data, ids = _rows(data, ids)
    ids = jnp.where(ids < 0, num, ids)  # dropped: jax drops ids past the end
    rest_ndim = data.ndim - 1
    if kind == "sum":
        return jax.ops.segment_sum(data, ids, num)
    count = _count(ids, num, data.dtype, rest_ndim)
    if kind == "mean":
        total = jax.ops.segment_sum(data, ids, num)
        if jnp.issubdtype(data.dtype, jnp.integer):
            return jax.lax.div(total, jnp.maximum(count, 1))
        return total / jnp.maximum(count, 1)
    # The maximum as TensorFlow differentiates it: a sum over the entries equal to it, each
    # weighted by 1 / (how many tie), so the gradient splits evenly among them.
    best = jax.lax.stop_gradient(jax.ops.segment_max(data, ids, num))
    safe = jnp.minimum(ids, num - 1)
    chosen = (data == best[safe]) & (ids < num)[(...,) + (None,) * rest_ndim]
    ties = jax.ops.segment_sum(chosen.astype(data.dtype), ids, num)
    weight = jnp.where(chosen, 1 / jnp.maximum(ties[safe], 1), 0).astype(data.dtype)
    out = jax.ops.segment_sum(data * weight, ids, num)
    if empty == "lowest":
        lowest = jnp.finfo(data.dtype).min if jnp.issubdtype(data.dtype, jnp.inexact) else jnp.iinfo(data.dtype).min
        out = jnp.where(count > 0, out, jnp.asarray(lowest, data.dtype))
    return out


def _ids(segment_ids, what):
    ids = convert(segment_ids)
    if not jnp.issubdtype(ids.dtype, jnp.integer):
        raise _errors.GradkitTypeError(
            f"{what} takes integer segment_ids, but got dtype {np.dtype(ids.dtype).name}. "
            "Cast them: tf.cast(segment_ids, tf.int32)."
        )
    return ids


def _sorted(kind, data, segment_ids, what):
    x, ids = convert(data), _ids(segment_ids, what)
    if ids.ndim != 1 or not x.ndim or ids.shape[0] != x.shape[0]:
        raise _errors.GradkitValueError(
            f"{what}: segment_ids of shape {tuple(ids.shape)} for data of shape {tuple(x.shape)}; TensorFlow "
            "requires a vector with one id per row of data (use tf.math.unsorted_segment_* for more axes)."
        )
    value = known_value(ids)
    if value is None:
        raise _errors.GradkitTypeError(
            f"{what} inside tf.function needs segment_ids known when tracing: the number of segments, "
            f"max(segment_ids) + 1, sets the result's shape. Use tf.math.unsorted_{what.split('.')[-1]}(data, "
            "segment_ids, num_segments) instead."
        )
    if value.size and ((value < 0).any() or (np.diff(value) < 0).any()):
        raise _errors.GradkitValueError(
            f"{what}: segment_ids {value.tolist()} must be non-negative and sorted, as TensorFlow requires; "
            f"use tf.math.unsorted_{what.split('.')[-1]}(data, segment_ids, num_segments) for ids in any order."
        )
    num = int(value.max()) + 1 if value.size else 0
    return call(_segment, x, ids, num=num, kind=kind, empty="zero")


def _unsorted(kind, data, segment_ids, num_segments, what):
    x, ids = convert(data), _ids(segment_ids, what)
    if tuple(x.shape[: ids.ndim]) != tuple(ids.shape):
        raise _errors.GradkitValueError(
            f"{what}: segment_ids of shape {tuple(ids.shape)} must be a prefix of data's shape {tuple(x.shape)}, "
            "as TensorFlow requires."
        )
    num_value = known_value(num_segments)
    if num_value is None or num_value.ndim:
        raise _errors.GradkitValueError(
            f"{what}: num_segments must be a scalar known when tracing (it sets the result's shape), but got "
            f"{num_segments!r}."
        )
    num = int(num_value)
    value = known_value(ids)
    if value is not None and value.size and value.max() >= num:
        raise _errors.GradkitValueError(
            f"{what}: segment id {int(value.max())} is not below num_segments={num}, as TensorFlow requires."
        )
    return call(_segment, x, ids, num=num, kind=kind, empty="lowest" if kind == "max" else "zero")


def segment_sum(data, segment_ids, name=None):
    return _sorted("sum", data, segment_ids, "tf.math.segment_sum")


def segment_mean(data, segment_ids, name=None):
    return _sorted("mean", data, segment_ids, "tf.math.segment_mean")


def segment_max(data, segment_ids, name=None):
    return _sorted("max", data, segment_ids, "tf.math.segment_max")


def unsorted_segment_sum(data, segment_ids, num_segments, name=None):
    return _unsorted("sum", data, segment_ids, num_segments, "tf.math.unsorted_segment_sum")


def unsorted_segment_mean(data, segment_ids, num_segments, name=None):
    return _unsorted("mean", data, segment_ids, num_segments, "tf.math.unsorted_segment_mean")


def unsorted_segment_max(data, segment_ids, num_segments, name=None):
    return _unsorted("max", data, segment_ids, num_segments, "tf.math.unsorted_segment_max")
