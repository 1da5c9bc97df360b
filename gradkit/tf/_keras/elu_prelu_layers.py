"""``tf.keras.layers.ELU``, ``PReLU`` and ``ThresholdedReLU`` (the last from Keras' legacy layers,
which ``tf.keras.layers`` still exports), each one recorded op.

As in TensorFlow, ``ELU`` takes the linear piece at 0 for its second derivative (TensorFlow's
``EluGradGrad``), and ``ELU(alpha)`` with ``alpha != 1`` scales the exponential piece, 0
included, as Keras' ``tf.where(x > 0, elu(x), alpha * elu(x))`` does.

>>> import gradkit.tf as tf
>>> x = tf.constant([[-1.0, 0.5, 2.0]])
>>> tf.keras.layers.ThresholdedReLU(theta=1.0)(x + 1.0).numpy().tolist()
[[0.0, 1.5, 3.0]]
>>> layer = tf.keras.layers.PReLU(alpha_initializer=tf.keras.initializers.Constant(0.25))
>>> layer(x).numpy().tolist(), tuple(layer.alpha.shape)
([[-0.25, 0.5, 2.0]], (3,))
"""

from __future__ import annotations

import numbers

import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from .. import _nn
from .._convert import call, convert
from . import layer_config, layer_regularization
from .base_layer import Layer
from .layer_args import check_initializers
from .layer_names import KerasNamedLayer, default_name


def _keras_elu(x, alpha):
    # Keras on TensorFlow: tf.nn.elu(x), its exponential piece scaled where x <= 0.
    out = _nn._elu(x)
    return out if alpha == 1 else jnp.where(x > 0, out, alpha * out)


def _prelu(x, alpha):
    # Keras' relu(x) - alpha * relu(-x); TensorFlow's relu has gradient 0 at 0.
    alpha = alpha[None]  # alpha has no batch axis
    return jnp.where(x > 0, x, jnp.zeros_like(x)) - alpha * jnp.where(-x > 0, -x, jnp.zeros_like(x))


def _thresholded_relu(x, theta):
    return x * (x > theta).astype(x.dtype)


def _float_inputs(layer, inputs, kernel: str):
    """``inputs`` converted, refused when integer: TensorFlow's ``kernel`` takes floats against
    the layer's float32 parameter, so Keras on TensorFlow raises there (ReLU and LeakyReLU take
    integers)."""
    inputs = convert(inputs)
    if not jnp.issubdtype(inputs.dtype, jnp.inexact):
        raise _errors.GradkitInvalidArgumentError(
            f"{type(layer).__name__} '{layer.name}' got {np.dtype(inputs.dtype).name} inputs, which TensorFlow's "
            f"{kernel} kernel does not take (Keras raises InvalidArgumentError). Cast them first: "
            "tf.cast(x, tf.float32)."
        )
    return inputs


class ELU(KerasNamedLayer, Layer):
    """``ELU(alpha=1.0)``: ``x`` for ``x > 0``, ``alpha * (exp(x) - 1)`` otherwise."""

    def __init__(self, alpha=1.0, **kwargs):
        super().__init__(**kwargs)
        self.alpha = alpha

    def call(self, inputs):
        return call(_keras_elu, _float_inputs(self, inputs, "Elu"), alpha=float(self.alpha))

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)


class PReLU(Layer):
    """``PReLU(alpha_initializer='Zeros', alpha_regularizer=None, alpha_constraint=None,
    shared_axes=None)``: ``x`` for ``x > 0``, ``alpha * x`` otherwise, with a learned ``alpha``
    of the input's shape without the batch axis (size 1 along each of ``shared_axes``)."""

    def __init__(
        self, alpha_initializer="Zeros", alpha_regularizer=None, alpha_constraint=None, shared_axes=None, **kwargs
    ):
        check_initializers("tf.keras.layers.PReLU", alpha_initializer=alpha_initializer)
        kwargs["name"] = default_name(self, kwargs.get("name"))
        super().__init__(**kwargs)
        self.alpha_initializer = alpha_initializer
        layer_regularization.keep_options(self, alpha_regularizer=alpha_regularizer, alpha_constraint=alpha_constraint)
        if shared_axes is None:
            self.shared_axes = None
        elif not isinstance(shared_axes, (list, tuple)):
            self.shared_axes = [shared_axes]
        else:
            self.shared_axes = list(shared_axes)
        self.alpha = None

    def build(self, input_shape):
        shape = list(input_shape[1:])
        for axis in self.shared_axes or ():
            if not isinstance(axis, numbers.Integral) or not 1 <= axis <= len(shape):
                raise _errors.GradkitValueError(
                    f"PReLU '{self.name}': shared_axes={self.shared_axes!r} must name axes 1 ... {len(shape)} of an "
                    f"input of shape {tuple(input_shape)} (the batch axis 0 is never shared)."
                )
            shape[axis - 1] = 1
        if any(d is None for d in shape):
            raise _errors.GradkitValueError(
                f"PReLU '{self.name}' needs every non-batch size of its input to make alpha, but got "
                f"{tuple(input_shape)}; share the unknown axes with shared_axes=."
            )
        self.alpha = self.add_weight(shape=shape, name="alpha", initializer=self.alpha_initializer)
        layer_regularization.attach_to_weights(self, "alpha")

    def call(self, inputs):
        return call(_prelu, _float_inputs(self, inputs, "Mul"), self.alpha)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)


class ThresholdedReLU(KerasNamedLayer, Layer):
    """``ThresholdedReLU(theta=1.0)``: ``x`` where ``x > theta``, else 0 (Keras' legacy layer)."""

    def __init__(self, theta=1.0, **kwargs):
        super().__init__(**kwargs)
        if theta is None:
            raise _errors.GradkitValueError("ThresholdedReLU takes theta as a float >= 0, as Keras does, but got None.")
        if not isinstance(theta, numbers.Real) or isinstance(theta, bool):
            raise _errors.GradkitTypeError(  # Keras' comparison with 0 raises a TypeError
                f"ThresholdedReLU takes theta as a float >= 0, as Keras does, but got theta={theta!r}."
            )
        if theta < 0:
            raise _errors.GradkitValueError(
                f"ThresholdedReLU takes theta as a float >= 0, as Keras does, but got theta={theta!r}."
            )
        self.theta = float(np.float32(theta))  # Keras holds it as a float32 tensor (its config too)

    def call(self, inputs):
        return call(_thresholded_relu, _float_inputs(self, inputs, "Greater"), theta=self.theta)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)


layer_config.BUILTIN.update(
    {
        "ELU": ("alpha",),
        "PReLU": ("alpha_initializer", "alpha_regularizer", "alpha_constraint", "shared_axes"),
        "ThresholdedReLU": ("theta",),
    }
)
