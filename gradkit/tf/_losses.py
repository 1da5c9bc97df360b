"""``tf.nn``'s cross-entropy losses, written as TensorFlow computes them (the same gradients,
including the one with respect to soft ``labels``)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from gradkit import _errors

from ._convert import call, convert


def _sigmoid_xent(labels, logits):
    # max(x, 0) - x * z + log(1 + exp(-|x|)), with TensorFlow's branches at x = 0.
    positive = logits >= 0
    relu_logits = jnp.where(positive, logits, jnp.zeros_like(logits))
    neg_abs_logits = jnp.where(positive, -logits, logits)
    return relu_logits - logits * labels + jnp.log1p(jnp.exp(neg_abs_logits))


def _require(labels, logits, fn):
    if labels is None or logits is None:
        raise _errors.GradkitValueError(
            f"tf.nn.{fn} needs both labels= and logits= (got labels={labels!r}, logits={logits!r}); "
            f"call it as tf.nn.{fn}(labels=..., logits=...)."
        )


def sigmoid_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """Elementwise binary cross-entropy of ``sigmoid(logits)`` against ``labels``."""
    _require(labels, logits, "sigmoid_cross_entropy_with_logits")
    logits = convert(logits)
    return call(_sigmoid_xent, convert(labels, logits.dtype), logits)


def _softmax_xent(labels, logits, axis):
    return -jnp.sum(labels * jax.nn.log_softmax(logits, axis=axis), axis=axis)


def softmax_cross_entropy_with_logits(labels, logits, axis=-1, name=None):
    """``-sum(labels * log_softmax(logits), axis)``; differentiable in both arguments."""
    logits = convert(logits)
    return call(_softmax_xent, convert(labels, logits.dtype), logits, axis=int(axis))


def _sparse_softmax_xent(labels, logits):
    log_p = jax.nn.log_softmax(logits, axis=-1)
    return -jnp.take_along_axis(log_p, labels[..., None], axis=-1)[..., 0]


def sparse_softmax_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """``-log_softmax(logits)[..., labels]`` for integer class ``labels``."""
    _require(labels, logits, "sparse_softmax_cross_entropy_with_logits")
    return call(_sparse_softmax_xent, convert(labels), convert(logits))
