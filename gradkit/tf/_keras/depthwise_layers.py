"""``tf.keras.layers.DepthwiseConv1D``, ``DepthwiseConv2D``, ``SeparableConv1D`` and
``SeparableConv2D``: Keras 3's depthwise and separable convolutions, channels last or first.

A depthwise convolution convolves each input channel with its own ``depth_multiplier``
filters (kernel ``(*kernel_size, in_channels, depth_multiplier)``); a separable one follows it
with a 1x1 convolution (``pointwise_kernel`` ``(*ones, in_channels * depth_multiplier,
filters)``). Each call is one recorded op: the grouped convolution (``lax.conv_general_dilated``
with one group per channel), the pointwise one and the bias. Strides and dilation may both be
above 1, as in Keras 3, whose TensorFlow backend then runs the dilated convolution at stride 1
over TensorFlow's 'same' padding and keeps every ``stride``-th output: the same values as one
strided, dilated convolution, which is what runs here.

>>> import gradkit.tf as tf
>>> layer = tf.keras.layers.SeparableConv2D(4, 3, depth_multiplier=2, padding="same", name="sep")
>>> layer(tf.ones([1, 5, 5, 3])).shape, [w.name for w in layer.weights]
((1, 5, 5, 4), ['sep/depthwise_kernel:0', 'sep/pointwise_kernel:0', 'sep/bias:0'])
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from gradkit import _errors
from gradkit.nn import activations
from gradkit.nn.layer import Layer, unique_name

from .. import _conv
from .._convert import call
from . import activations as _keras_activations
from . import layer_args, layer_config, layer_regularization
from .layers import _KerasLayer
from .spatial_args import (
    channels_axis,
    channels_last_shape,
    channels_placed,
    check_window_fits,
    layout,
    standardize_data_format,
)


def _depthwise_separable(x, depthwise, pointwise, bias, *, strides, padding, dilations, channels_last):
    """The depthwise convolution of ``x``, then the pointwise one and the bias."""
    channels = x.shape[-1] if channels_last else x.shape[1]
    kernel = depthwise.reshape((*depthwise.shape[:-2], 1, channels * depthwise.shape[-1]))
    y = _conv._conv(x, kernel, strides, padding, dilations, channels_last, channels)
    if pointwise is not None:
        y = _conv._conv(y, pointwise, (1,) * len(strides), "VALID", (1,) * len(strides), channels_last, 1)
    if bias is not None:
        ones = (1,) * (y.ndim - 2)
        y = y + jnp.reshape(bias, (1, *ones, *bias.shape) if channels_last else (1, *bias.shape, *ones))
    return y


class _DepthwiseConv(_KerasLayer, Layer):
    """The shared part of the depthwise and separable layers (``separable`` adds the pointwise kernel)."""

    rank = 0
    separable = False
    default_name = ""

    def __init__(
        self,
        kernel_size,
        strides=1,
        padding="valid",
        depth_multiplier=1,
        data_format=None,
        dilation_rate=1,
        activation=None,
        use_bias=True,
        depthwise_initializer="glorot_uniform",
        bias_initializer="zeros",
        depthwise_regularizer=None,
        bias_regularizer=None,
        activity_regularizer=None,
        depthwise_constraint=None,
        bias_constraint=None,
        name=None,
        trainable=True,
        filters=None,
        pointwise_initializer="glorot_uniform",
        pointwise_regularizer=None,
        pointwise_constraint=None,
        **kwargs,
    ):
        what = f"tf.keras.layers.{type(self).__name__}"
        if not self.separable:  # the separable layers' own arguments: unknown to a depthwise layer, as in Keras
            given = {"filters": filters, "pointwise_regularizer": pointwise_regularizer}
            given.update(pointwise_initializer=pointwise_initializer, pointwise_constraint=pointwise_constraint)
            defaults = {"pointwise_initializer": "glorot_uniform"}
            kwargs.update({k: v for k, v in given.items() if v is not None and v != defaults.get(k)})
        shape_args = layer_args.base_options(what, kwargs)
        data_format = standardize_data_format(data_format, what)
        initializers = {"depthwise_initializer": depthwise_initializer, "bias_initializer": bias_initializer}
        if self.separable:
            initializers["pointwise_initializer"] = pointwise_initializer
        layer_args.check_initializers(what, **initializers)
        counts = (("depth_multiplier", depth_multiplier),) + ((("filters", filters),) if self.separable else ())
        for arg, value in counts:
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise _errors.GradkitValueError(f"{what}: {arg}={value!r}; Keras takes a positive int here.")
        n = self.rank
        self.depth_multiplier = depth_multiplier
        self.kernel_size = layer_args.int_tuple(kernel_size, n, "kernel_size", what)
        self.strides = layer_args.int_tuple(strides, n, "strides", what)
        self.dilation_rate = layer_args.int_tuple(dilation_rate, n, "dilation_rate", what)
        self.padding = layer_args.padding_name(padding, what)
        super().__init__(
            name=name if name is not None else unique_name(self.default_name),
            trainable=trainable,
            activity_regularizer=activity_regularizer,
            **shape_args,
        )
        layer_regularization.keep_options(
            self,
            depthwise_regularizer=depthwise_regularizer,
            bias_regularizer=bias_regularizer,
            depthwise_constraint=depthwise_constraint,
            bias_constraint=bias_constraint,
        )
        if self.separable:
            layer_regularization.keep_options(
                self, pointwise_regularizer=pointwise_regularizer, pointwise_constraint=pointwise_constraint
            )
        self.data_format = data_format
        self.activation = activations.get(_keras_activations.for_layer(activation))
        self.use_bias = bool(use_bias)
        self.depthwise_initializer = depthwise_initializer
        self.bias_initializer = bias_initializer
        if self.separable:
            self.filters = filters
            self.pointwise_initializer = pointwise_initializer
        # The variables in Keras' order: the (depthwise) kernel, the pointwise kernel, the bias.
        self.kernel = self.depthwise_kernel = self.pointwise_kernel = self.bias = None

    def _what(self) -> str:
        return f"tf.keras.layers.{type(self).__name__} '{self.name}'"

    def _layout(self) -> str:
        return layout(self.rank, self.data_format, names=True)

    def _out_channels(self, channels) -> int:
        return self.filters if self.separable else channels * self.depth_multiplier

    def build(self, input_shape) -> None:
        layer_args.check_rank(input_shape, self.rank + 2, self._layout(), self._what())
        channels = input_shape[channels_axis(self.data_format)]
        shape = (*self.kernel_size, channels, self.depth_multiplier)
        if self.separable:
            self.depthwise_kernel = self.add_weight("depthwise_kernel", shape, self.depthwise_initializer)
            pointwise = (*(1,) * self.rank, channels * self.depth_multiplier, self.filters)
            self.pointwise_kernel = self.add_weight("pointwise_kernel", pointwise, self.pointwise_initializer)
        else:
            self.kernel = self.add_weight("kernel", shape, self.depthwise_initializer)
        if self.use_bias:
            self.bias = self.add_weight("bias", (self._out_channels(channels),), self.bias_initializer)
        # The depthwise kernel (``kernel`` of a depthwise layer) carries the depthwise_* options, as in Keras.
        depthwise = self.depthwise_kernel if self.separable else self.kernel
        layer_regularization.attach(depthwise, self.depthwise_regularizer, self.depthwise_constraint)
        if self.separable:
            layer_regularization.attach(self.pointwise_kernel, self.pointwise_regularizer, self.pointwise_constraint)
        if self.bias is not None:
            layer_regularization.attach(self.bias, self.bias_regularizer, self.bias_constraint)

    def call(self, x):
        layer_args.check_rank(x.shape, self.rank + 2, self._layout(), self._what())
        depthwise = self.depthwise_kernel if self.separable else self.kernel
        channels = depthwise.shape[-2]
        axis = channels_axis(self.data_format)
        if x.shape[axis] != channels:
            where = "last axis" if axis == -1 else "axis 1, channels_first"
            raise _errors.GradkitValueError(
                f"{self._what()} was built for inputs with {channels} channels ({where}), but got shape "
                f"{tuple(x.shape)}. Pass {channels} channels, or use a new layer for the new size."
            )
        layer_args.check_float(x, self._what())
        check_window_fits(self._what(), x.shape, self.data_format, self.kernel_size, self.dilation_rate, self.padding)
        y = call(
            _depthwise_separable,
            x,
            depthwise.value,
            self.pointwise_kernel.value if self.separable else None,
            None if self.bias is None else self.bias.value,
            strides=self.strides,
            padding=self.padding.upper(),
            dilations=self.dilation_rate,
            channels_last=axis == -1,
        )
        return self.activation(y)

    def compute_output_shape(self, input_shape):
        shape = channels_last_shape(input_shape, self.data_format)
        spatial = jax.eval_shape(
            lambda z: jax.lax.conv_general_dilated(
                z,
                jnp.zeros((1, 1, *self.kernel_size), jnp.float32),
                self.strides,
                self.padding.upper(),
                rhs_dilation=self.dilation_rate,
            ),
            jax.ShapeDtypeStruct((1, 1, *(1 if d is None else d for d in shape[1:-1])), jnp.float32),
        ).shape[2:]
        spatial = tuple(None if d is None else s for d, s in zip(shape[1:-1], spatial))
        return channels_placed((shape[0], *spatial, self._out_channels(shape[-1])), self.data_format)


class DepthwiseConv1D(_DepthwiseConv):
    """``tf.keras.layers.DepthwiseConv1D(kernel_size, strides=1, padding='valid',
    depth_multiplier=1, dilation_rate=1, activation=None, use_bias=True,
    depthwise_initializer='glorot_uniform', bias_initializer='zeros')`` over
    ``(batch, width, channels)`` inputs; kernel ``(kernel_size, channels, depth_multiplier)``,
    ``channels * depth_multiplier`` outputs.

    >>> import gradkit.tf as tf
    >>> tf.keras.layers.DepthwiseConv1D(3, depth_multiplier=2)(tf.ones([2, 6, 3])).shape
    (2, 4, 6)
    """

    rank = 1
    default_name = "depthwise_conv1d"


class DepthwiseConv2D(_DepthwiseConv):
    """``tf.keras.layers.DepthwiseConv2D(kernel_size, strides=(1, 1), padding='valid',
    depth_multiplier=1, dilation_rate=(1, 1), activation=None, use_bias=True,
    depthwise_initializer='glorot_uniform', bias_initializer='zeros')`` over
    ``(batch, height, width, channels)`` inputs; kernel ``(kh, kw, channels, depth_multiplier)``."""

    rank = 2
    default_name = "depthwise_conv2d"


class SeparableConv1D(_DepthwiseConv):
    """``tf.keras.layers.SeparableConv1D(filters, kernel_size, strides=1, padding='valid',
    dilation_rate=1, depth_multiplier=1, activation=None, use_bias=True,
    depthwise_initializer='glorot_uniform', pointwise_initializer='glorot_uniform',
    bias_initializer='zeros')`` over ``(batch, width, channels)`` inputs."""

    rank = 1
    separable = True
    default_name = "separable_conv1d"

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None, dilation_rate=1, **kwargs):
        super().__init__(
            kernel_size,
            strides,
            padding,
            data_format=data_format,
            dilation_rate=dilation_rate,
            filters=filters,
            **kwargs,
        )


class SeparableConv2D(SeparableConv1D):
    """``tf.keras.layers.SeparableConv2D(filters, kernel_size, strides=(1, 1), padding='valid',
    dilation_rate=(1, 1), depth_multiplier=1, activation=None, use_bias=True,
    depthwise_initializer='glorot_uniform', pointwise_initializer='glorot_uniform',
    bias_initializer='zeros')`` over ``(batch, height, width, channels)`` inputs."""

    rank = 2
    default_name = "separable_conv2d"


# Keras' other names for the separable layers (the same classes, as in Keras).
SeparableConvolution1D, SeparableConvolution2D = SeparableConv1D, SeparableConv2D

_DEPTHWISE_TAIL = (
    "activation",
    "use_bias",
    "depthwise_initializer",
    "bias_initializer",
    "depthwise_regularizer",
    "bias_regularizer",
    "activity_regularizer",
    "depthwise_constraint",
    "bias_constraint",
)
_DEPTHWISE = ("depth_multiplier", "kernel_size", "strides", "padding", "data_format", "dilation_rate", *_DEPTHWISE_TAIL)
_SEPARABLE = (
    "depth_multiplier",
    "filters",
    "kernel_size",
    "strides",
    "padding",
    "data_format",
    "dilation_rate",
    "activation",
    "use_bias",
    "depthwise_initializer",
    "pointwise_initializer",
    "bias_initializer",
    "depthwise_regularizer",
    "pointwise_regularizer",
    "bias_regularizer",
    "activity_regularizer",
    "depthwise_constraint",
    "pointwise_constraint",
    "bias_constraint",
)
layer_config.BUILTIN.update(
    DepthwiseConv1D=_DEPTHWISE, DepthwiseConv2D=_DEPTHWISE, SeparableConv1D=_SEPARABLE, SeparableConv2D=_SEPARABLE
)
