"""``tf.keras.layers.Conv3D`` and ``Conv3DTranspose``: Keras 3's volumetric convolutions, over
``(batch, depth, height, width, channels)`` inputs, on the same code as the 1-D and 2-D layers
(``tf.nn.conv3d`` and ``tf.nn.conv3d_transpose``), one recorded op per convolution; and Keras'
other names for its convolution classes (``Convolution2D`` is ``Conv2D``, ...)."""

from __future__ import annotations

# layers first: the convolution modules build on its _KerasLayer and it imports them back.
from . import layer_config, layers  # noqa: F401
from .conv_layers import Conv1D, Conv2D, _Conv
from .conv_transpose_layers import Conv1DTranspose, Conv2DTranspose, _ConvTranspose


class Conv3D(_Conv):
    """``tf.keras.layers.Conv3D(filters, kernel_size, strides=(1, 1, 1), padding='valid',
    dilation_rate=(1, 1, 1), groups=1, activation=None, use_bias=True,
    kernel_initializer='glorot_uniform', bias_initializer='zeros')`` over
    ``(batch, depth, height, width, channels)`` inputs (or channels first); the kernel is
    ``(kd, kh, kw, in_channels // groups, filters)``, as in Keras.

    >>> import gradkit.tf as tf
    >>> layer = tf.keras.layers.Conv3D(4, 2, padding="same", name="conv3d")
    >>> layer(tf.ones([1, 3, 4, 5, 2])).shape, layer.kernel.shape.as_list()
    ((1, 3, 4, 5, 4), [2, 2, 2, 2, 4])
    """

    rank = 3
    default_name = "conv3d"


class Conv3DTranspose(_ConvTranspose):
    """``tf.keras.layers.Conv3DTranspose(filters, kernel_size, strides=(1, 1, 1), padding='valid',
    output_padding=None, dilation_rate=(1, 1, 1), activation=None, use_bias=True,
    kernel_initializer='glorot_uniform', bias_initializer='zeros')`` over
    ``(batch, depth, height, width, channels)`` inputs; the kernel is
    ``(kd, kh, kw, filters, in_channels)``, as in Keras.

    >>> import gradkit.tf as tf
    >>> layer = tf.keras.layers.Conv3DTranspose(3, 2, strides=2, name="conv3d_transpose")
    >>> layer(tf.ones([1, 2, 3, 2, 4])).shape, layer.kernel.shape.as_list()
    ((1, 4, 6, 4, 3), [2, 2, 2, 3, 4])
    """

    rank = 3
    default_name = "conv3d_transpose"


# Keras' config keys for these layers are its 1-D and 2-D layers' keys.
layer_config.BUILTIN.update(
    Conv3D=layer_config.BUILTIN["Conv2D"], Conv3DTranspose=layer_config.BUILTIN["Conv2DTranspose"]
)

# Keras' other names for the convolution classes (the same classes, as in Keras).
Convolution1D, Convolution2D, Convolution3D = Conv1D, Conv2D, Conv3D
Convolution1DTranspose, Convolution2DTranspose, Convolution3DTranspose = (
    Conv1DTranspose,
    Conv2DTranspose,
    Conv3DTranspose,
)
