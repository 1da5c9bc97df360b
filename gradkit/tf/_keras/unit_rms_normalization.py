"""``tf.keras.layers.UnitNormalization`` and ``RMSNormalization``: Keras 3's, one recorded op each.

``UnitNormalization(axis=-1)`` divides each example by its L2 norm along ``axis``
(``x * min(rsqrt(sum(x**2)), 1e12)``, Keras' ``ops.normalize``); ``RMSNormalization(axis=-1,
epsilon=1e-6)`` divides by the root mean square, ``x * rsqrt(mean(x**2) + epsilon) * scale``,
with a learned ``scale`` of the normalized axes' sizes.

>>> import gradkit.tf as tf
>>> tf.keras.layers.UnitNormalization()(tf.constant([[3.0, 4.0]])).numpy().tolist()
[[0.6000000238418579, 0.800000011920929]]
>>> layer = tf.keras.layers.RMSNormalization(name="rms_normalization")
>>> _ = layer(tf.ones([2, 3])); [w.name for w in layer.weights]
['rms_normalization/scale:0']
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from gradkit import _errors

from .. import _math
from .._convert import call
from .._grad_kernels import with_tf_gradient_kernel
from . import layer_config
from .base_layer import Layer
from .layer_names import KerasNamedLayer, default_name

_rsqrt = with_tf_gradient_kernel(jax.lax.rsqrt)


def _unit_normalize(x, axis, epsilon):
    if x.ndim == 0:
        x = x[None]
    inverse_norm = _rsqrt(jnp.sum(jnp.square(x), axis=axis, keepdims=True))
    return x * _math._tf_minimum(inverse_norm, jnp.asarray(1.0 / epsilon, x.dtype))


def _rms_normalize(x, scale, axis, epsilon):
    inverse_rms = _rsqrt(jnp.mean(jnp.square(x), axis=axis, keepdims=True) + epsilon)
    scale = scale.reshape((1,) * (x.ndim - scale.ndim) + scale.shape)  # numpy broadcasting, as Keras multiplies
    return x * inverse_rms * scale


def _axes(axis) -> tuple:
    return tuple(axis) if isinstance(axis, (list, tuple)) else (axis,)


def _check_axes(layer, input_shape):
    for axis in _axes(layer.axis):
        if not -len(input_shape) <= axis < len(input_shape):
            raise _errors.GradkitIndexError(
                f"{type(layer).__name__} '{layer.name}': axis {layer.axis} is out of bounds for input shape "
                f"{tuple(input_shape)}, as Keras refuses."
            )


class UnitNormalization(KerasNamedLayer, Layer):
    """``UnitNormalization(axis=-1)``: each example divided by its L2 norm along ``axis`` (an
    int or a list of ints)."""

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        if isinstance(axis, (list, tuple)):
            self.axis = list(axis)
        elif isinstance(axis, int):
            self.axis = axis
        else:
            raise _errors.GradkitTypeError(
                f"UnitNormalization takes axis as an int or a list of ints, as Keras does, but got axis={axis!r}."
            )

    def call(self, inputs):
        _check_axes(self, tuple(inputs.shape))
        return call(_unit_normalize, inputs, axis=_axes(self.axis), epsilon=1e-12)

    def compute_output_shape(self, input_shape):
        _check_axes(self, tuple(input_shape))
        return tuple(input_shape)


class RMSNormalization(Layer):
    """``RMSNormalization(axis=-1, epsilon=1e-6)``: ``x * rsqrt(mean(x**2, axis) + epsilon) * scale``."""

    def __init__(self, axis=-1, epsilon=1e-6, **kwargs):
        kwargs["name"] = default_name(self, kwargs.get("name"))
        super().__init__(**kwargs)
        self.axis = axis
        self.epsilon = epsilon
        self.scale = None

    def build(self, input_shape):
        _check_axes(self, tuple(input_shape))
        # As Keras: once built, axis is a sorted list (the config then says so too).
        self.axis = sorted(self.axis) if isinstance(self.axis, (list, tuple)) else [self.axis]
        shape = tuple(input_shape[a] for a in self.axis)
        self.scale = self.add_weight(name="scale", shape=shape, initializer="ones")

    def call(self, inputs):
        return call(_rms_normalize, inputs, self.scale, axis=_axes(self.axis), epsilon=float(self.epsilon))

    def compute_output_shape(self, input_shape):
        _check_axes(self, tuple(input_shape))
        return tuple(input_shape)


layer_config.BUILTIN.update({"UnitNormalization": ("axis",), "RMSNormalization": ("axis", "epsilon")})
