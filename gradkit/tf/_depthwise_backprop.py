"""``tf.nn.depthwise_conv2d_backprop_input`` and ``depthwise_conv2d_backprop_filter``: the
gradients of TensorFlow's native depthwise convolution (``DepthwiseConv2dNative``: a grouped
convolution, one group per input channel, dilated by ``dilations`` as an ordinary dilated
convolution) with respect to its input and its filter, for a given ``out_backprop``.

Each is the pullback of that convolution, so it is differentiable again (in the filter and
``out_backprop``, or the input and ``out_backprop``).

>>> import gradkit.tf as tf
>>> g = tf.nn.depthwise_conv2d_backprop_input([1, 3, 3, 1], tf.ones([2, 2, 1, 1]), tf.ones([1, 2, 2, 1]),
...                                           [1, 1, 1, 1], "VALID")
>>> g[0, :, :, 0].numpy().tolist()
[[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]]
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from . import _conv
from ._convert import call, convert, known_value
from ._depthwise import _DTYPES, _strides4


def _native(x, w, strides, padding, rates, channels_last):
    channels = x.shape[-1] if channels_last else x.shape[1]
    w = w.reshape((*w.shape[:2], 1, channels * w.shape[3]))
    return _conv._conv(x, w, strides, padding, rates, channels_last, channels)


def _input_gradient(w, g, *, sizes, strides, padding, rates, channels_last):
    zeros = jnp.zeros(sizes, g.dtype)
    pull = jax.vjp(lambda x: _native(x, w, strides, padding, rates, channels_last), zeros)[1]
    return pull(g)[0]


def _filter_gradient(x, g, *, sizes, strides, padding, rates, channels_last):
    zeros = jnp.zeros(sizes, g.dtype)
    pull = jax.vjp(lambda w: _native(x, w, strides, padding, rates, channels_last), zeros)[1]
    return pull(g)[0]


def _sizes(value, name, what) -> tuple:
    sizes = known_value(value)
    sizes = None if sizes is None else np.asarray(sizes)
    if sizes is None or sizes.shape != (4,) or sizes.dtype.kind not in "iu" or (sizes < 0).any():
        raise _errors.InvalidArgumentValueError(
            f"{what}: {name} must be a known vector of 4 nonnegative ints (TensorFlow's 1-D int32 tensor), but got "
            f"{value!r}."
        )
    return tuple(int(s) for s in sizes)


def _rates(dilations, channels_last, what):
    values = [int(d) for d in dilations]
    outer = (values[0], values[3]) if channels_last else (values[0], values[1])
    if len(values) != 4 or outer != (1, 1) or min(values) < 1:
        raise _errors.InvalidArgumentValueError(
            f"{what}: dilations={list(dilations)}; TensorFlow takes 4 positive ints, 1 for batch and channels."
        )
    return tuple(values[1:3] if channels_last else values[2:])


def _prepare(tensors, sizes, strides, padding, data_format, dilations, what):
    channels_last = _conv._layout(data_format, 2, what)
    tensors = [convert(t) for t in tensors]
    dtypes = {np.dtype(t.dtype).name for t in tensors}
    if len(dtypes) != 1 or not dtypes <= set(_DTYPES):
        raise _errors.InvalidArgumentTypeError(
            f"{what}: got tensors of dtypes {sorted(dtypes)}; TensorFlow takes one of {', '.join(_DTYPES)} for all."
        )
    settings = {
        "sizes": sizes,
        "strides": _strides4(strides, channels_last, what),
        "padding": _conv._padding(padding, 2, channels_last, what),
        "rates": _rates(dilations, channels_last, what),
        "channels_last": channels_last,
    }
    return tensors, settings


def _check_out_backprop(x_shape, w_shape, g, settings, what):
    want = jax.eval_shape(
        lambda x, w: _native(
            x, w, settings["strides"], settings["padding"], settings["rates"], settings["channels_last"]
        ),
        jax.ShapeDtypeStruct(x_shape, g.dtype),
        jax.ShapeDtypeStruct(w_shape, g.dtype),
    ).shape
    if tuple(g.shape) != tuple(want):
        raise _errors.InvalidArgumentValueError(
            f"{what}: out_backprop has shape {tuple(g.shape)}, but the convolution of an input of shape "
            f"{tuple(x_shape)} by a filter of shape {tuple(w_shape)} gives {tuple(want)}; TensorFlow refuses it too."
        )


def depthwise_conv2d_backprop_input(
    input_sizes, filter, out_backprop, strides, padding, data_format="NHWC", dilations=(1, 1, 1, 1), name=None
):  # noqa: A002
    """``tf.nn.depthwise_conv2d_backprop_input``: the gradient of the depthwise convolution with
    respect to its input (of shape ``input_sizes``), given ``out_backprop``."""
    what = "tf.nn.depthwise_conv2d_backprop_input"
    sizes = _sizes(input_sizes, "input_sizes", what)
    (w, g), settings = _prepare([filter, out_backprop], sizes, strides, padding, data_format, dilations, what)
    channels = sizes[3] if settings["channels_last"] else sizes[1]
    if len(w.shape) != 4 or w.shape[2] != channels:
        raise _errors.InvalidArgumentValueError(
            f"{what}: filter must be [height, width, in_channels={channels}, channel_multiplier], but got shape "
            f"{tuple(w.shape)}."
        )
    _check_out_backprop(sizes, tuple(w.shape), g, settings, what)
    return call(_input_gradient, w, g, **settings)


def depthwise_conv2d_backprop_filter(
    input, filter_sizes, out_backprop, strides, padding, data_format="NHWC", dilations=(1, 1, 1, 1), name=None
):  # noqa: A002
    """``tf.nn.depthwise_conv2d_backprop_filter``: the gradient of the depthwise convolution with
    respect to its filter (of shape ``filter_sizes``), given ``out_backprop``."""
    what = "tf.nn.depthwise_conv2d_backprop_filter"
    sizes = _sizes(filter_sizes, "filter_sizes", what)
    (x, g), settings = _prepare([input, out_backprop], sizes, strides, padding, data_format, dilations, what)
    channels = x.shape[-1] if settings["channels_last"] else x.shape[1] if len(x.shape) == 4 else None
    if len(x.shape) != 4 or sizes[2] != channels:
        raise _errors.InvalidArgumentValueError(
            f"{what}: input must be rank 4 with filter_sizes[2] ({sizes[2]}) channels, but got shape {tuple(x.shape)}."
        )
    _check_out_backprop(tuple(x.shape), sizes, g, settings, what)
    return call(_filter_gradient, x, g, **settings)
