"""``tf.keras.layers.SpectralNormalization``: Keras 3's wrapper that divides a layer's kernel by
its largest singular value, estimated by power iteration.

``SpectralNormalization(layer, power_iterations=1)`` wraps a layer with a ``kernel`` (Dense,
Conv2D, ...) or ``embeddings`` (Embedding). It tracks that weight as its own (listed first in
its ``weights``, as Keras lists it, and saved under the wrapper too) and adds a non-trainable
``vector_u`` of shape ``(1, kernel.shape[-1])``. A call with ``training=True`` runs
``power_iterations`` steps of power iteration on the kernel reshaped to
``(-1, kernel.shape[-1])``, assigns the new ``vector_u`` and the kernel divided by the estimated
singular value ``sigma = v W u^T`` (an all-zero kernel is left as it is), then calls the layer;
without ``training`` the layer runs on the kernel as it is. The output is cast to the input's
dtype, as Keras casts it (so an Embedding's, looked up by integer ids, comes out as integers).

Gradients: the kernel is assigned inside the call, and gradkit differentiates through that
assignment. The gradient with respect to the kernel is the derivative of the loss of
``W / sigma(W)`` with respect to ``W`` as it was before the call, with the power iteration's
``u`` and ``v`` held constant (Miyato et al.'s spectral normalization). TensorFlow's tape instead
treats the assigned value as a new start and returns the derivative with respect to
``W / sigma``, the normalized kernel.

>>> import gradkit.tf as tf
>>> layer = tf.keras.layers.SpectralNormalization(tf.keras.layers.Dense(2, name="dense"), name="sn")
>>> _ = layer(tf.ones([1, 3]))
>>> [w.path for w in layer.weights]
['sn/dense/kernel', 'sn/vector_u', 'sn/dense/bias']
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from gradkit import _errors
from gradkit.nn.layer import unique_name

from .._convert import lift, wrap
from .._math import _tf_minimum
from . import initializers
from .input_spec import InputSpec
from .layer_wrapper import Wrapper

_EPSILON = 1e-7  # Keras' backend.epsilon(), the floor its ops.normalize puts on a norm


def _l2_normalize(x):
    """Keras' ``ops.normalize(x, axis=None)``: ``x * min(rsqrt(sum(x**2)), 1/epsilon)``."""
    inverse_norm = jax.lax.rsqrt(jnp.sum(jnp.square(x)))
    return x * _tf_minimum(inverse_norm, jnp.asarray(1.0 / _EPSILON, x.dtype))


def _normalized_weights(kernel, vector_u, power_iterations):
    """The new ``vector_u`` and the kernel divided by its estimated largest singular value (both
    unchanged for an all-zero kernel, as Keras leaves it)."""
    weights = kernel.reshape(-1, kernel.shape[-1])
    u = vector_u
    for _ in range(power_iterations):
        v = _l2_normalize(u @ weights.T)
        u = _l2_normalize(v @ weights)
    u, v = jax.lax.stop_gradient(u), jax.lax.stop_gradient(v)
    sigma = (v @ weights) @ u.T
    all_zero = jnp.all(kernel == 0)
    # An all-zero kernel keeps its value; dividing by a safe 1 there keeps its gradient finite.
    normalized = kernel / jnp.where(all_zero, jnp.ones_like(sigma), sigma).reshape(())
    return (
        jnp.where(all_zero, vector_u, u).astype(vector_u.dtype),
        jnp.where(all_zero, kernel, normalized).astype(kernel.dtype),
    )


_normalized_weights_op = lift(_normalized_weights)


class SpectralNormalization(Wrapper):
    """``tf.keras.layers.SpectralNormalization(layer, power_iterations=1, **kwargs)``: see the
    module docstring."""

    def __init__(self, layer, power_iterations=1, **kwargs):
        if kwargs.get("name") is None:
            kwargs["name"] = unique_name("spectral_normalization")
        super().__init__(layer, **kwargs)
        if isinstance(power_iterations, bool) or not isinstance(power_iterations, int) or power_iterations <= 0:
            raise _errors.GradkitValueError(
                f"tf.keras.layers.SpectralNormalization takes power_iterations as an integer greater than zero, as "
                f"Keras does, but got power_iterations={power_iterations!r}."
            )
        self.power_iterations = power_iterations

    def build(self, input_shape) -> None:
        super().build(input_shape)
        self.input_spec = InputSpec(min_ndim=1, axes={-1: input_shape[-1]})
        kernel = getattr(self.layer, "kernel", None)
        if kernel is None:
            kernel = getattr(self.layer, "embeddings", None)
        if kernel is None:
            raise _errors.GradkitValueError(
                f"tf.keras.layers.SpectralNormalization '{self.name}' normalizes the kernel of the layer it wraps, "
                f"but {type(self.layer).__name__} '{self.layer.name}' has neither a 'kernel' nor an 'embeddings' "
                "weight (Keras refuses it too). Wrap a layer with a kernel, such as Dense, Conv2D or Embedding."
            )
        self.kernel = kernel  # one of this layer's own weights, as Keras tracks it
        self.kernel_shape = tuple(kernel.shape)
        self.vector_u = self.add_weight(
            shape=(1, self.kernel_shape[-1]),
            initializer=initializers.TruncatedNormal(stddev=0.02),
            trainable=False,
            name="vector_u",
            dtype=kernel.dtype,
        )

    def call(self, inputs, training=False):
        if training:
            vector_u, kernel = _normalized_weights_op(
                self.kernel, self.vector_u, power_iterations=self.power_iterations
            )
            self.vector_u.assign(wrap(vector_u))
            self.kernel.assign(wrap(kernel))
        outputs = wrap(self.layer(inputs))
        return outputs if outputs.dtype == inputs.dtype else outputs.astype(inputs.dtype)

    def normalized_weights(self):
        """Keras' method: the new ``vector_u`` and the normalized kernel, without assigning them."""
        vector_u, kernel = _normalized_weights_op(self.kernel, self.vector_u, power_iterations=self.power_iterations)
        return wrap(vector_u), wrap(kernel)

    def compute_output_shape(self, input_shape):
        return self.layer.compute_output_shape(input_shape)

    def get_config(self) -> dict:
        return {**super().get_config(), "power_iterations": self.power_iterations}
