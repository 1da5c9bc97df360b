"""``tf.nn.local_response_normalization`` (alias ``tf.nn.lrn``).

Each entry of a 4-D input is divided by ``(bias + alpha * sqr_sum) ** beta``, where ``sqr_sum``
sums the squares of the entries within ``depth_radius`` channels of it (the last axis), as
TensorFlow's ``LRN``; its gradient is the exact one, as TensorFlow's ``LRNGrad``.

>>> import gradkit.tf as tf
>>> y = tf.nn.lrn(tf.ones([1, 1, 1, 3]), depth_radius=1, bias=1.0, alpha=1.0, beta=1.0)
>>> [round(float(v), 4) for v in y.numpy().ravel()]  # 1 / (1 + 2), 1 / (1 + 3), 1 / (1 + 2)
[0.3333, 0.25, 0.3333]
"""

from __future__ import annotations

import jax
import numpy as np

from gradkit import _errors

from ._convert import call, convert

_DTYPES = ("float16", "bfloat16", "float32")


def _lrn(x, radius, bias, alpha, beta):
    zero = np.zeros((), x.dtype)  # concrete, so jax takes its differentiable window sum
    window = (1,) * (x.ndim - 1) + (2 * radius + 1,)
    pads = ((0, 0),) * (x.ndim - 1) + ((radius, radius),)
    sqr_sum = jax.lax.reduce_window(x * x, zero, jax.lax.add, window, (1,) * x.ndim, pads)
    return x * (bias + alpha * sqr_sum) ** -beta


def local_response_normalization(input, depth_radius=5, bias=1, alpha=1, beta=0.5, name=None):  # noqa: A002
    """``tf.nn.local_response_normalization``: ``input / (bias + alpha * sqr_sum) ** beta`` with
    ``sqr_sum`` the sum of squares over ``depth_radius`` channels either side."""
    what = "tf.nn.local_response_normalization"
    x = convert(input)
    if len(x.shape) != 4:
        raise _errors.InvalidArgumentValueError(
            f"{what} takes a rank-4 input (batch, height, width, channels), as TensorFlow does, but got shape "
            f"{tuple(x.shape)}."
        )
    if np.dtype(x.dtype).name not in _DTYPES:
        raise _errors.GradkitTypeError(
            f"{what} takes an input of dtype {', '.join(_DTYPES)}, as TensorFlow's kernel does, but got "
            f"{np.dtype(x.dtype).name}. Cast it first: tf.cast(x, tf.float32)."
        )
    radius = int(depth_radius)
    if radius < 0:
        raise _errors.GradkitValueError(f"{what}: depth_radius={depth_radius!r}; TensorFlow takes 0 or more.")
    radius = min(radius, x.shape[-1])  # a wider window adds nothing but padding
    return call(_lrn, x, radius=radius, bias=float(bias), alpha=float(alpha), beta=float(beta))


lrn = local_response_normalization
