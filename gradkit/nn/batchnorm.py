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
        self._needs_features(input_shape)
        n = (input_shape[-1],)
        self.gamma = self.add_weight("gamma", n, "ones")
        self.beta = self.add_weight("beta", n, "zeros")
        self.moving_mean = self.add_weight("moving_mean", n, "zeros", trainable=False)
        self.moving_variance = self.add_weight("moving_variance", n, "ones", trainable=False)

    def call(self, x, training: bool = False):
        axes = tuple(range(len(x.shape) - 1))
        # Same-rank operands throughout (works under jax_numpy_rank_promotion='raise').
        full = (1,) * len(axes) + (x.shape[-1],)
        if training:
            mean = gnp.mean(x, axis=axes, keepdims=True)
            var = gnp.var(x, axis=axes, keepdims=True)
            m = self.momentum
            self.moving_mean.assign(self.moving_mean * m + gnp.reshape(mean, (-1,)) * (1.0 - m))
            self.moving_variance.assign(self.moving_variance * m + gnp.reshape(var, (-1,)) * (1.0 - m))
        else:
            mean = gnp.reshape(self.moving_mean.value, full)
            var = gnp.reshape(self.moving_variance.value, full)
        scale = gnp.reshape(self.gamma.value, full) / gnp.sqrt(var + self.epsilon)
        return (x - mean) * scale + gnp.reshape(self.beta.value, full)
