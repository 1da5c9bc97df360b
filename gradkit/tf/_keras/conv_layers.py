"""``tf.keras.layers.Conv1D`` and ``Conv2D``: Keras 3's convolution layers on ``tf.nn.conv1d/conv2d``."""

from __future__ import annotations

import gradkit.numpy as gnp
from gradkit import _errors
from gradkit.nn import activations
from gradkit.nn.layer import Layer, unique_name

from .. import _conv
from . import activations as _keras_activations
from . import layer_args, layer_regularization
from .layers import _KerasLayer
from .spatial_args import channels_axis, check_window_fits, layout, standardize_data_format, tf_data_format

_OPS = {1: "tf.nn.conv1d", 2: "tf.nn.conv2d", 3: "tf.nn.conv3d"}


class _Conv(_KerasLayer, Layer):
    """A Keras convolution over ``rank`` spatial axes, channels last or first: kernel
    ``(*kernel_size, in_channels // groups, filters)``, bias ``(filters,)`` (the same weights for
    both data formats, as in Keras)."""

    rank = 0
    default_name = ""

    def __init__(
        self,
        filters,
        kernel_size,
        strides=1,
        padding="valid",
        data_format=None,
        dilation_rate=1,
        groups=1,
        activation=None,
        use_bias=True,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        kernel_regularizer=None,
        bias_regularizer=None,
        activity_regularizer=None,
        kernel_constraint=None,
        bias_constraint=None,
        lora_rank=None,
        lora_alpha=None,
        name=None,
        trainable=True,
        **kwargs,
    ):
        what = f"tf.keras.layers.{type(self).__name__}"
        layer_args.refuse_unimplemented(
            what,
            "filters, kernel_size, strides, padding, dilation_rate, groups, activation, use_bias, the "
            "initializers, regularizers and constraints, name and trainable",
            lora_rank=lora_rank,
            lora_alpha=lora_alpha,
        )
        shape_args = layer_args.base_options(what, kwargs)
        data_format = standardize_data_format(data_format, what)
        layer_args.check_initializers(what, kernel_initializer=kernel_initializer, bias_initializer=bias_initializer)
        n = self.rank
        for value, arg in ((filters, "filters"), (groups, "groups")):
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise _errors.GradkitValueError(f"{what}: {arg}={value!r}; Keras takes a positive int here.")
        if filters % groups:
            raise _errors.GradkitValueError(
                f"{what}: filters={filters} is not divisible by groups={groups}, as Keras requires. "
                "Pass a number of filters that groups divides."
            )
        self.filters, self.groups = filters, groups
        self.kernel_size = layer_args.int_tuple(kernel_size, n, "kernel_size", what)
        self.strides = layer_args.int_tuple(strides, n, "strides", what)
        self.dilation_rate = layer_args.int_tuple(dilation_rate, n, "dilation_rate", what)
        if max(self.strides) > 1 and max(self.dilation_rate) > 1:
            raise _errors.GradkitValueError(
                f"{what}: strides={self.strides} with dilation_rate={self.dilation_rate}; Keras does not take "
                "strides and dilation_rate both above 1. Use one of them."
            )
        self.padding = layer_args.padding_name(padding, what, allow_causal=n == 1)
        super().__init__(
            name=name if name is not None else unique_name(self.default_name),
            trainable=trainable,
            activity_regularizer=activity_regularizer,
            **shape_args,
        )
        layer_regularization.keep_options(
            self,
            kernel_regularizer=kernel_regularizer,
            bias_regularizer=bias_regularizer,
            kernel_constraint=kernel_constraint,
            bias_constraint=bias_constraint,
        )
        self.data_format = data_format
        self.activation = activations.get(_keras_activations.for_layer(activation))
        self.use_bias = bool(use_bias)
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer
        self.kernel = None  # (in this order: the variables are listed kernel, bias, as in Keras)
        self.bias = None  # stays None with use_bias=False, as in Keras

    def _what(self) -> str:
        return f"tf.keras.layers.{type(self).__name__} '{self.name}'"

    def _layout(self) -> str:
        return layout(self.rank, self.data_format, names=True)

    def build(self, input_shape) -> None:
        layer_args.check_rank(input_shape, self.rank + 2, self._layout(), self._what())
        channels = input_shape[channels_axis(self.data_format)]
        if channels % self.groups:
            raise _errors.GradkitValueError(
                f"{self._what()}: the input has {channels} channels, which groups={self.groups} does not divide, "
                "as Keras requires."
            )
        shape = (*self.kernel_size, channels // self.groups, self.filters)
        self.kernel = self.add_weight("kernel", shape, self.kernel_initializer)
        if self.use_bias:
            self.bias = self.add_weight("bias", (self.filters,), self.bias_initializer)
        layer_regularization.attach_to_weights(self, "kernel", "bias")

    def call(self, x):
        layer_args.check_rank(x.shape, self.rank + 2, self._layout(), self._what())
        channels = self.kernel.shape[-2] * self.groups
        axis = channels_axis(self.data_format)
        if x.shape[axis] != channels:
            where = "last axis" if axis == -1 else "axis 1, channels_first"
            raise _errors.GradkitValueError(
                f"{self._what()} was built for inputs with {channels} channels ({where}), but got shape "
                f"{tuple(x.shape)}. Pass {channels} channels, or use a new layer for the new size."
            )
        layer_args.check_float(x, self._what())
        check_window_fits(self._what(), x.shape, self.data_format, self.kernel_size, self.dilation_rate, self.padding)
        padding = self.padding.upper()
        if padding == "CAUSAL":  # Keras: pad the start of the sequence, then a 'valid' convolution
            start = [self.dilation_rate[0] * (self.kernel_size[0] - 1), 0]
            padding = [[0, 0], start, [0, 0]] if axis == -1 else [[0, 0], [0, 0], start]
        # tf.nn.convolution's own code for every rank: conv1d's public form refuses the explicit
        # padding 'causal' needs, as TensorFlow's does.
        data_format = tf_data_format(self.rank, self.data_format)
        y = _conv._convolve(
            x, self.kernel, self.strides, padding, data_format, self.dilation_rate, self.rank, _OPS[self.rank]
        )
        if self.use_bias:
            # Explicit rank: gradkit's strict test mode (jax_numpy_rank_promotion='raise') forbids implicit.
            y = y + gnp.reshape(self.bias.value, bias_shape(self.filters, self.rank, self.data_format))
        return self.activation(y)


def bias_shape(channels: int, rank: int, data_format: str) -> tuple:
    """The shape a per-channel bias takes to add to a rank-``rank`` convolution's output."""
    ones = (1,) * rank
    return (1, *ones, channels) if data_format == "channels_last" else (1, channels, *ones)


class Conv1D(_Conv):
    """``tf.keras.layers.Conv1D(filters, kernel_size, strides=1, padding='valid', dilation_rate=1,
    groups=1, activation=None, use_bias=True, kernel_initializer='glorot_uniform',
    bias_initializer='zeros')`` over ``(batch, width, channels)`` inputs; padding may also be
    ``'causal'`` (the output at step t sees the input up to t only).

    >>> import gradkit.tf as tf
    >>> layer = tf.keras.layers.Conv1D(4, 3, padding="causal", name="conv1d")
    >>> layer(tf.ones([2, 5, 3])).shape, layer.kernel.shape.as_list()
    ((2, 5, 4), [3, 3, 4])
    """

    rank = 1
    default_name = "conv1d"


class Conv2D(_Conv):
    """``tf.keras.layers.Conv2D(filters, kernel_size, strides=(1, 1), padding='valid',
    dilation_rate=(1, 1), groups=1, activation=None, use_bias=True,
    kernel_initializer='glorot_uniform', bias_initializer='zeros')`` over
    ``(batch, height, width, channels)`` inputs (``data_format='channels_first'``:
    ``(batch, channels, height, width)``).

    >>> import gradkit.tf as tf
    >>> layer = tf.keras.layers.Conv2D(8, 3, strides=2, padding="same", name="conv2d")
    >>> layer(tf.ones([2, 7, 7, 3])).shape, layer.kernel.name
    ((2, 4, 4, 8), 'conv2d/kernel:0')
    """

    rank = 2
    default_name = "conv2d"
