"""Segment reductions: ``tf.math.segment_sum / _mean / _max / _min / _prod`` and their
``unsorted_`` forms, and ``unsorted_segment_sqrt_n``.

Row ``i`` of ``data`` (or, for the unsorted forms, the entry ``segment_ids`` has at ``i``,
whose shape is a prefix of ``data``'s) goes to segment ``segment_ids[i]``. An empty segment
is 0 (1 for the products), except for ``unsorted_segment_max`` and ``unsorted_segment_min``,
where it is the dtype's lowest and highest value, as in TensorFlow. The gradient of a maximum
or minimum is split evenly among the entries that tie for it, and that of a product is
TensorFlow's (exact where a segment holds zeros: the product of the others for a single zero,
0 for two or more), as TensorFlow's gradients are. A negative id drops its row (unsorted
forms); an id past the segments raises. The sorted forms take ``max(segment_ids) + 1``
segments, so their ids must be known: inside ``tf.function`` use the unsorted form with
``num_segments``.

>>> import gradkit.tf as tf
>>> tf.math.segment_sum(tf.constant([1.0, 2.0, 3.0]), [0, 0, 2]).numpy().tolist()
[3.0, 0.0, 3.0]
>>> tf.math.unsorted_segment_prod(tf.constant([2.0, 3.0, 4.0]), [1, 1, 0], 3).numpy().tolist()
[4.0, 6.0, 1.0]
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from ._convert import call, convert, known_value, scalar_int


def _rows(data, ids):
    rest = data.shape[ids.ndim :]
    return data.reshape((-1, *rest)), ids.reshape(-1)


def _count(ids, num, dtype, rest_ndim):
    count = jax.ops.segment_sum(jnp.ones(ids.shape, dtype), ids, num)
    return count.reshape(count.shape + (1,) * rest_ndim)


def _gathered(values, ids, num, rest_ndim):
    """``values[ids]`` per row, 0 for the rows that were dropped (id ``num``)."""
    safe = jnp.minimum(ids, num - 1)
    kept = (ids < num)[(...,) + (None,) * rest_ndim]
    return jnp.where(kept, values[safe], jnp.zeros_like(values[safe]))


@functools.partial(jax.custom_vjp, nondiff_argnums=(2, 3))
def _segment_prod(data, ids, num, unsorted):
    return jax.ops.segment_prod(data, ids, num)


def _segment_prod_fwd(data, ids, num, unsorted):
    out = _segment_prod(data, ids, num, unsorted)  # the op, not jax's: a second derivative stays TensorFlow's
    return out, (data, ids, out)


def _segment_prod_bwd(num, unsorted, residuals, upstream):
    # TensorFlow's SegmentProdGrad: the product divided by each entry, except in segments with
    # zeros: there a lone zero gets the product of the others and every entry else gets 0, and
    # everything gets 0 in a segment with two zeros or more. (jax has no gradient for
    # segment_prod's data.)
    data, ids, out = residuals
    rest_ndim = data.ndim - 1
    is_zero = data == 0
    zeros = jax.ops.segment_sum(is_zero.astype(jnp.int32), ids, num)
    upstream = jnp.where(zeros > 1, jnp.zeros_like(upstream), upstream)
    non_zero = jnp.where(is_zero, jnp.ones_like(data), data)
    non_zero_prod = _segment_prod(non_zero, ids, num, unsorted)
    # TensorFlow divides by the entries themselves in the unsorted form (so a second derivative
    # there is NaN at a zero, as in TensorFlow), by the non-zero entries in the sorted form.
    divisor = data if unsorted else non_zero
    partial = jnp.where(
        is_zero, _gathered(non_zero_prod, ids, num, rest_ndim), _gathered(out, ids, num, rest_ndim) / divisor
    )
    return _gathered(upstream, ids, num, rest_ndim) * partial, None


_segment_prod.defvjp(_segment_prod_fwd, _segment_prod_bwd)


def _segment(data, ids, num, kind, unsorted):
    data, ids = _rows(data, ids)
    ids = jnp.where(ids < 0, num, ids)  # dropped: jax drops ids past the end
    rest_ndim = data.ndim - 1
    if kind == "sum":
        return jax.ops.segment_sum(data, ids, num)
    if kind == "prod":
        return _segment_prod(data, ids, num, unsorted) if num else jax.ops.segment_prod(data, ids, num)
    count = _count(ids, num, data.dtype, rest_ndim)
    if kind in ("mean", "sqrt_n"):
        total = jax.ops.segment_sum(data, ids, num)
        if kind == "sqrt_n":
            return total / jnp.sqrt(jnp.maximum(count, 1))  # TensorFlow's: the count in data's dtype
        if jnp.issubdtype(data.dtype, jnp.integer):
            if unsorted:  # TensorFlow divides the sum by the count with `/` (truediv): float64 means
                # for 32- and 64-bit integers, float32 for narrower ones
                wide = np.dtype(data.dtype).itemsize >= 4
                real = jax.dtypes.canonicalize_dtype(np.float64 if wide else np.float32)
                return total.astype(real) / jnp.maximum(count, 1).astype(real)
            return jax.lax.div(total, jnp.maximum(count, 1))  # its SegmentMean kernel truncates
        return total / jnp.maximum(count, 1)
    out = _extreme(data, ids, num, kind)
    if unsorted:
        # TensorFlow's kernel starts each segment at the dtype's lowest (max) or highest (min) value:
        # an empty segment is that value, and so is one of -inf (max) or +inf (min) entries only, whose
        # entries then get no gradient (none equals the result).
        info = jnp.finfo(data.dtype) if jnp.issubdtype(data.dtype, jnp.inexact) else jnp.iinfo(data.dtype)
        start = jnp.asarray(info.min if kind == "max" else info.max, data.dtype)
        beyond = out < start if kind == "max" else out > start
        return jnp.where((count > 0) & ~beyond, out, start)
    return jnp.where(count > 0, out, jnp.zeros_like(out))


@functools.partial(jax.custom_jvp, nondiff_argnums=(2, 3))
def _extreme(data, ids, num, kind):
    """Each segment's maximum (minimum), its value exactly the entry's."""
    reduce = jax.ops.segment_max if kind == "max" else jax.ops.segment_min
    return reduce(data, ids, num)


@_extreme.defjvp
def _extreme_jvp(num, kind, primals, tangents):
    # TensorFlow's derivative: the entries equal to the maximum share it evenly (1 / how many
    # tie); the others are left out by a select (TensorFlow's where(is_selected, grads, 0)), so
    # an -inf among them is no NaN (-inf * 0). A segment whose maximum is NaN has no entry
    # equal to it: its derivative is zero.
    data, ids = primals
    d_data = tangents[0]
    best = _extreme(data, ids, num, kind)
    rest_ndim = data.ndim - 1
    safe = jnp.minimum(ids, num - 1)
    chosen = (data == best[safe]) & (ids < num)[(...,) + (None,) * rest_ndim]
    ties = jax.ops.segment_sum(chosen.astype(data.dtype), ids, num)
    weight = jnp.where(chosen, 1 / jnp.maximum(ties[safe], 1), 0).astype(data.dtype)
    return best, jax.ops.segment_sum(jnp.where(chosen, d_data * weight, jnp.zeros_like(d_data)), ids, num)


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
        raise _errors.InvalidArgumentValueError(
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
        raise _errors.InvalidArgumentValueError(
            f"{what}: segment_ids {value.tolist()} must be non-negative and sorted, as TensorFlow requires; "
            f"use tf.math.unsorted_{what.split('.')[-1]}(data, segment_ids, num_segments) for ids in any order."
        )
    num = int(value.max()) + 1 if value.size else 0
    return call(_segment, x, ids, num=num, kind=kind, unsorted=False)


def _unsorted(kind, data, segment_ids, num_segments, what):
    x, ids = convert(data), _ids(segment_ids, what)
    if tuple(x.shape[: ids.ndim]) != tuple(ids.shape):
        raise _errors.InvalidArgumentValueError(
            f"{what}: segment_ids of shape {tuple(ids.shape)} must be a prefix of data's shape {tuple(x.shape)}, "
            "as TensorFlow requires."
        )
    num_value = known_value(num_segments)
    if num_value is None or num_value.ndim:
        raise _errors.GradkitValueError(
            f"{what}: num_segments must be a scalar known when tracing (it sets the result's shape), but got "
            f"{num_segments!r}."
        )
    num = scalar_int(num_value, f"{what}'s num_segments")
    value = known_value(ids)
    if value is not None and value.size and value.max() >= num:
        raise _errors.InvalidArgumentValueError(
            f"{what}: segment id {int(value.max())} is not below num_segments={num}, as TensorFlow requires."
        )
    if kind == "sqrt_n" and not jnp.issubdtype(x.dtype, jnp.inexact):
        raise _errors.InvalidArgumentTypeError(
            f"{what} takes float or complex data, as TensorFlow does (it divides by a square root), but got "
            f"{np.dtype(x.dtype).name}. Cast it: tf.cast(data, tf.float32)."
        )
    return call(_segment, x, ids, num=num, kind=kind, unsorted=True)


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


def segment_min(data, segment_ids, name=None):
    return _sorted("min", data, segment_ids, "tf.math.segment_min")


def segment_prod(data, segment_ids, name=None):
    return _sorted("prod", data, segment_ids, "tf.math.segment_prod")


def unsorted_segment_min(data, segment_ids, num_segments, name=None):
    return _unsorted("min", data, segment_ids, num_segments, "tf.math.unsorted_segment_min")


def unsorted_segment_prod(data, segment_ids, num_segments, name=None):
    return _unsorted("prod", data, segment_ids, num_segments, "tf.math.unsorted_segment_prod")


def unsorted_segment_sqrt_n(data, segment_ids, num_segments, name=None):
    """``tf.math.unsorted_segment_sqrt_n``: each segment's sum divided by the square root of its
    number of entries (0 for an empty segment)."""
    return _unsorted("sqrt_n", data, segment_ids, num_segments, "tf.math.unsorted_segment_sqrt_n")
