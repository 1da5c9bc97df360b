"""Transposed convolutions: ``tf.nn.conv1d_transpose``, ``conv2d_transpose``, ``conv3d_transpose``,
``conv_transpose`` and ``atrous_conv2d_transpose``.

TensorFlow defines ``conv2d_transpose(x, filters, output_shape, ...)`` as the gradient of
``conv2d`` with respect to its input: the linear map that takes an ``output_shape`` tensor to
``x``'s shape, transposed. gradkit computes exactly that (``jax.linear_transpose`` of the
forward convolution), so padding, strides and dilations follow TensorFlow's rules by
construction, and the result is differentiable in both ``x`` and ``filters`` to any order.
The filters are ``[*spatial, out_channels, in_channels]``, as in TensorFlow.

>>> import gradkit.tf as tf
>>> y = tf.nn.conv2d_transpose(tf.ones([1, 2, 2, 3]), tf.ones([3, 3, 4, 3]), [1, 4, 4, 4], 2)
>>> y.shape, float(y[0, 1, 1, 0]), float(y[0, 2, 2, 0])  # as TensorFlow computes
((1, 4, 4, 4), 3.0, 12.0)
"""

from __future__ import annotations

import jax
import numpy as np

from gradkit import _errors

from . import _conv
from ._convert import call, convert


def _transpose(x, w, output_shape, strides, padding, dilations, channels_last):
    def forward(z):
        return _conv._conv(z, w, strides, padding, dilations, channels_last, 1)

    (y,) = jax.linear_transpose(forward, jax.ShapeDtypeStruct(output_shape, x.dtype))(x)
    return y


def _concrete_shape(output_shape, what):
    try:
        value = output_shape.numpy() if hasattr(output_shape, "numpy") else output_shape
        return tuple(int(d) for d in np.ravel(np.asarray(value)).tolist())
    except (TypeError, ValueError, jax.errors.ConcretizationTypeError):
        raise _errors.GradkitTypeError(
            f"{what} needs output_shape as concrete ints (a list, a tuple or an eager tensor), but got "
            f"{output_shape!r}: gradkit compiles with static shapes. Pass the shape as Python ints, e.g. "
            "[batch, height, width, channels] from x.shape."
        ) from None


def _transposed(input, filters, output_shape, strides, padding, data_format, dilations, n, what, spatial_only=False):  # noqa: A002
    """Check TensorFlow's arguments and record the transposed convolution. ``spatial_only``: an
    ``output_shape`` of the ``n`` spatial sizes alone is taken too (batch from the input, channels
    from the filters), as ``tf.nn.conv2d_transpose``'s Conv2DBackpropInput takes it."""
    channels_last = _conv._layout(data_format, n, what)
    x, w = convert(input), convert(filters)
    layout = _conv._CONV_FORMATS[n][0 if channels_last else 1][0]
    _conv._check_rank(x, n + 2, what, layout)
    if len(w.shape) != n + 2:
        raise _errors.GradkitValueError(
            f"{what} takes rank-{n + 2} filters ([*spatial, out_channels, in_channels]), but got shape "
            f"{tuple(w.shape)}."
        )
    if np.dtype(x.dtype) != np.dtype(w.dtype) or not np.issubdtype(np.dtype(x.dtype), np.floating):
        raise _errors.GradkitTypeError(
            f"{what}: input is {np.dtype(x.dtype).name} and filters are {np.dtype(w.dtype).name}; TensorFlow "
            "takes one floating-point dtype for both. Cast them: tf.cast(x, tf.float32)."
        )
    shape = _concrete_shape(output_shape, what)
    if spatial_only and len(shape) == n:
        batch, channels = x.shape[0], w.shape[-2]
        shape = (batch, *shape, channels) if channels_last else (batch, channels, *shape)
    if len(shape) != n + 2:
        also = f" or its {n} spatial sizes alone" if spatial_only else ""
        raise _errors.GradkitValueError(
            f"{what}: output_shape={list(shape)} has {len(shape)} entries; it is the whole output's shape "
            f"({layout}, {n + 2} entries){also}."
        )
    channels_in = x.shape[-1] if channels_last else x.shape[1]
    channels_out = shape[-1] if channels_last else shape[1]
    if (w.shape[-2], w.shape[-1]) != (channels_out, channels_in):
        raise _errors.GradkitValueError(
            f"{what}: filters of shape {tuple(w.shape)} do not fit an input with {channels_in} channels and an "
            f"output_shape with {channels_out}; TensorFlow needs filters [*spatial, {channels_out}, {channels_in}]."
        )
    strides = _conv._sequence(strides, n, channels_last, "strides", what)
    dilations = _conv._sequence(dilations, n, channels_last, "dilations", what)
    padding = _conv._padding(padding, n, channels_last, what)
    forward = jax.eval_shape(
        lambda z, k: _conv._conv(z, k, strides, padding, dilations, channels_last, 1),
        jax.ShapeDtypeStruct(shape, x.dtype),
        jax.ShapeDtypeStruct(tuple(w.shape), w.dtype),
    )
    if tuple(forward.shape) != tuple(x.shape):
        raise _errors.GradkitValueError(
            f"{what}: output_shape={list(shape)} does not fit the input's shape {tuple(x.shape)}: a convolution "
            f"of output_shape with these strides and padding has shape {tuple(forward.shape)}, and TensorFlow "
            "requires it to be the input's. Compute output_shape from the input, e.g. "
            "[batch, height * stride, width * stride, channels] for padding='SAME'."
        )
    return call(
        _transpose,
        x,
        w,
        output_shape=shape,
        strides=strides,
        padding=padding,
        dilations=dilations,
        channels_last=channels_last,
    )


