"""``tf.keras.layers``' 1-D and 3-D pooling layers and the global poolings: ``MaxPooling1D/3D``,
``AveragePooling1D/3D``, ``GlobalMaxPooling1D/2D/3D``, ``GlobalAveragePooling1D/3D`` and
Keras' aliases (``MaxPool1D``, ``AvgPool3D``, ``GlobalMaxPool2D``, ``GlobalAvgPool1D``, ...).

The window poolings are ``tf.nn``'s (``_pooling.py``: TensorFlow's tie rules, and average
pooling over the entries inside the input), channels_last or channels_first; the global
poolings are ``tf.reduce_max``/``tf.reduce_mean`` over the spatial axes (a tie shares the
maximum's gradient equally, as in TensorFlow), each one recorded op.

>>> import gradkit.tf as tf
>>> tf.keras.layers.MaxPool1D()(tf.reshape(tf.range(6.0), [1, 6, 1]))[0, :, 0].numpy().tolist()
[1.0, 3.0, 5.0]
>>> tf.keras.layers.GlobalMaxPool2D(keepdims=True)(tf.ones([2, 3, 3, 4])).shape
(2, 1, 1, 4)
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from .. import _array, _math, _pooling
from .._convert import call, convert
from . import layer_args, layer_config, pooling_layers
from .base_layer import Layer
from .layer_names import KerasNamedLayer
from .spatial_args import layout, spatial_axes, standardize_data_format, standardize_tuple, tf_data_format

_POOLS = {
    ("max", 1): _pooling.max_pool1d,
    ("max", 3): _pooling.max_pool3d,
    ("average", 1): _pooling.avg_pool1d,
    ("average", 3): _pooling.avg_pool3d,
}


def _pooled_size(size, window, stride, padding):
    """Keras' ``compute_pooling_output_shape`` for one axis."""
    if size is None:
        return None
    if padding == "valid":
        return (size - window) // stride + 1
    return (size - 1) // stride + 1


class _Pooling(KerasNamedLayer, Layer):
    """A window max or mean over ``_n`` spatial axes; ``strides`` defaults to ``pool_size``."""

    _n = 1
    _mode = "max"

    def __init__(self, pool_size, strides=None, padding="valid", data_format=None, name=None, **kwargs):
        what = type(self).__name__
        super().__init__(name=name, **kwargs)
        self.pool_size = standardize_tuple(pool_size, self._n, "pool_size", what)
        strides = pool_size if strides is None else strides
        self.strides = standardize_tuple(strides, self._n, "strides", what, allow_zero=True)
        layer_args.padding_name(padding, what)
        self.padding = padding  # as given ('SAME' too): Keras' config keeps it so
        self.data_format = standardize_data_format(data_format, what)

    def call(self, inputs):
        what = f"{type(self).__name__} '{self.name}'"
        layer_args.check_rank(inputs.shape, self._n + 2, layout(self._n, self.data_format), what)
        pool = _POOLS[self._mode, self._n]
        return pool(
            inputs,
            [int(k) for k in self.pool_size],
            [int(s) for s in self.strides],
            self.padding.upper(),
            data_format=tf_data_format(self._n, self.data_format),
        )

    def compute_output_shape(self, input_shape):
        out = list(input_shape)
        padding = self.padding.lower()
        for i, axis in enumerate(spatial_axes(len(out), self.data_format)):
            out[axis] = _pooled_size(out[axis], self.pool_size[i], self.strides[i], padding)
        if any(d is not None and d <= 0 for d in out):
            raise _errors.GradkitValueError(
                f"{type(self).__name__} '{self.name}': pool_size {self.pool_size} with padding='valid' is larger than "
                f"the input's spatial sizes {tuple(input_shape)}, as Keras refuses. Use a smaller pool_size or "
                "padding='same'."
            )
        return tuple(out)


class MaxPooling1D(_Pooling):
    """``MaxPooling1D(pool_size=2, strides=None, padding='valid', data_format=None)``: the maximum
    over each window of steps (a tie's gradient goes to the first maximal entry, as in TensorFlow)."""

    def __init__(self, pool_size=2, strides=None, padding="valid", data_format=None, name=None, **kwargs):
        super().__init__(pool_size, strides, padding, data_format, name, **kwargs)


class AveragePooling1D(_Pooling):
    """``AveragePooling1D(pool_size, strides=None, padding='valid', data_format=None)``: the mean over
    each window's entries inside the input."""

    _mode = "average"


class MaxPooling3D(_Pooling):
    """``MaxPooling3D(pool_size=(2, 2, 2), strides=None, padding='valid', data_format=None)``: the
    maximum over each 3-D window (a tie's gradient goes to every entry within 1e-5 of the maximum,
    as TensorFlow's MaxPool3DGrad)."""

    _n = 3

    def __init__(self, pool_size=(2, 2, 2), strides=None, padding="valid", data_format=None, name=None, **kwargs):
        super().__init__(pool_size, strides, padding, data_format, name, **kwargs)


class AveragePooling3D(_Pooling):
    """``AveragePooling3D(pool_size, strides=None, padding='valid', data_format=None)``: the mean over
    each 3-D window's entries inside the input."""

    _n = 3
    _mode = "average"


