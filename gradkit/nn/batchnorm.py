"""``BatchNorm``: normalise with batch statistics (training) or moving statistics (inference)."""

from __future__ import annotations

import gradkit.numpy as gnp

from .layer import Layer


class BatchNorm(Layer):
    """Batch normalisation over every axis but the last (Keras' ``BatchNormalization``).

    In training mode the output uses the batch mean and (biased) variance, and
    ``moving_mean``/``moving_variance`` are updated by Variable assignment
    (``moving = moving * momentum + batch * (1 - momentum)``), so under a tape or
    ``gk.functionalize`` the update is an exact state-threading step.

    >>> import gradkit as gk, jax.numpy as jnp
    >>> bn = BatchNorm()
    >>> y = bn(jnp.array([[1.0], [3.0]]), training=True)
    >>> [round(float(v), 3) for v in y[:, 0]], round(float(bn.moving_mean[0]), 4)
    ([-1.0, 1.0], 0.02)
    """

    def __init__(self, momentum: float = 0.99, epsilon: float = 1e-3, name: str | None = None):
        super().__init__(name)
        self.momentum = float(momentum)
        self.epsilon = float(epsilon)

    def build(self, input_shape) -> None:
        n = (input_shape[-1],)
        self.gamma = self.add_weight("gamma", n, "ones")
        self.beta = self.add_weight("beta", n, "zeros")
        self.moving_mean = self.add_weight("moving_mean", n, "zeros", trainable=False)
        self.moving_variance = self.add_weight("moving_variance", n, "ones", trainable=False)

    def call(self, x, training: bool = False):
        axes = tuple(range(len(x.shape) - 1))
        if training:
            mean = gnp.mean(x, axis=axes)
            var = gnp.var(x, axis=axes)
            m = self.momentum
            self.moving_mean.assign(self.moving_mean * m + mean * (1.0 - m))
            self.moving_variance.assign(self.moving_variance * m + var * (1.0 - m))
        else:
            mean, var = self.moving_mean, self.moving_variance
        return (x - mean) * (self.gamma / gnp.sqrt(var + self.epsilon)) + self.beta