def conv2d_transpose(
    input, filters, output_shape, strides, padding="SAME", data_format="NHWC", dilations=None, name=None
):  # noqa: A002
    """``tf.nn.conv2d_transpose``: the transpose (gradient) of ``conv2d``; filters ``[h, w, out, in]``;
    ``output_shape`` is the whole output's shape or, as in TensorFlow, its two spatial sizes alone."""
    return _transposed(
        input,
        filters,
        output_shape,
        strides,
        padding,
        data_format,
        dilations,
        2,
        "tf.nn.conv2d_transpose",
        spatial_only=True,
    )


def conv1d_transpose(
    input, filters, output_shape, strides, padding="SAME", data_format="NWC", dilations=None, name=None
):  # noqa: A002
    """``tf.nn.conv1d_transpose``: the transpose (gradient) of ``conv1d``; filters ``[w, out, in]``."""
    return _transposed(
        input, filters, output_shape, strides, padding, data_format, dilations, 1, "tf.nn.conv1d_transpose"
    )


def conv3d_transpose(
    input, filters, output_shape, strides, padding="SAME", data_format="NDHWC", dilations=None, name=None
):  # noqa: A002
    """``tf.nn.conv3d_transpose``: the transpose (gradient) of ``conv3d``; filters ``[d, h, w, out, in]``."""
    if not isinstance(padding, str):
        raise _errors.GradkitTypeError(
            f"tf.nn.conv3d_transpose: padding={padding!r}; TensorFlow takes 'SAME' or 'VALID' here."
        )
    return _transposed(
        input, filters, output_shape, strides, padding, data_format, dilations, 3, "tf.nn.conv3d_transpose"
    )


_BY_RANK = {1: (conv1d_transpose, "NWC"), 2: (conv2d_transpose, "NHWC"), 3: (conv3d_transpose, "NDHWC")}


def conv_transpose(input, filters, output_shape, strides, padding="SAME", data_format=None, dilations=None, name=None):  # noqa: A002
    """``tf.nn.conv_transpose``: ``conv1d_transpose``, ``conv2d_transpose`` or ``conv3d_transpose`` by
    the length of ``output_shape``, as TensorFlow dispatches."""
    rank = len(_concrete_shape(output_shape, "tf.nn.conv_transpose")) - 2
    if rank not in _BY_RANK:
        raise _errors.GradkitValueError(
            f"tf.nn.conv_transpose: output_shape has {rank + 2} entries; TensorFlow takes 3, 4 or 5 "
            "(batch, 1 to 3 spatial axes, channels)."
        )
    fn, default = _BY_RANK[rank]
    return fn(input, filters, output_shape, strides, padding, data_format or default, dilations)


def atrous_conv2d_transpose(value, filters, output_shape, rate, padding, name=None):
    """``tf.nn.atrous_conv2d_transpose``: the transpose (gradient) of ``atrous_conv2d``: an NHWC
    input, filters ``[h, w, out, in]`` dilated by ``rate``, padding 'SAME' or 'VALID'."""
    what = "tf.nn.atrous_conv2d_transpose"
    if padding not in ("SAME", "VALID"):
        raise _errors.GradkitValueError(f"{what}: padding={padding!r}; TensorFlow takes 'SAME' or 'VALID' here.")
    if int(rate) < 1:
        raise _errors.GradkitValueError(f"{what}: rate={rate!r}; TensorFlow takes a positive int.")
    return _transposed(value, filters, output_shape, 1, padding, "NHWC", int(rate), 2, what)