def _masked_mean(x, mask, mask_axis, axis, keepdims):
    # Keras' masked GlobalAveragePooling1D: the sum over the unmasked steps over their count.
    kept = jnp.expand_dims(mask, mask_axis).astype(bool)
    total = jnp.sum(jnp.where(kept, x, jnp.zeros_like(x)), axis=axis, keepdims=keepdims)
    return total / jnp.sum(kept.astype(x.dtype), axis=axis, keepdims=keepdims)


class _GlobalPooling(KerasNamedLayer, Layer):
    """A max or mean over all ``_n`` spatial axes, ``(batch, channels)`` out (size-1 spatial
    axes kept with ``keepdims=True``)."""

    _n = 1
    _reduce = staticmethod(_math.reduce_max)

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(**kwargs)
        self.data_format = standardize_data_format(data_format, type(self).__name__)
        self.keepdims = keepdims

    def _check(self, inputs):
        what = f"{type(self).__name__} '{self.name}'"
        layer_args.check_rank(inputs.shape, self._n + 2, layout(self._n, self.data_format), what)

    def call(self, inputs):
        self._check(inputs)
        axes = list(spatial_axes(self._n + 2, self.data_format))
        return self._reduce(inputs, axis=axes, keepdims=bool(self.keepdims))

    def compute_output_shape(self, input_shape):
        batch, channels = input_shape[0], input_shape[-1 if self.data_format == "channels_last" else 1]
        if not self.keepdims:
            return (batch, channels)
        ones = (1,) * (len(input_shape) - 2)
        return (batch, *ones, channels) if self.data_format == "channels_last" else (batch, channels, *ones)


class GlobalMaxPooling1D(_GlobalPooling):
    """``GlobalMaxPooling1D(data_format=None, keepdims=False)``: the maximum over the steps."""


class GlobalMaxPooling2D(_GlobalPooling):
    """``GlobalMaxPooling2D(data_format=None, keepdims=False)``: the maximum over height and width."""

    _n = 2


class GlobalMaxPooling3D(_GlobalPooling):
    """``GlobalMaxPooling3D(data_format=None, keepdims=False)``: the maximum over the three spatial axes."""

    _n = 3


class GlobalAveragePooling1D(_GlobalPooling):
    """``GlobalAveragePooling1D(data_format=None, keepdims=False)``, called as ``layer(x, mask=None)``:
    the mean over the steps; with a ``(batch, steps)`` mask, over the steps where it is true."""

    _reduce = staticmethod(pooling_layers.keras_mean)

    def compute_mask(self, inputs, mask=None):
        return None  # the steps are averaged away

    def call(self, inputs, mask=None):
        if mask is None:
            return super().call(inputs)
        self._check(inputs)
        steps_axis = 1 if self.data_format == "channels_last" else 2
        mask = convert(mask)
        if tuple(mask.shape) != tuple(inputs.shape[:1]) + tuple(inputs.shape[steps_axis : steps_axis + 1]):
            raise _errors.GradkitValueError(
                f"GlobalAveragePooling1D '{self.name}' takes a mask of shape (batch, steps), "
                f"{(inputs.shape[0], inputs.shape[steps_axis])}, but got {tuple(mask.shape)}."
            )
        mask_axis = 2 if self.data_format == "channels_last" else 1
        if np.dtype(inputs.dtype).kind in "biu":
            inputs = _array.cast(inputs, np.float32)  # as keras_mean: integers averaged in floatx
        return call(_masked_mean, inputs, mask, mask_axis=mask_axis, axis=steps_axis, keepdims=bool(self.keepdims))


class GlobalAveragePooling3D(_GlobalPooling):
    """``GlobalAveragePooling3D(data_format=None, keepdims=False)``: the mean over the three spatial axes."""

    _n = 3
    _reduce = staticmethod(pooling_layers.keras_mean)


MaxPool1D = MaxPooling1D
MaxPool3D = MaxPooling3D
AvgPool1D = AveragePooling1D
AvgPool3D = AveragePooling3D
GlobalMaxPool1D = GlobalMaxPooling1D
GlobalMaxPool2D = GlobalMaxPooling2D
GlobalMaxPool3D = GlobalMaxPooling3D
GlobalAvgPool1D = GlobalAveragePooling1D
GlobalAvgPool3D = GlobalAveragePooling3D
GlobalAvgPool2D = pooling_layers.GlobalAveragePooling2D

_WINDOW = ("pool_size", "padding", "strides", "data_format")
_GLOBAL = ("data_format", "keepdims")
layer_config.BUILTIN.update(
    {
        **dict.fromkeys(("MaxPooling1D", "MaxPooling3D", "AveragePooling1D", "AveragePooling3D"), _WINDOW),
        **dict.fromkeys(
            (
                "GlobalMaxPooling1D",
                "GlobalMaxPooling2D",
                "GlobalMaxPooling3D",
                "GlobalAveragePooling1D",
                "GlobalAveragePooling3D",
            ),
            _GLOBAL,
        ),
    }
)
