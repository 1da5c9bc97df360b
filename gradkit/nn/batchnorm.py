"""``BatchNorm``: normalise with batch statistics (training) or moving statistics (inference)."""

from __future__ import annotations

import jax

import gradkit.numpy as gnp
from gradkit import _errors

from .layer import Layer


class BatchNorm(Layer):
    """Batch normalisation over every axis but ``axis`` (Keras' ``BatchNormalization``).

    In training mode the output uses the batch mean and (biased) variance, and
    ``moving_mean``/``moving_variance`` are updated by Variable assignment
    (``moving = moving * momentum + batch * (1 - momentum)``), so under a tape or
    ``gk.functionalize`` the update is an exact state-threading step. ``center=False``
    leaves out ``beta`` and ``scale=False`` leaves out ``gamma`` (each then None).

    >>> import gradkit as gk, jax.numpy as jnp
    >>> bn = BatchNorm()
    >>> y = bn(jnp.array([[1.0], [3.0]]), training=True)
    >>> [round(float(v), 3) for v in y[:, 0]], round(float(bn.moving_mean[0]), 4)
    ([-1.0, 1.0], 0.02)
    """

    def __init__(
        self,
        momentum: float = 0.99,
        epsilon: float = 1e-3,
        name: str | None = None,
        axis: int = -1,
        center: bool = True,
        scale: bool = True,
        beta_initializer="zeros",
        gamma_initializer="ones",
        moving_mean_initializer="zeros",
        moving_variance_initializer="ones",
    ):
        super().__init__(name)
        self.momentum = float(momentum)
        self.epsilon = float(epsilon)
        self.axis = int(axis)
        self.center = bool(center)
        self.scale = bool(scale)
        self.beta_initializer = beta_initializer
        self.gamma_initializer = gamma_initializer
        self.moving_mean_initializer = moving_mean_initializer
        self.moving_variance_initializer = moving_variance_initializer
        self.gamma = self.beta = None

    def build(self, input_shape) -> None:
        self._needs_features(input_shape)
        if not -len(input_shape) <= self.axis < len(input_shape):
            raise _errors.GradkitIndexError(
                f"{type(self).__name__} '{self.name}' normalises over axis={self.axis}, but its input has "
                f"shape {tuple(input_shape)} (rank {len(input_shape)}). Pass an axis in "
                f"[-{len(input_shape)}, {len(input_shape)}), e.g. axis=-1 for the last (feature) axis."
            )
        self.axis %= len(input_shape)
        self._rank = len(input_shape)  # the axis is counted for this rank: calls must keep it
        n = (input_shape[self.axis],)
        if self.scale:
            self.gamma = self.add_weight("gamma", n, self.gamma_initializer)
        if self.center:
            self.beta = self.add_weight("beta", n, self.beta_initializer)
        self.moving_mean = self.add_weight("moving_mean", n, self.moving_mean_initializer, trainable=False)
        self.moving_variance = self.add_weight("moving_variance", n, self.moving_variance_initializer, trainable=False)

    def call(self, x, training: bool = False, mask=None):
        """``mask`` (the input's shape without its last axis) leaves the entries it marks False
        out of the batch statistics, as Keras' BatchNormalization does with a sequence mask."""
        if len(x.shape) != getattr(self, "_rank", len(x.shape)):
            raise _errors.GradkitValueError(
                f"{type(self).__name__} '{self.name}' was built for inputs of rank {self._rank} (normalising axis "
                f"{self.axis}), but got an input of shape {tuple(x.shape)}. Keep the rank, or use another layer."
            )
        features = getattr(self, "moving_mean", None)
        if features is not None and x.shape[self.axis] != features.shape[0]:
            raise _errors.GradkitValueError(
                f"{type(self).__name__} '{self.name}' was built for {features.shape[0]} features on axis {self.axis}, "
                f"but got an input of shape {tuple(x.shape)} ({x.shape[self.axis]} there). Call it on inputs of that "
                "size, or make another layer for these."
            )
        try:
            training = bool(training)
        except jax.errors.TracerBoolConversionError:
            raise _errors.GradkitTypeError(
                f"{type(self).__name__} '{self.name}' got a traced training flag (an argument of gk.jit): it chooses "
                "Python code, so it must be known when tracing. Pass it as a static argument, "
                "gk.jit(step, static_argnums=...), or close over a Python bool."
            ) from None
        axes = tuple(a for a in range(len(x.shape)) if a != self.axis)
        # Same-rank operands throughout (works under jax_numpy_rank_promotion='raise').
        full = tuple(x.shape[a] if a == self.axis else 1 for a in range(len(x.shape)))
        if training:
            mean, var = self._batch_moments(x, axes) if mask is None else _masked_moments(x, axes, mask)
            m = self.momentum
            self.moving_mean.assign(self.moving_mean * m + gnp.reshape(mean, (-1,)) * (1.0 - m))
            self.moving_variance.assign(self.moving_variance * m + gnp.reshape(var, (-1,)) * (1.0 - m))
        else:
            mean = gnp.reshape(self.moving_mean.value, full)
            var = gnp.reshape(self.moving_variance.value, full)
        gamma = gnp.reshape(self.gamma.value, full) if self.scale else 1.0
        # gk.numpy calls, not operators: x may be a raw watched array, whose own operators no
        # tape records, and the moving statistics are raw arrays too.
        y = gnp.multiply(gnp.subtract(x, mean), gnp.divide(gamma, gnp.sqrt(gnp.add(var, self.epsilon))))
        if self.center:
            y = gnp.add(y, gnp.reshape(self.beta.value, full))
        return y

    def _batch_moments(self, x, axes):
        """The batch's mean and variance over ``axes`` (a subclass may compute them its own way)."""
        return _moments(x, axes)


def _moments(x, axes):
    return gnp.mean(x, axis=axes, keepdims=True), gnp.var(x, axis=axes, keepdims=True)


def _masked_moments(x, axes, mask):
    """Keras' weighted moments: the mask, broadcast over the last axis, weighs each entry (with
    its epsilon of 1e-7 beside the weights' sum, so an all-False mask gives zeros)."""
    mask = gnp.asarray(mask)
    if len(mask.shape) != len(x.shape) - 1:
        raise _errors.GradkitValueError(
            f"BatchNorm got a mask of shape {tuple(mask.shape)} for inputs of shape {tuple(x.shape)}: the mask "
            "has the inputs' shape without its last axis, as Keras requires."
        )
    # Any nonzero entry counts once, as Keras casts the mask to bool before it weighs.
    weights = gnp.broadcast_to(gnp.expand_dims(gnp.astype(gnp.astype(mask, bool), x.dtype), -1), tuple(x.shape))
    # gk.numpy calls, not operators: x may be a raw watched array, whose operators no tape records.
    total = gnp.sum(weights, axis=axes, keepdims=True) + 1e-7
    weighted = gnp.multiply(weights, x)
    mean = gnp.divide(gnp.sum(weighted, axis=axes, keepdims=True), total)
    var = gnp.divide(
        gnp.sum(gnp.multiply(weights, gnp.square(gnp.subtract(weighted, mean))), axis=axes, keepdims=True), total
    )
    return mean, var
