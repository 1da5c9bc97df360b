"""Depthwise convolutions: ``tf.nn.depthwise_conv2d`` and ``tf.nn.separable_conv2d``.

``depthwise_conv2d(input, filter, strides, padding)`` convolves each input channel with its
own ``channel_multiplier`` filters (``filter`` is ``[h, w, in_channels, channel_multiplier]``;
output channel ``c * channel_multiplier + m``), as a grouped convolution.
``separable_conv2d`` follows it with a 1x1 ``conv2d`` by ``pointwise_filter``.

As TensorFlow's, ``strides`` is a list of 4 ints and ``dilations`` (the rate) a list of 2;
a dilated convolution goes through TensorFlow's ``with_space_to_batch`` there, which gradkit
reproduces exactly: with unit strides it is the ordinary dilated convolution, and with
strides above 1 as well (which TensorFlow warns about but computes) it is the same rows and
columns TensorFlow's space-to-batch program picks.

>>> import gradkit.tf as tf
>>> y = tf.nn.depthwise_conv2d(tf.ones([1, 3, 3, 2]), tf.ones([2, 2, 2, 3]), [1, 1, 1, 1], "VALID")
>>> y.shape, float(y[0, 0, 0, 5])
((1, 2, 2, 6), 4.0)
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from . import _conv
from ._convert import call, convert

_DTYPES = ("float16", "bfloat16", "float32", "float64")


def _space_to_batch_rows(size, kernel, stride, rate, pads):
    """The output positions of TensorFlow's ``with_space_to_batch`` along one axis, as indices
    into the stride-1 dilated convolution of the padded input.

    TensorFlow pads the axis (``pads``, then up to a multiple of ``rate``), splits it into
    ``rate`` phases, convolves each phase with ``stride`` and interleaves the phases again,
    dropping the extra padding's outputs: output ``j * rate + p`` is the stride-1 output at
    ``p + rate * stride * j``."""
    padded = size + pads[0] + pads[1]
    extra = -padded % rate
    phase = (padded + extra) // rate
    per_phase = (phase - kernel) // stride + 1
    count = rate * per_phase - extra
    out = np.arange(max(count, 0))
    return tuple(int(i) for i in out % rate + rate * stride * (out // rate))


def _depthwise(x, w, strides, padding, rates, channels_last, rows):
    channels = x.shape[-1] if channels_last else x.shape[1]
    w = w.reshape((*w.shape[:2], 1, channels * w.shape[3]))
    if rows is None:  # TensorFlow's own op: any strides and padding, no dilation
        return _conv._conv(x, w, strides, padding, (1, 1), channels_last, channels)
    # A dilated convolution (TensorFlow's with_space_to_batch): stride 1 over the padded
    # input, then the output rows and columns TensorFlow's phases pick.
    y = _conv._conv(x, w, (1, 1), padding, rates, channels_last, channels)
    first = 1 if channels_last else 2
    for axis, index in enumerate(rows):
        if index != tuple(range(y.shape[first + axis])):  # unit strides keep every output
            y = jnp.take(y, np.asarray(index, np.int32), axis=first + axis)
    return y


def _strides4(strides, channels_last, what):
    if not isinstance(strides, (list, tuple)):
        raise _errors.GradkitTypeError(
            f"{what}: strides={strides!r}; TensorFlow takes a list of 4 ints here, e.g. strides=[1, 1, 1, 1]."
        )
    values = [int(s) for s in strides]
    if len(values) != 4:
        raise _errors.GradkitValueError(
            f"{what}: strides={values} has {len(values)} entries; TensorFlow takes 4 (batch, height, width, "
            "channels in NHWC), 1 for batch and channels."
        )
    outer = (values[0], values[3]) if channels_last else (values[0], values[1])
    spatial = tuple(values[1:3] if channels_last else values[2:])
    if outer != (1, 1) or any(s < 1 for s in spatial):
        # TensorFlow's kernel: InvalidArgumentError for a stride below 1 (UnimplementedError for
        # batch or channel strides, left a plain ValueError here).
        error = _errors.GradkitValueError if outer != (1, 1) else _errors.InvalidArgumentValueError
        raise error(
            f"{what}: strides={values}; TensorFlow takes 1 for batch and channels and positive spatial strides."
        )
    return spatial


def _rates(dilations, what):
    if dilations is None:
        return (1, 1)
    if not isinstance(dilations, (list, tuple, np.ndarray)):
        raise _errors.GradkitTypeError(
            f"{what}: dilations={dilations!r}; TensorFlow takes a list of 2 ints (height, width) here, "
            f"e.g. dilations=[{dilations}, {dilations}]."
        )
    values = tuple(int(d) for d in np.ravel(np.asarray(dilations)).tolist())
    if len(values) != 2 or any(d < 1 for d in values):
        raise _errors.GradkitValueError(
            f"{what}: dilations={list(values)}; TensorFlow takes 2 positive ints (height, width) here."
        )
    return values


def depthwise_conv2d(input, filter, strides, padding, data_format=None, dilations=None, name=None):  # noqa: A002
    """``tf.nn.depthwise_conv2d``: each of the input's channels convolved with its own
    ``channel_multiplier`` filters (``filter`` ``[h, w, in_channels, channel_multiplier]``)."""
    return _depthwise_conv2d(input, filter, strides, padding, data_format, dilations, "tf.nn.depthwise_conv2d")


def _depthwise_conv2d(input, filter, strides, padding, data_format, dilations, what):  # noqa: A002
    channels_last = _conv._layout(data_format, 2, what)
    x, w = convert(input), convert(filter)
    _conv._check_rank(x, 4, what, "NHWC" if channels_last else "NCHW")
    if len(w.shape) != 4:
        raise _errors.InvalidArgumentValueError(
            f"{what} takes a rank-4 filter [height, width, in_channels, channel_multiplier], but got shape "
            f"{tuple(w.shape)}."
        )
    if np.dtype(x.dtype).name not in _DTYPES or np.dtype(x.dtype) != np.dtype(w.dtype):
        raise _errors.InvalidArgumentTypeError(
            f"{what}: input is {np.dtype(x.dtype).name} and filter is {np.dtype(w.dtype).name}; TensorFlow takes one "
            f"of {', '.join(_DTYPES)} for both. Cast them: tf.cast(x, tf.float32)."
        )
    channels = x.shape[-1] if channels_last else x.shape[1]
    if w.shape[2] != channels:
        raise _errors.InvalidArgumentValueError(
            f"{what}: the input has {channels} channels but the filter's in_channels (axis 2) is {w.shape[2]}; "
            "TensorFlow requires them equal."
        )
    strides = _strides4(strides, channels_last, what)
    rates = _rates(dilations, what)
    if rates == (1, 1):
        padding = _conv._padding(padding, 2, channels_last, what)
        return call(
            _depthwise, x, w, strides=strides, padding=padding, rates=rates, channels_last=channels_last, rows=None
        )
    # TensorFlow's with_space_to_batch: 'SAME' pads (k - 1) * rate, the extra entry at the end;
    # explicit padding pads as given. It refuses other strings in Python (ValueError).
    if isinstance(padding, str) and padding not in ("SAME", "VALID"):
        raise _errors.GradkitValueError(f"{what}: padding={padding!r}; TensorFlow takes 'SAME' or 'VALID' here.")
    padding = _conv._padding(padding, 2, channels_last, what)
    if padding == "SAME":
        pads = tuple(((k - 1) * r // 2, (k - 1) * r - (k - 1) * r // 2) for k, r in zip(w.shape[:2], rates))
    elif padding == "VALID":
        pads = ((0, 0), (0, 0))
    else:
        pads = padding
    spatial = x.shape[1:3] if channels_last else x.shape[2:]
    rows = tuple(
        _space_to_batch_rows(n, k, s, r, p) for n, k, s, r, p in zip(spatial, w.shape[:2], strides, rates, pads)
    )
    if any(len(index) == 0 for index in rows):
        raise _errors.GradkitValueError(
            f"{what}: the dilated filter {tuple(w.shape[:2])} (rate {list(rates)}) is larger than the padded input "
            f"{tuple(spatial)}, so there is no output; TensorFlow refuses it too."
        )
    return call(_depthwise, x, w, strides=strides, padding=pads, rates=rates, channels_last=channels_last, rows=rows)


def separable_conv2d(
    input, depthwise_filter, pointwise_filter, strides, padding, data_format=None, dilations=None, name=None
):  # noqa: A002
    """``tf.nn.separable_conv2d``: ``depthwise_conv2d`` by ``depthwise_filter``, then a 1x1 ``conv2d``
    by ``pointwise_filter`` (``[1, 1, in_channels * channel_multiplier, out_channels]``)."""
    what = "tf.nn.separable_conv2d"
    pointwise = convert(pointwise_filter)
    if len(pointwise.shape) != 4 or tuple(pointwise.shape[:2]) != (1, 1):
        raise _errors.GradkitValueError(
            f"{what} takes a pointwise_filter of shape [1, 1, in_channels * channel_multiplier, out_channels], "
            f"but got shape {tuple(pointwise.shape)}."
        )
    depthwise = _depthwise_conv2d(input, depthwise_filter, strides, padding, data_format, dilations, what)
    return _conv._convolve(depthwise, pointwise, 1, "VALID", data_format or "NHWC", None, 2, what)
