"""``tf.keras.layers.GroupNormalization``: Keras 3's group normalization, one recorded op.

The channels along ``axis`` are split into ``groups``; each example's group is normalized by
its own mean and variance (over the group's channels and every other non-batch axis), then
scaled by ``gamma`` and shifted by ``beta`` per channel, as Keras computes it
(``x * inv + (beta - mean * inv)`` with ``inv = gamma / sqrt(variance + epsilon)``).
``groups=-1`` normalizes each channel alone (instance normalization).

>>> import gradkit.tf as tf
>>> layer = tf.keras.layers.GroupNormalization(groups=2, name="group_normalization")
>>> y = layer(tf.reshape(tf.range(8.0), [1, 2, 4]))
>>> [w.name for w in layer.weights], y.shape
(['group_normalization/gamma:0', 'group_normalization/beta:0'], (1, 2, 4))
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from gradkit import _errors

from .._convert import call
from .._grad_kernels import with_tf_gradient_kernel
from . import layer_config, layer_regularization
from .base_layer import Layer
from .layer_args import check_initializers
from .layer_names import default_name

_rsqrt = with_tf_gradient_kernel(jax.lax.rsqrt)


def _group_normalize(x, gamma, beta, groups, axis, epsilon):
    ndim = x.ndim
    axis %= ndim
    grouped_shape = (*x.shape[:axis], groups, x.shape[axis] // groups, *x.shape[axis + 1 :])
    grouped = x.reshape(grouped_shape)
    reduce = tuple(a for a in range(1, ndim + 1) if a != axis)
    mean = jnp.mean(grouped, axis=reduce, keepdims=True)
    # tf.nn.moments: the variance around the mean as a constant (the same derivative: the
    # deviations sum to zero).
    variance = jnp.mean(jnp.square(grouped - jax.lax.stop_gradient(mean)), axis=reduce, keepdims=True)
    inv = _rsqrt(variance + epsilon)
    per_channel = [1] * (ndim + 1)
    per_channel[axis : axis + 2] = [groups, x.shape[axis] // groups]
    if gamma is not None:
        inv = inv * gamma.reshape(per_channel)
    shift = -mean * inv
    if beta is not None:
        shift = shift + beta.reshape(per_channel)
    return (grouped * inv + shift).reshape(x.shape)


def _normalize_gamma_beta(x, gamma, beta, groups, axis, epsilon):
    return _group_normalize(x, gamma, beta, groups, axis, epsilon)


def _normalize_gamma(x, gamma, groups, axis, epsilon):
    return _group_normalize(x, gamma, None, groups, axis, epsilon)


def _normalize_beta(x, beta, groups, axis, epsilon):
    return _group_normalize(x, None, beta, groups, axis, epsilon)


def _normalize_only(x, groups, axis, epsilon):
    return _group_normalize(x, None, None, groups, axis, epsilon)


class GroupNormalization(Layer):
    """``GroupNormalization(groups=32, axis=-1, epsilon=1e-3, center=True, scale=True,
    beta_initializer='zeros', gamma_initializer='ones', beta_regularizer=None,
    gamma_regularizer=None, beta_constraint=None, gamma_constraint=None)``."""

    def __init__(
        self,
        groups=32,
        axis=-1,
        epsilon=1e-3,
        center=True,
        scale=True,
        beta_initializer="zeros",
        gamma_initializer="ones",
        beta_regularizer=None,
        gamma_regularizer=None,
        beta_constraint=None,
        gamma_constraint=None,
        **kwargs,
    ):
        what = "tf.keras.layers.GroupNormalization"
        if not isinstance(groups, int) or (groups <= 0 and groups != -1):
            raise _errors.GradkitValueError(
                f"{what} takes groups as a positive int (or -1 for instance normalization), as Keras does, but got "
                f"groups={groups!r}."
            )
        check_initializers(what, beta_initializer=beta_initializer, gamma_initializer=gamma_initializer)
        kwargs["name"] = default_name(self, kwargs.get("name"))
        super().__init__(**kwargs)
        self.groups = groups
        self.axis = axis
        self.epsilon = epsilon
        self.center = center
        self.scale = scale
        self.beta_initializer = beta_initializer
        self.gamma_initializer = gamma_initializer
        layer_regularization.keep_options(
            self,
            beta_regularizer=beta_regularizer,
            gamma_regularizer=gamma_regularizer,
            beta_constraint=beta_constraint,
            gamma_constraint=gamma_constraint,
        )
        self.gamma = self.beta = None

    def build(self, input_shape):
        what = f"GroupNormalization '{self.name}'"
        shape = tuple(input_shape)
        if not -len(shape) <= self.axis < len(shape):
            raise _errors.GradkitValueError(f"{what}: axis {self.axis} is out of bounds for input shape {shape}.")
        dim = shape[self.axis]
        if dim is None:
            raise _errors.GradkitValueError(
                f"{what}: axis {self.axis} of the input must have a known size, but the input has shape {shape}."
            )
        if self.groups == -1:
            self.groups = dim
        if dim < self.groups or dim % self.groups:
            raise _errors.GradkitValueError(
                f"{what}: {dim} channels (axis {self.axis} of shape {shape}) cannot be split into {self.groups} "
                "groups of equal size, as Keras requires. Pass groups dividing the number of channels."
            )
        if self.scale:
            self.gamma = self.add_weight(shape=(dim,), name="gamma", initializer=self.gamma_initializer)
        if self.center:
            self.beta = self.add_weight(shape=(dim,), name="beta", initializer=self.beta_initializer)
        layer_regularization.attach_to_weights(self, "gamma", "beta")

    def call(self, inputs):
        static = {"groups": int(self.groups), "axis": int(self.axis), "epsilon": float(self.epsilon)}
        weight = self.gamma if self.gamma is not None else self.beta
        if weight is not None and tuple(inputs.shape)[self.axis] != weight.shape[0]:
            raise _errors.GradkitValueError(
                f"GroupNormalization '{self.name}' was built for {weight.shape[0]} channels, but its input's shape "
                f"{tuple(inputs.shape)} has {inputs.shape[self.axis]} on axis {self.axis}, as Keras refuses."
            )
        if self.gamma is not None and self.beta is not None:
            return call(_normalize_gamma_beta, inputs, self.gamma, self.beta, **static)
        if self.gamma is not None:
            return call(_normalize_gamma, inputs, self.gamma, **static)
        if self.beta is not None:
            return call(_normalize_beta, inputs, self.beta, **static)
        return call(_normalize_only, inputs, **static)

    def compute_output_shape(self, input_shape):
        if not -len(input_shape) <= self.axis < len(input_shape):
            raise _errors.GradkitValueError(
                f"GroupNormalization '{self.name}': axis {self.axis} is out of bounds for input shape "
                f"{tuple(input_shape)}."
            )
        return tuple(input_shape)


layer_config.BUILTIN.update(
    {
        "GroupNormalization": (
            "groups",
            "axis",
            "epsilon",
            "center",
            "scale",
            "beta_initializer",
            "gamma_initializer",
            "beta_regularizer",
            "gamma_regularizer",
            "beta_constraint",
            "gamma_constraint",
        )
    }
)
