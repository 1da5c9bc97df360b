"""Distinct values and histograms: ``tf.unique``, ``tf.unique_with_counts``,
``tf.histogram_fixed_width``, ``tf.histogram_fixed_width_bins``.

``unique``'s result size depends on the values, so its input must be known (not a value traced
inside ``tf.function``). Indices, counts and histograms are integers: no gradient.

>>> import gradkit.tf as tf
>>> y, idx = tf.unique([1, 1, 2, 4, 4, 4, 7, 8, 8])
>>> y.numpy().tolist(), idx.numpy().tolist()
([1, 2, 4, 7, 8], [0, 0, 1, 2, 2, 2, 3, 4, 4])
>>> tf.histogram_fixed_width([-1.0, 0.0, 1.5, 2.0, 5.0, 15.0], [0.0, 5.0], nbins=5).numpy().tolist()
[2, 1, 1, 0, 2]
"""

from __future__ import annotations

import collections

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors
from gradkit._tape.tensor import Tensor

from ._convert import call, convert, convert_like, wrap
from ._shape_utils import static_value

Unique = collections.namedtuple("Unique", ["y", "idx"])
UniqueWithCounts = collections.namedtuple("UniqueWithCounts", ["y", "idx", "count"])


def _index_dtype(out_idx, what: str):
    dtype = np.dtype(out_idx)
    if dtype not in (np.dtype(np.int32), np.dtype(np.int64)):
        raise _errors.GradkitTypeError(f"{what} got out_idx={dtype.name}; TensorFlow takes tf.int32 or tf.int64.")
    return jax.dtypes.canonicalize_dtype(dtype)


@jax.custom_jvp
def _distinct(x, first, idx, counts):
    return jnp.take(x, first, axis=0)


@_distinct.defjvp
def _distinct_jvp(primals, tangents):
    # TensorFlow has no gradient for Unique (tape.gradient raises LookupError there). gradkit
    # gives y[k] the mean of the entries equal to it, as tf.math.unsorted_segment_max(x, idx)
    # (which computes the same y) differentiates ties: the gradient is split evenly among them.
    x, first, idx, counts = primals
    total = jax.ops.segment_sum(tangents[0], idx, first.shape[0])
    return _distinct(x, first, idx, counts), total / counts.astype(total.dtype)


