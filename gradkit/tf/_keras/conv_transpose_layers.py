"""``tf.keras.layers.Conv1DTranspose`` and ``Conv2DTranspose``: Keras 3's transposed convolutions
on ``tf.nn.conv_transpose``, with Keras' output size and weight layout."""

from __future__ import annotations

import gradkit.numpy as gnp
from gradkit import _errors
from gradkit.nn import activations
from gradkit.nn.layer import Layer, unique_name

from .. import _conv_transpose
from . import activations as _keras_activations
from . import conv_layers, layer_args, layer_regularization
from .layers import _KerasLayer
from .spatial_args import channels_axis, channels_placed, layout, standardize_data_format, tf_data_format


def output_size(size, kernel, stride, padding, output_padding, dilation):
    """Keras 3's output length along one axis (``compute_conv_transpose_output_shape``)."""
    kernel = (kernel - 1) * dilation + 1
    if padding == "valid":
        extra = max(kernel, stride) - kernel if output_padding is None else output_padding
        return (size - 1) * stride + kernel + extra
    if output_padding is None:
        return size * stride
    return (size - 1) * stride + kernel % 2 + output_padding


class _ConvTranspose(_KerasLayer, Layer):
    """A Keras transposed convolution over ``rank`` spatial axes, channels last or first: kernel
    ``(*kernel_size, filters, in_channels)``, bias ``(filters,)``."""

    rank = 0
    default_name = ""

    def __init__(
        self,
        filters,
        kernel_size,
        strides=1,
        padding="valid",
        output_padding=None,
        data_format=None,
        dilation_rate=1,
        activation=None,
        use_bias=True,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        kernel_regularizer=None,
        bias_regularizer=None,
        activity_regularizer=None,
        kernel_constraint=None,
        bias_constraint=None,
        name=None,
        trainable=True,
        **kwargs,
    ):
        what = f"tf.keras.layers.{type(self).__name__}"
        layer_args.refuse_unimplemented(
            what,
            "filters, kernel_size, strides, padding, output_padding, dilation_rate, activation, use_bias, the "
            "initializers, regularizers and constraints, name and trainable",
        )
        shape_args = layer_args.base_options(what, kwargs)
        data_format = standardize_data_format(data_format, what)
        layer_args.check_initializers(what, kernel_initializer=kernel_initializer, bias_initializer=bias_initializer)
        n = self.rank
        if not isinstance(filters, int) or isinstance(filters, bool) or filters <= 0:
            raise _errors.GradkitValueError(f"{what}: filters={filters!r}; Keras takes a positive int here.")
        self.filters = filters
        self.kernel_size = layer_args.int_tuple(kernel_size, n, "kernel_size", what)
        self.strides = layer_args.int_tuple(strides, n, "strides", what)
        self.dilation_rate = layer_args.int_tuple(dilation_rate, n, "dilation_rate", what)
        self.output_padding = None
        if output_padding is not None:
            # Keras allows 0 here; shift by one to reuse the positive-int check.
            shifted = layer_args.int_tuple(
                tuple(p + 1 for p in output_padding)
                if isinstance(output_padding, (tuple, list))
                else output_padding + 1,
                n,
                "output_padding (each entry + 1)",
                what,
            )
            self.output_padding = tuple(p - 1 for p in shifted)
            if any(p >= s for p, s in zip(self.output_padding, self.strides)):
                raise _errors.GradkitValueError(
                    f"{what}: output_padding={self.output_padding} with strides={self.strides}; Keras requires each "
                    "output_padding entry to be strictly less than its stride."
                )
        if max(self.strides) > 1 and max(self.dilation_rate) > 1:
            raise _errors.GradkitValueError(
                f"{what}: strides={self.strides} with dilation_rate={self.dilation_rate}; Keras does not take "
                "strides and dilation_rate both above 1. Use one of them."
            )
        self.padding = layer_args.padding_name(padding, what)
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
        shape = (*self.kernel_size, self.filters, input_shape[channels_axis(self.data_format)])
        self.kernel = self.add_weight("kernel", shape, self.kernel_initializer)
        if self.use_bias:
            self.bias = self.add_weight("bias", (self.filters,), self.bias_initializer)
        layer_regularization.attach_to_weights(self, "kernel", "bias")

    def call(self, x):
        layer_args.check_rank(x.shape, self.rank + 2, self._layout(), self._what())
        channels = self.kernel.shape[-1]
        axis = channels_axis(self.data_format)
        if x.shape[axis] != channels:
            where = "last axis" if axis == -1 else "axis 1, channels_first"
            raise _errors.GradkitValueError(
                f"{self._what()} was built for inputs with {channels} channels ({where}), but got shape "
                f"{tuple(x.shape)}. Pass {channels} channels, or use a new layer for the new size."
            )
        layer_args.check_float(x, self._what())
        paddings = self.output_padding or (None,) * self.rank
        spatial = [
            output_size(size, k, s, self.padding, p, d)
            for size, k, s, p, d in zip(
                x.shape[1:-1] if axis == -1 else x.shape[2:],
                self.kernel_size,
                self.strides,
                paddings,
                self.dilation_rate,
            )
        ]
        output_shape = channels_placed((x.shape[0], *spatial, self.filters), self.data_format)
        y = _conv_transpose.conv_transpose(
            x,
            self.kernel,
            output_shape,
            self.strides,
            self.padding.upper(),
            data_format=tf_data_format(self.rank, self.data_format),
            dilations=self.dilation_rate,
        )
        if self.use_bias:
            # Explicit rank: gradkit's strict test mode (jax_numpy_rank_promotion='raise') forbids implicit.
            y = y + gnp.reshape(self.bias.value, conv_layers.bias_shape(self.filters, self.rank, self.data_format))
        return self.activation(y)


class Conv1DTranspose(_ConvTranspose):
    """``tf.keras.layers.Conv1DTranspose(filters, kernel_size, strides=1, padding='valid',
    output_padding=None, dilation_rate=1, activation=None, use_bias=True, ...)`` over
    ``(batch, width, channels)`` inputs; kernel ``(kernel_size, filters, in_channels)``.

    >>> import gradkit.tf as tf
    >>> tf.keras.layers.Conv1DTranspose(4, 3, strides=2, padding="same")(tf.ones([2, 5, 3])).shape
    (2, 10, 4)
    """

    rank = 1
    default_name = "conv1d_transpose"


class Conv2DTranspose(_ConvTranspose):
    """``tf.keras.layers.Conv2DTranspose(filters, kernel_size, strides=(1, 1), padding='valid',
    output_padding=None, dilation_rate=(1, 1), activation=None, use_bias=True,
    kernel_initializer='glorot_uniform', bias_initializer='zeros')`` over
    ``(batch, height, width, channels)`` inputs (or channels first); the kernel is
    ``(kh, kw, filters, in_channels)``, as in Keras. With ``padding='same'`` the output is
    ``strides`` times the input; with ``'valid'`` it is ``(size - 1) * stride + max(kernel, stride)``.

    >>> import gradkit.tf as tf
    >>> layer = tf.keras.layers.Conv2DTranspose(8, 5, strides=2, padding="same", name="conv2d_transpose")
    >>> layer(tf.ones([2, 3, 3, 4])).shape, layer.kernel.shape.as_list()
    ((2, 6, 6, 8), [5, 5, 8, 4])
    """

    rank = 2
    default_name = "conv2d_transpose"
