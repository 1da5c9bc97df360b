"""Grayscale morphology: ``tf.nn.dilation2d`` and ``tf.nn.erosion2d``.

``dilation2d`` is a max-plus convolution: each output is the largest ``input + filter`` over
the (dilated) window, per channel; ``erosion2d(x, f)`` is ``-dilation2d(-x, f reversed)``, as
TensorFlow defines it. Window positions outside the input take no part (TensorFlow's kernel
skips them). An output none of whose candidates exceeds the dtype's lowest value (a window of
-inf, or wholly outside the input: a dilated filter larger than the input) is that lowest
value, as TensorFlow's kernel starts from it, with no gradient, where TensorFlow's backprop
kernels send one to the window's first pixel.

The gradient goes to one candidate: the first largest in the window's row-major order (the one
TensorFlow's backprop kernels pick), not shared between ties as ``jnp.max``'s would be.

>>> import gradkit.tf as tf
>>> x = tf.reshape(tf.range(9.0), [1, 3, 3, 1])
>>> tf.nn.dilation2d(x, tf.zeros([2, 2, 1]), [1, 1, 1, 1], "VALID", "NHWC", [1, 1, 1, 1])[0, :, :, 0].numpy()
array([[4., 5.],
       [7., 8.]], dtype=float32)
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from . import _kernel_dtypes
from ._convert import call, convert

_DTYPES = (*_kernel_dtypes.REAL, *_kernel_dtypes.INTEGERS)


def _dilate(x, f, strides, rates, padding):
    """The max-plus convolution of NHWC ``x`` with ``f`` ``[fh, fw, c]``."""
    (sy, sx), (ry, rx) = strides, rates
    (top, bottom), (left, right) = padding
    fh, fw = f.shape[:2]
    _, h, w, _ = x.shape
    out_h = (h + top + bottom - (fh - 1) * ry - 1) // sy + 1
    out_w = (w + left + right - (fw - 1) * rx - 1) // sx + 1
    lowest = jnp.asarray(_lowest(x.dtype), x.dtype)
    inside = np.pad(np.ones((h, w), bool), ((top, bottom), (left, right)))
    padded = jnp.pad(x, ((0, 0), (top, bottom), (left, right), (0, 0)))
    candidates = []
    for dy in range(fh):
        for dx in range(fw):
            rows = slice(dy * ry, dy * ry + (out_h - 1) * sy + 1, sy)
            cols = slice(dx * rx, dx * rx + (out_w - 1) * sx + 1, sx)
            # A position outside the input is the lowest value: it never wins over a real one.
            candidates.append(
                jnp.where(
                    inside[None, rows, cols, None], padded[:, rows, cols, :] + f[None, None, None, dy, dx], lowest
                )
            )
    candidates = jnp.stack(candidates)
    # The first largest candidate, picked by index so that its gradient is not split between ties.
    first = jnp.argmax(candidates, axis=0)[None]
    best = jnp.take_along_axis(candidates, first, axis=0)[0]
    return jnp.where(best < lowest, lowest, best)  # TensorFlow's kernel starts from the lowest value


def _lowest(dtype):
    return jnp.finfo(dtype).min if jnp.issubdtype(dtype, jnp.floating) else jnp.iinfo(dtype).min


def _erode(x, f, strides, rates, padding):
    return -_dilate(-x, f[::-1, ::-1], strides, rates, padding)


def _four(value, name, what):
    if not isinstance(value, (list, tuple)) or len(value) != 4:
        raise _errors.GradkitValueError(
            f"{what}: {name}={value!r}; TensorFlow takes a list of 4 ints here (batch, height, width, channels), "
            f"1 for batch and channels, e.g. {name}=[1, 2, 2, 1]."
        )
    values = [int(v) for v in value]
    if values[0] != 1 or values[3] != 1 or min(values[1:3]) < 1:
        raise _errors.InvalidArgumentValueError(
            f"{what}: {name}={values}; TensorFlow takes 1 for batch and channels and positive height and width."
        )
    return tuple(values[1:3])


def _pads(size, window, stride, padding):
    """TensorFlow's padding of one axis (``window`` the dilated filter's extent)."""
    if padding == "VALID":
        return (0, 0)
    out = -(-size // stride)
    total = max((out - 1) * stride + window - size, 0)
    return (total // 2, total - total // 2)


def _morphology(fn, x, f, strides, padding, data_format, dilations, what):
    if data_format != "NHWC":
        raise _errors.GradkitValueError(
            f"{what}: data_format={data_format!r}; TensorFlow's kernel takes 'NHWC' only. Transpose the input: "
            "tf.transpose(x, [0, 2, 3, 1])."
        )
    x, f = convert(x), convert(f)
    if np.dtype(x.dtype).name not in _DTYPES or np.dtype(x.dtype) != np.dtype(f.dtype):
        raise _errors.InvalidArgumentTypeError(
            f"{what}: input is {np.dtype(x.dtype).name} and filter is {np.dtype(f.dtype).name}; TensorFlow takes one "
            f"real dtype for both. Cast them: tf.cast(x, tf.float32)."
        )
    if len(x.shape) != 4 or len(f.shape) != 3:
        raise _errors.InvalidArgumentValueError(
            f"{what} takes a rank-4 input [batch, height, width, channels] and a rank-3 filter [height, width, "
            f"channels], but got shapes {tuple(x.shape)} and {tuple(f.shape)}."
        )
    if x.shape[3] != f.shape[2]:
        raise _errors.InvalidArgumentValueError(
            f"{what}: the input has {x.shape[3]} channels but the filter has {f.shape[2]} (its last axis); "
            "TensorFlow requires them equal."
        )
    if padding not in ("SAME", "VALID"):
        raise _errors.GradkitValueError(f"{what}: padding={padding!r}; TensorFlow takes 'SAME' or 'VALID' here.")
    strides, rates = _four(strides, "strides", what), _four(dilations, "dilations", what)
    windows = [(k - 1) * r + 1 for k, r in zip(f.shape[:2], rates)]
    if padding == "VALID" and any(n < k for n, k in zip(x.shape[1:3], windows)):
        raise _errors.InvalidArgumentValueError(
            f"{what}: the input's height and width {tuple(x.shape[1:3])} are smaller than the dilated filter's "
            f"{tuple(windows)} with padding 'VALID'; TensorFlow refuses it. Use padding='SAME' or a smaller filter."
        )
    pads = tuple(_pads(n, k, s, padding) for n, k, s in zip(x.shape[1:3], windows, strides))
    return call(fn, x, f, strides=strides, rates=rates, padding=pads)


def dilation2d(input, filters, strides, padding, data_format, dilations, name=None):  # noqa: A002
    """``tf.nn.dilation2d``: the largest ``input + filters`` over each window, per channel
    (``filters`` ``[height, width, channels]``; ``strides`` and ``dilations`` lists of 4)."""
    return _morphology(_dilate, input, filters, strides, padding, data_format, dilations, "tf.nn.dilation2d")


def erosion2d(value, filters, strides, padding, data_format, dilations, name=None):
    """``tf.nn.erosion2d``: the smallest ``value - filters`` (the filter reversed) over each
    window, per channel: ``-dilation2d(-value, reverse(filters, [0, 1]))``."""
    return _morphology(_erode, value, filters, strides, padding, data_format, dilations, "tf.nn.erosion2d")
