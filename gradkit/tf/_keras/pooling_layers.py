"""``tf.keras.layers.MaxPooling2D``, ``AveragePooling2D`` (aliases ``MaxPool2D``, ``AvgPool2D``) and
``GlobalAveragePooling2D``: Keras 3's 2-D pooling layers on ``tf.nn.max_pool2d/avg_pool2d``."""

from __future__ import annotations

import numpy as np

from gradkit.nn.layer import Layer, unique_name

from .. import _array, _math, _pooling
from . import layer_args
from .layers import _KerasLayer
from .spatial_args import layout, spatial_axes, standardize_data_format, tf_data_format


class _Pooling2D(_KerasLayer, Layer):
    """A window reduction over height and width; ``strides`` defaults to ``pool_size``."""

    default_name = ""

    def __init__(self, pool_size, strides=None, padding="valid", data_format=None, name=None, trainable=True, **kwargs):
        what = f"tf.keras.layers.{type(self).__name__}"
        shape_args = layer_args.base_options(what, kwargs)
        data_format = standardize_data_format(data_format, what)
        self.pool_size = layer_args.int_tuple(pool_size, 2, "pool_size", what)
        self.strides = self.pool_size if strides is None else layer_args.int_tuple(strides, 2, "strides", what)
        layer_args.padding_name(padding, what)
        self.padding = padding  # as given ('SAME' too): Keras' pooling config keeps it so
        super().__init__(
            name=name if name is not None else unique_name(self.default_name), trainable=trainable, **shape_args
        )
        self.data_format = data_format

    def call(self, x):
        what = f"tf.keras.layers.{type(self).__name__} '{self.name}'"
        layer_args.check_rank(x.shape, 4, layout(2, self.data_format, names=True), what)
        data_format = tf_data_format(2, self.data_format)
        return self._pool(x, self.pool_size, self.strides, self.padding.upper(), data_format)


class MaxPooling2D(_Pooling2D):
    """``tf.keras.layers.MaxPooling2D(pool_size=(2, 2), strides=None, padding='valid')``: the maximum
    over each window (a tie's gradient goes to one entry, as in TensorFlow).

    >>> import gradkit.tf as tf
    >>> tf.keras.layers.MaxPooling2D()(tf.ones([1, 5, 5, 3])).shape
    (1, 2, 2, 3)
    """

    default_name = "max_pooling2d"
    _pool = staticmethod(_pooling.max_pool2d)

    def __init__(self, pool_size=(2, 2), strides=None, padding="valid", data_format=None, name=None, **kwargs):
        super().__init__(pool_size, strides, padding, data_format, name, **kwargs)


class AveragePooling2D(_Pooling2D):
    """``tf.keras.layers.AveragePooling2D(pool_size, strides=None, padding='valid')``: the mean over
    each window's entries inside the input (with ``'same'`` padding the padded entries do not
    count, as in TensorFlow).

    >>> import gradkit.tf as tf
    >>> tf.keras.layers.AveragePooling2D(2, padding="same")(tf.ones([1, 5, 5, 3])).shape
    (1, 3, 3, 3)
    """

    default_name = "average_pooling2d"
    _pool = staticmethod(_pooling.avg_pool2d)


class GlobalAveragePooling2D(_KerasLayer, Layer):
    """``tf.keras.layers.GlobalAveragePooling2D(keepdims=False)``: the mean over height and width,
    ``(batch, channels)`` out (``(batch, 1, 1, channels)`` with ``keepdims=True``).

    >>> import gradkit.tf as tf
    >>> tf.keras.layers.GlobalAveragePooling2D()(tf.ones([2, 4, 4, 3])).shape
    (2, 3)
    """

    def __init__(self, data_format=None, keepdims=False, name=None, trainable=True, **kwargs):
        what = "tf.keras.layers.GlobalAveragePooling2D"
        shape_args = layer_args.base_options(what, kwargs)
        data_format = standardize_data_format(data_format, what)
        super().__init__(
            name=name if name is not None else unique_name("global_average_pooling2d"),
            trainable=trainable,
            **shape_args,
        )
        self.data_format = data_format
        self.keepdims = bool(keepdims)

    def call(self, x):
        what = f"tf.keras.layers.GlobalAveragePooling2D '{self.name}'"
        layer_args.check_rank(x.shape, 4, layout(2, self.data_format, names=True), what)
        return keras_mean(x, axis=spatial_axes(4, self.data_format), keepdims=self.keepdims)


def keras_mean(x, axis, keepdims):
    """Keras' ``ops.mean``: integers and booleans are averaged in floatx (float32), not truncated."""
    if np.dtype(x.dtype).kind in "biu":
        x = _array.cast(x, np.float32)
    return _math.reduce_mean(x, axis=axis, keepdims=keepdims)


MaxPool2D = MaxPooling2D
AvgPool2D = AveragePooling2D
