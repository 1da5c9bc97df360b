"""``tf.nn``: activations."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from . import _math
from ._convert import call, convert

sigmoid = _math.sigmoid
tanh = _math.tanh
softplus = _math.softplus
relu = _math._unary(jax.nn.relu, "relu")
relu6 = _math._unary(jax.nn.relu6, "relu6")
elu = _math._unary(jax.nn.elu, "elu")
selu = _math._unary(jax.nn.selu, "selu")
swish = silu = _math._unary(jax.nn.silu, "silu")
softsign = _math._unary(jax.nn.soft_sign, "softsign")


def _softmax(x, axis):
    return jax.nn.softmax(x, axis=axis)


def _log_softmax(x, axis):
    return jax.nn.log_softmax(x, axis=axis)


def softmax(logits, axis=None, name=None):
    return call(_softmax, convert(logits), axis=-1 if axis is None else int(axis))


def log_softmax(logits, axis=None, name=None):
    return call(_log_softmax, convert(logits), axis=-1 if axis is None else int(axis))


def _leaky_relu(x, alpha):
    return jnp.where(x > 0, x, alpha * x)


def leaky_relu(features, alpha=0.2, name=None):
    return call(_leaky_relu, convert(features), alpha=float(alpha))


def _l2_loss(t):
    return jnp.sum(t * t) / 2


def l2_loss(t, name=None):
    return call(_l2_loss, convert(t))
