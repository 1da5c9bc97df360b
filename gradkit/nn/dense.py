"""``Dense``: ``activation(x @ kernel + bias)``."""

from __future__ import annotations

import gradkit.numpy as gnp

from . import activations
from .layer import Layer


class Dense(Layer):
    """A fully connected layer, built on its first call (kernel ``(in, units)``, bias ``(units,)``).

    >>> import gradkit as gk, jax.numpy as jnp
    >>> layer = Dense(3, activation="relu")
    >>> x = jnp.ones((2, 4))
    >>> with gk.GradientTape() as tape:
    ...     loss = gk.numpy.sum(layer(x) ** 2)
    >>> [tuple(g.shape) for g in tape.gradient(loss, layer.trainable_variables)]
    [(4, 3), (3,)]
    """

    def __init__(
        self,
        units: int,
        activation=None,
        use_bias: bool = True,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        name: str | None = None,
    ):
        super().__init__(name)
        self.units = int(units)
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer

    def build(self, input_shape) -> None:
        self._needs_features(input_shape)
        self.kernel = self.add_weight("kernel", (input_shape[-1], self.units), self.kernel_initializer)
        if self.use_bias:
            self.bias = self.add_weight("bias", (self.units,), self.bias_initializer)

    def call(self, x):
        y = gnp.matmul(x, self.kernel.value)
        if self.use_bias:
            # Explicit rank: gradkit's strict test mode (jax_numpy_rank_promotion='raise') forbids implicit.
            y = y + gnp.reshape(self.bias.value, (1,) * (len(y.shape) - 1) + (self.units,))
        return self.activation(y)
