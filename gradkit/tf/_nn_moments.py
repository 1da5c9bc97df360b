"""``tf.nn``'s moment helpers: ``sufficient_statistics``, ``normalize_moments``,
``weighted_moments`` and ``batch_norm_with_global_normalization``.

Each is TensorFlow's composition of ops, step for step, on gradkit.tf's recorded ops, so the
values, dtypes and gradients are TensorFlow's (``tf.nn.moments`` itself is in ``_nn``).

>>> import gradkit.tf as tf
>>> counts, mean_ss, var_ss, _ = tf.nn.sufficient_statistics(tf.constant([[1.0, 2.0], [3.0, 4.0]]), [0])
>>> [t.numpy().tolist() for t in tf.nn.normalize_moments(counts, mean_ss, var_ss, None)]
[[2.0, 3.0], [1.0, 1.0]]
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from . import _array, _shape_args
from ._convert import TENSOR_LIKE, axis_arg, call, convert
from ._math import _squared_difference


def _axes(axes, what, allow_int=False):
    if isinstance(axes, (int, np.integer)) and not allow_int:
        raise _errors.GradkitTypeError(
            f"{what}: axes={axes!r}; TensorFlow takes a list of axes here, e.g. axes=[{axes}]."
        )
    axes = axis_arg(axes)
    return list(axes) if isinstance(axes, tuple) else [axes]


def _like(value, dtype, name, what):
    """``value`` as an operand of a ``dtype`` computation: a Python or NumPy value converted to
    it, a tensor checked against it (TensorFlow's ops refuse mixed dtypes)."""
    if not isinstance(value, TENSOR_LIKE):
        return convert(np.asarray(value), dtype)
    value = convert(value)
    if np.dtype(value.dtype) != np.dtype(dtype):
        raise _errors.GradkitTypeError(
            f"{what}: {name} is {np.dtype(value.dtype).name} but the data is {np.dtype(dtype).name}; TensorFlow "
            f"takes one dtype for both. Cast it: tf.cast({name}, {np.dtype(dtype).name})."
        )
    return value


def _aligned(*arrays):
    """``arrays`` (None kept) with leading axes of size 1 up to a common rank: TensorFlow's broadcasting."""
    rank = max(a.ndim for a in arrays if a is not None)
    return [None if a is None else a.reshape((1,) * (rank - a.ndim) + a.shape) for a in arrays]


def _sufficient(x, shift, axes, keepdims):
    if shift is None:
        m_ss, v_ss = x, jnp.square(x)
    else:
        x, shift = _aligned(x, shift)
        m_ss, v_ss = x - shift, _squared_difference(x, shift)  # TensorFlow's: conj(d) d for complex
    return jnp.sum(m_ss, axis=axes, keepdims=keepdims), jnp.sum(v_ss, axis=axes, keepdims=keepdims)


def sufficient_statistics(x, axes, shift=None, keepdims=False, name=None):
    """``tf.nn.sufficient_statistics``: ``(count, sum(x - shift), sum((x - shift) ** 2), shift)`` over
    ``axes`` (the sums of ``x`` and ``x ** 2`` without a shift); ``count`` has ``x``'s dtype."""
    what = "tf.nn.sufficient_statistics"
    x = convert(x)
    axes = list(dict.fromkeys(_axes(axes, what)))
    rank = len(x.shape)
    if any(not -rank <= a < rank for a in axes) or len({a % rank for a in axes}) != len(axes):
        raise _errors.GradkitValueError(
            f"{what}: axes={axes} for an input of rank {rank}; TensorFlow takes distinct axes in range "
            "(-1 and rank - 1 are the same axis)."
        )
    if shift is not None:
        shift = _like(shift, x.dtype, "shift", what)
    reduce = tuple(sorted(a % rank for a in axes))
    m_ss, v_ss = call(_sufficient, x, shift, axes=reduce, keepdims=bool(keepdims))
    count = int(np.prod([x.shape[a] for a in reduce]))
    return _array.constant(count, dtype=x.dtype), m_ss, v_ss, shift


def _normalize(counts, mean_ss, variance_ss, shift):
    counts, mean_ss, variance_ss, shift = _aligned(counts, mean_ss, variance_ss, shift)
    divisor = 1 / counts
    shifted_mean = mean_ss * divisor
    mean = shifted_mean if shift is None else shifted_mean + shift
    return mean, variance_ss * divisor - jnp.square(shifted_mean)


def normalize_moments(counts, mean_ss, variance_ss, shift, name=None):
    """``tf.nn.normalize_moments``: ``(mean, variance)`` from ``sufficient_statistics``' sums."""
    what = "tf.nn.normalize_moments"
    mean_ss = convert(mean_ss)
    dtype = mean_ss.dtype
    counts = _like(counts, dtype, "counts", what)
    variance_ss = _like(variance_ss, dtype, "variance_ss", what)
    shift = None if shift is None else _like(shift, dtype, "shift", what)
    return tuple(call(_normalize, counts, mean_ss, variance_ss, shift))


def _no_nan(x, y):
    # TensorFlow's div_no_nan: 0 where y == 0, with zero gradients there.
    zero = y == 0
    return jnp.where(zero, jnp.zeros_like(x / jnp.ones_like(y)), x / jnp.where(zero, jnp.ones_like(y), y))


def _weighted_moments(x, weights, axes, keepdims):
    dtype = x.dtype
    if dtype == jnp.float16:  # TensorFlow computes float16 in float32
        x = x.astype(jnp.float32)
    x, weights = _aligned(x, weights.astype(x.dtype))
    weighted_input_sum = jnp.sum(weights * x, axis=axes, keepdims=True)
    sum_of_weights = jnp.sum(weights + jnp.zeros_like(x), axis=axes, keepdims=True)
    mean = _no_nan(weighted_input_sum, sum_of_weights)
    variance = _no_nan(jnp.sum(weights * _squared_difference(x, mean), axis=axes, keepdims=True), sum_of_weights)
    if not keepdims:
        mean, variance = jnp.squeeze(mean, axes), jnp.squeeze(variance, axes)
    return mean.astype(dtype), variance.astype(dtype)


def weighted_moments(x, axes, frequency_weights, keepdims=False, name=None):
    """``tf.nn.weighted_moments``: the mean and variance of ``x`` over ``axes`` with each entry
    counted ``frequency_weights`` times (weights broadcast to ``x``; 0 where they sum to 0)."""
    what = "tf.nn.weighted_moments"
    x, weights = convert(x), convert(frequency_weights)
    rank = max(len(x.shape), len(weights.shape))
    axes = tuple(sorted({a % rank for a in _axes(axes, what, allow_int=True)}))
    _shape_args.check_broadcasts(weights.shape, x.shape, what, "frequency_weights", "x")
    return tuple(call(_weighted_moments, x, weights, axes=axes, keepdims=bool(keepdims)))


def batch_norm_with_global_normalization(
    input, mean, variance, beta, gamma, variance_epsilon, scale_after_normalization, name=None
):  # noqa: A002
    """``tf.nn.batch_norm_with_global_normalization``: ``batch_normalization`` with offset ``beta``
    and, when ``scale_after_normalization``, scale ``gamma``."""
    from ._nn import batch_normalization

    return batch_normalization(
        input, mean, variance, beta, gamma if scale_after_normalization else None, variance_epsilon
    )
