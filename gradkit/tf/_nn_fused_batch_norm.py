"""``tf.compat.v1.nn.fused_batch_norm``: batch normalization in one op, TensorFlow's
``FusedBatchNormV3``.

TensorFlow 2.21 keeps this function under ``tf.compat.v1.nn`` only (``tf.nn`` has no
``fused_batch_norm``), so gradkit.tf does too. It returns ``(y, running_mean, running_var)``:

* ``is_training=True``: ``x`` is normalized by the mean and the (biased) variance of the batch
  over every axis but the channel one; ``running_mean`` is that batch mean and ``running_var``
  its Bessel-corrected variance (``n / (n - 1)`` times it, ``n`` the values per channel), each
  mixed as ``(1 - exponential_avg_factor) * mean + exponential_avg_factor * batch_value`` when
  the factor is not 1.
* ``is_training=False``: ``x`` is normalized by the given ``mean`` and ``variance``, which come
  back unchanged.

``x`` is float16, bfloat16 or float32 (computed in float32, ``y`` in ``x``'s dtype); ``scale``,
``offset``, ``mean`` and ``variance`` are float32 vectors with one entry per channel. Gradients
are TensorFlow's: ``y``'s flow to ``x``, ``scale`` and ``offset``; the running statistics pass
none on, and ``mean`` and ``variance`` get None.

>>> import gradkit.tf as tf
>>> x = tf.reshape(tf.range(8.0), [2, 2, 1, 2])
>>> y, mean, var = tf.compat.v1.nn.fused_batch_norm(x, [1.0, 1.0], [0.0, 0.0])
>>> mean.numpy().tolist(), [round(float(v), 4) for v in var.numpy()]  # var: 5.0 (biased) * 4 / 3
([3.0, 4.0], [6.6667, 6.6667])
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from ._convert import call, convert
from ._custom import stop_gradient

_FORMATS = {"NHWC": (4, -1), "NCHW": (4, 1), "NDHWC": (5, -1), "NCDHW": (5, 1)}
_X_DTYPES = (np.float16, jnp.bfloat16, np.float32)
_WHAT = "tf.compat.v1.nn.fused_batch_norm"


def _fused_batch_norm(x, scale, offset, mean, variance, *, epsilon, factor, training, channel_axis):
    axes = tuple(a for a in range(x.ndim) if a != channel_axis)
    shape = [1] * x.ndim
    shape[channel_axis] = x.shape[channel_axis]

    def per_channel(v):
        return v.reshape(shape)

    xf = x.astype(jnp.float32)
    if training:
        batch_mean = jnp.mean(xf, axis=axes)
        batch_var = jnp.mean(jnp.square(xf - per_channel(batch_mean)), axis=axes)
        centre, spread = batch_mean, batch_var
    else:
        centre, spread = mean, variance
    inv = jax.lax.rsqrt(spread + jnp.float32(epsilon)) * scale
    y = (xf - per_channel(centre)) * per_channel(inv) + per_channel(offset)
    if not training:
        return y.astype(x.dtype), mean, variance
    # The running statistics pass no gradient on, as TensorFlow's FusedBatchNormV3 gradient.
    count = math.prod(x.shape[a] for a in axes)
    batch_mean = jax.lax.stop_gradient(batch_mean)
    batch_var = jax.lax.stop_gradient(batch_var) * jnp.float32(count / max(count - 1, 1))
    if factor != 1.0:
        f = jnp.float32(factor)
        batch_mean = (1 - f) * mean + f * batch_mean
        batch_var = (1 - f) * variance + f * batch_var
    return y.astype(x.dtype), batch_mean, batch_var


def _vector(value, name, channels, x_shape):
    v = convert(value)
    if np.dtype(v.dtype) != np.float32:
        raise _errors.InvalidArgumentTypeError(
            f"{_WHAT}: {name} is {np.dtype(v.dtype).name}, but gradkit.tf takes float32 scale, offset, mean and "
            f"variance, whatever x's dtype (TensorFlow's CPU kernel: float32, or bfloat16 for all four). Cast it: "
            f"tf.cast({name}, tf.float32)."
        )
    if v.ndim != 1 or (channels is not None and v.shape[0] != channels):
        raise _errors.InvalidArgumentValueError(
            f"{_WHAT}: {name} of shape {tuple(v.shape)} for x of shape {tuple(x_shape)}; TensorFlow requires a "
            f"vector with one entry per channel ({channels} here)."
        )
    return v


def fused_batch_norm(
    x,
    scale,
    offset,
    mean=None,
    variance=None,
    epsilon=0.001,
    data_format="NHWC",
    is_training=True,
    name=None,
    exponential_avg_factor=1.0,
):
    """``tf.compat.v1.nn.fused_batch_norm``: ``(y, running_mean, running_var)``; see the module
    docstring for what each holds in training and in inference."""
    factor = float(exponential_avg_factor)
    training = bool(is_training)
    if (not training or factor != 1.0) and (mean is None or variance is None):
        raise _errors.GradkitValueError(
            f"{_WHAT}: both mean and variance must be 1-D tensors when is_training is False or "
            f"exponential_avg_factor != 1.0, as TensorFlow requires, but got mean={mean!r} and "
            f"variance={variance!r}. Pass the running statistics, e.g. mean=moving_mean, variance=moving_var."
        )
    if data_format not in _FORMATS:
        raise _errors.InvalidArgumentValueError(
            f"{_WHAT}: data_format={data_format!r} is not one TensorFlow takes; use 'NHWC' or 'NCHW' for a 4-D x, "
            "'NDHWC' or 'NCDHW' for a 5-D one."
        )
    rank, channel_axis = _FORMATS[data_format]
    x = convert(x)
    if np.dtype(x.dtype) not in [np.dtype(d) for d in _X_DTYPES]:
        raise _errors.InvalidArgumentTypeError(
            f"{_WHAT}: x is {np.dtype(x.dtype).name}, but TensorFlow's FusedBatchNormV3 takes float16, bfloat16 "
            "or float32. Cast it first: tf.cast(x, tf.float32); for float64 use tf.nn.moments and "
            "tf.nn.batch_normalization."
        )
    if x.ndim != rank:
        raise _errors.InvalidArgumentValueError(
            f"{_WHAT}: x of shape {tuple(x.shape)} with data_format={data_format!r}; TensorFlow requires a "
            f"{rank}-D input there (a 4-D x takes 'NHWC' or 'NCHW', a 5-D one 'NDHWC' or 'NCDHW')."
        )
    channels = x.shape[channel_axis]
    scale = _vector(scale, "scale", channels, x.shape)
    offset = _vector(offset, "offset", channels, x.shape)
    # Training with factor 1 reads neither (TensorFlow takes any vector, or none, there).
    used = not training or factor != 1.0
    stats = []
    for value, label in ((mean, "mean"), (variance, "variance")):
        if value is None:
            stats.append(convert(np.zeros([channels], np.float32)))
        else:
            stats.append(stop_gradient(_vector(value, label, channels if used else None, x.shape)))
    if not used:
        stats = [convert(np.zeros([channels], np.float32))] * 2
    return tuple(
        call(
            _fused_batch_norm,
            x,
            scale,
            offset,
            *stats,
            epsilon=float(epsilon),
            factor=factor,
            training=training,
            channel_axis=channel_axis % rank,
        )
    )