def _groups(value: np.ndarray):
    """First positions of the distinct values (in order of appearance), each entry's group and
    the groups' sizes. Equal values group together (0.0 with -0.0); each NaN is a group of its
    own, as in TensorFlow's hash table, where NaN != NaN."""
    if value.dtype.kind in "fc":
        _, first, inverse = np.unique(value, return_index=True, return_inverse=True, equal_nan=False)
    else:
        _, first, inverse = np.unique(value, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    idx = rank[inverse.reshape(-1)]
    return first[order], idx, np.bincount(idx, minlength=order.size)


def _unique(values, out_idx, what):
    dtype = _index_dtype(out_idx, what)
    x = convert(values)
    if x.ndim != 1:
        raise _errors.InvalidArgumentValueError(
            f"{what} takes a vector, as TensorFlow does, but got shape {tuple(x.shape)}."
        )
    value = static_value(values)
    if value is None:
        raise _errors.GradkitTypeError(
            f"{what} inside tf.function needs a value known when tracing: the number of distinct values sets the "
            "result's shape, which a traced program cannot have. Call it outside the tf.function."
        )
    first, idx, counts = _groups(value)
    idx, counts = jnp.asarray(idx, dtype), jnp.asarray(counts, dtype)
    y = call(_distinct, x, jnp.asarray(first, jnp.int32), idx, counts)
    return y, Tensor.concrete(idx), Tensor.concrete(counts)


def unique(x, out_idx=np.int32, name=None):
    """``tf.unique``: the distinct values of the vector ``x`` in order of first appearance
    (``y``), and for each entry the position of its value in ``y`` (``idx``, of dtype ``out_idx``).

    TensorFlow has no gradient for it; gradkit's gradient of ``y`` splits each entry's among the
    entries equal to it (as ``tf.math.unsorted_segment_max(x, idx, len(y))``, which is ``y``).
    """
    y, idx, _ = _unique(x, out_idx, "tf.unique")
    return Unique(y, idx)


def unique_with_counts(x, out_idx=np.int32, name=None):
    """``tf.unique_with_counts``: ``tf.unique``'s ``y`` and ``idx``, and how often each value of
    ``y`` occurs (``count``, of dtype ``out_idx``, as in TensorFlow)."""
    return UniqueWithCounts(*_unique(x, out_idx, "tf.unique_with_counts"))


def _wide_float():
    return jax.dtypes.canonicalize_dtype(np.float64)


def _histogram_bins(values, value_range, nbins):
    # TensorFlow's CPU kernel, in double where jax has it (jax_enable_x64), else float32.
    wide = _wide_float()
    lo, hi = value_range[0], value_range[1]
    step = hi.astype(wide) / nbins - lo.astype(wide) / nbins
    scaled = (jnp.clip(values, lo, hi).astype(wide) - lo.astype(wide)) / step
    return jnp.minimum(scaled, nbins - 1).astype(jnp.int32)


def _histogram_in_double(values, value_range, nbins):
    # _histogram_bins in NumPy's float64, TensorFlow's precision, for values known now.
    lo, hi = value_range
    if nbins == 1:
        return np.full((1,), values.size)
    step = hi / nbins - lo / nbins
    scaled = (np.clip(values.astype(np.float64), lo, hi) - lo) / step
    return np.bincount(np.minimum(scaled, nbins - 1).astype(np.int64), minlength=nbins)


def _histogram(values, value_range, nbins, dtype):
    if nbins == 1:
        return jnp.full((1,), values.size, dtype)
    return jnp.bincount(_histogram_bins(values.reshape(-1), value_range, nbins), length=nbins).astype(dtype)


def _check_histogram(values, value_range, nbins, what):
    if value_range.shape != (2,):
        raise _errors.GradkitValueError(
            f"{what}: value_range must be a vector of 2 entries, but got shape {tuple(value_range.shape)}."
        )
    count = static_value(nbins)
    if count is None:
        raise _errors.GradkitValueError(
            f"{what} inside tf.function got nbins as a traced tensor: the number of bins is the result's shape, "
            "which a traced program must know. Pass nbins as a Python int (or compute the histogram outside "
            "tf.function)."
        )
    if count.ndim or not np.issubdtype(count.dtype, np.integer) or count <= 0:
        raise _errors.GradkitValueError(f"{what}: nbins must be a positive int, as TensorFlow requires; got {nbins!r}.")
    return int(count)


def histogram_fixed_width(values, value_range, nbins=100, dtype=np.int32, name=None):
    """``tf.histogram_fixed_width``: how many entries of ``values`` fall in each of ``nbins``
    equal bins of ``value_range = [lo, hi]`` (entries below ``lo`` count in the first bin,
    entries at or above ``hi`` in the last), as ``dtype`` (int32 or int64).

    The bin of each entry is computed as TensorFlow's CPU kernel does, in double precision: by
    NumPy where the values are known (eagerly), by jax in its x64 mode; inside ``tf.function``
    without x64 in float32, so there an entry within float32 rounding of a bin edge (0.7 of
    ``[0, 1]`` in 10 bins) may land in the neighbouring bin. NaN values and ``lo >= hi`` raise, as
    in TensorFlow.
    """
    what = "tf.histogram_fixed_width"
    out = np.dtype(dtype)
    if out not in (np.dtype(np.int32), np.dtype(np.int64)):
        raise _errors.GradkitTypeError(f"{what} got dtype={out.name}; TensorFlow takes tf.int32 or tf.int64.")
    x = convert(values)
    bounds = convert_like(x, value_range, what=what)[1]  # a list takes the values' dtype, as TensorFlow converts it
    if x.dtype != bounds.dtype:
        raise _errors.GradkitTypeError(
            f"{what}: value_range of dtype {np.dtype(bounds.dtype).name} for values of dtype "
            f"{np.dtype(x.dtype).name}; TensorFlow requires the values' dtype."
        )
    count = _check_histogram(x, bounds, nbins, what)
    lo_hi, value = static_value(bounds), static_value(x)  # as converted: [0.7] is float32 0.699999988
    if lo_hi is not None and not lo_hi[0] < lo_hi[1]:
        raise _errors.InvalidArgumentValueError(
            f"{what}: value_range {lo_hi.tolist()} must satisfy lo < hi, as in TensorFlow."
        )
    if value is not None and value.dtype.kind == "f" and np.isnan(value).any():
        raise _errors.InvalidArgumentValueError(f"{what}: the values contain NaN, which TensorFlow refuses.")
    if value is not None and lo_hi is not None:
        counts = _histogram_in_double(value.reshape(-1), lo_hi.astype(np.float64), count)
        return wrap(convert(counts.astype(jax.dtypes.canonicalize_dtype(out))))
    return call(_histogram, x, bounds, nbins=count, dtype=jax.dtypes.canonicalize_dtype(out))


def _bins(values, value_range, nbins):
    # TensorFlow's Python recipe, in the values' dtype: floor(nbins * (v - lo) / (hi - lo)),
    # clipped to [0, nbins - 1]; a NaN stays NaN through the clip and its cast to int32 gives
    # the lowest int32 on TensorFlow's CPU (XLA would give 0).
    scaled = (values - value_range[0]) / (value_range[1] - value_range[0])
    indices = jnp.clip(jnp.floor(jnp.asarray(nbins, values.dtype) * scaled), 0, nbins - 1)
    return jnp.where(jnp.isnan(indices), jnp.iinfo(jnp.int32).min, indices.astype(jnp.int32))


def histogram_fixed_width_bins(values, value_range, nbins=100, dtype=np.int32, name=None):
    """``tf.histogram_fixed_width_bins``: for each entry of ``values``, its bin among ``nbins``
    equal bins of ``value_range`` (clipped to the first and last bin), of ``values``' shape.

    As in TensorFlow, the values are floats, ``value_range`` has their dtype, the result is int32
    whatever ``dtype`` says (TensorFlow ignores it), and ``lo >= hi`` is not checked.
    """
    what = "tf.histogram_fixed_width_bins"
    x, bounds = convert(values), convert(value_range)
    if not jnp.issubdtype(x.dtype, jnp.floating) or x.dtype != bounds.dtype:
        raise _errors.GradkitTypeError(
            f"{what} takes float values and a value_range of their dtype, as TensorFlow does, but got "
            f"{np.dtype(x.dtype).name} and {np.dtype(bounds.dtype).name}."
        )
    count = _check_histogram(x, bounds, nbins, what)
    return call(_bins, x, bounds, nbins=count)
