"""``tf.keras.layers.LayerNormalization``: each example normalised over its own feature axes."""

from __future__ import annotations

import numpy as np

import gradkit.numpy as gnp
from gradkit import _errors
from gradkit.nn.layer import Layer, unique_name

from . import layer_args, layer_regularization
from .layers import _KerasLayer, tf_moments


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


class LayerNormalization(_KerasLayer, Layer):
    """``tf.keras.layers.LayerNormalization(axis=-1, epsilon=1e-3, center=True, scale=True,
    beta_initializer='zeros', gamma_initializer='ones')``.

    ``(x - mean) / sqrt(var + epsilon) * gamma + beta``, with the mean and (biased) variance of
    each example over ``axis`` (an int or a list of ints). ``gamma`` and ``beta`` have the shape
    of the input's axes in ``sorted(axis)`` order, as in Keras; ``center=False`` leaves out
    ``beta`` and ``scale=False`` leaves out ``gamma`` (each then None).

    >>> import gradkit.tf as tf
    >>> layer = tf.keras.layers.LayerNormalization(name="layer_normalization")
    >>> [round(float(v), 3) for v in layer(tf.constant([[1.0, 3.0]]))[0]], layer.gamma.name
    ([-1.0, 1.0], 'layer_normalization/gamma:0')
    """

    def __init__(
        self,
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
        rms_scaling=False,
        name=None,
        trainable=True,
        **kwargs,
    ):
        what = "tf.keras.layers.LayerNormalization"
        layer_args.refuse_unimplemented(
            what,
            "axis, epsilon, center, scale, the initializers, regularizers and constraints, name and trainable "
            "(rms_scaling is deprecated in Keras)",
            rms_scaling=rms_scaling,
        )
        shape_args = layer_args.base_options(what, kwargs)
        layer_args.check_initializers(what, beta_initializer=beta_initializer, gamma_initializer=gamma_initializer)
        axes = list(axis) if isinstance(axis, (list, tuple)) else axis
        if not (_is_int(axes) or (isinstance(axes, list) and axes and all(_is_int(a) for a in axes))):
            raise _errors.GradkitTypeError(
                f"{what} takes an int or a list of ints as axis, as Keras does, but got axis={axis!r}. "
                "Pass e.g. axis=-1 (the last axis) or axis=[1, 2]."
            )
        super().__init__(
            name=name if name is not None else unique_name("layer_normalization"), trainable=trainable, **shape_args
        )
        layer_regularization.keep_options(
            self,
            beta_regularizer=beta_regularizer,
            gamma_regularizer=gamma_regularizer,
            beta_constraint=beta_constraint,
            gamma_constraint=gamma_constraint,
        )
        self.axis = axes
        self.epsilon = float(epsilon)
        self.center, self.scale = bool(center), bool(scale)
        self.beta_initializer, self.gamma_initializer = beta_initializer, gamma_initializer
        self.gamma = self.beta = None  # (in this order: the variables are listed gamma, beta, as in Keras)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def build(self, input_shape) -> None:
        rank = len(input_shape)
        axes = sorted(self.axis) if isinstance(self.axis, list) else [self.axis]
        if any(not -rank <= a < rank for a in axes) or len({a % rank for a in axes}) != len(axes):
            raise _errors.GradkitIndexError(
                f"tf.keras.layers.LayerNormalization '{self.name}' normalises over axis={self.axis}, but its input "
                f"has shape {tuple(input_shape)} (rank {rank}). Pass distinct axes in [-{rank}, {rank}), e.g. "
                "axis=-1 for the last (feature) axis."
            )
        self.axis = axes  # Keras keeps the sorted list
        shape = tuple(input_shape[a] for a in axes)
        if self.scale:
            self.gamma = self.add_weight("gamma", shape, self.gamma_initializer)
        if self.center:
            self.beta = self.add_weight("beta", shape, self.beta_initializer)
        layer_regularization.attach_to_weights(self, "gamma", "beta")

    def call(self, x):
        what = f"tf.keras.layers.LayerNormalization '{self.name}'"
        x = layer_args.float_input(x)
        rank = len(x.shape)
        built_for = tuple(v.shape for v in (self.gamma, self.beta) if v is not None)
        if (
            rank <= max(self.axis)
            or rank < -min(self.axis)
            or any(s != tuple(x.shape[a] for a in self.axis) for s in built_for)
        ):
            raise _errors.GradkitValueError(
                f"{what} was built for inputs whose axes {self.axis} have sizes {built_for[0] if built_for else ()}, "
                f"but got shape {tuple(x.shape)}. Use a new layer for the new size."
            )
        axes = tuple(a % rank for a in self.axis)
        # gamma and beta broadcast as Keras reshapes them: their entries in the normalised axes'
        # positions (a reshape, so axis=[1, -1] reads them in sorted(axis) order).
        full = tuple(x.shape[a] if a in axes else 1 for a in range(rank))
        mean, variance = tf_moments(x, axes)
        # Keras' arithmetic: x * inv + (beta - mean * inv), inv = rsqrt(var + eps) * gamma.
        inv = (variance + self.epsilon) ** -0.5
        if self.scale:
            inv = inv * gnp.reshape(self.gamma.value, full)
        shift = -mean * inv
        if self.center:
            shift = shift + gnp.reshape(self.beta.value, full)
        return x * inv + shift
