"""``tf.nn``'s cross-entropy losses, written as TensorFlow computes them (the same gradients,
including the one with respect to soft ``labels``)."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

from gradkit import _errors

from ._convert import call, convert, known_value


@jax.custom_jvp
def _sigmoid_xent(labels, logits):
    # max(x, 0) - x * z + log(1 + exp(-|x|)), with TensorFlow's branches at x = 0.
    positive = logits >= 0
    relu_logits = jnp.where(positive, logits, jnp.zeros_like(logits))
    neg_abs_logits = jnp.where(positive, -logits, logits)
    return relu_logits - logits * labels + jnp.log1p(jnp.exp(neg_abs_logits))


def _sigmoid_xent_logits_derivative(labels, logits):
    """``sigmoid(x) - z`` as the sum of its terms' derivatives, ``(step(x) - z) - sign(x) sigmoid(-|x|)``:
    exact where the first part cancels (x > 0, z = 1), as TensorFlow's gradient of the same sum
    is. Autodiff of the sum's log1p(exp(.)) in float16 or bfloat16 lost a fifth of the digits."""
    small = jax.nn.sigmoid(-jnp.abs(logits))
    return jnp.where(logits >= 0, (1 - labels) - small, small - labels)


_sigmoid_xent.defjvps(
    lambda dz, y, labels, logits: -logits * dz,
    lambda dx, y, labels, logits: _sigmoid_xent_logits_derivative(labels, logits) * dx,
)


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
    labels = convert(labels, logits.dtype)
    if tuple(labels.shape) != tuple(logits.shape):
        # TensorFlow refuses, where broadcasting would pair each label with the wrong logits.
        raise _errors.GradkitValueError(
            f"tf.nn.sigmoid_cross_entropy_with_logits needs labels and logits of the same shape, as "
            f"TensorFlow does, but got labels of shape {tuple(labels.shape)} and logits of shape "
            f"{tuple(logits.shape)}. Reshape or tile the labels to the logits' shape first."
        )
    return call(_sigmoid_xent, labels, logits)


def _softmax_xent(labels, logits, axis):
    return _softmax_xent_rule(labels, logits, axis)


@functools.partial(jax.custom_jvp, nondiff_argnums=(2,))
def _softmax_xent_rule(labels, logits, axis):
    return -jnp.sum(labels * jax.nn.log_softmax(logits, axis=axis), axis=axis)


@_softmax_xent_rule.defjvp
def _softmax_xent_jvp(axis, primals, tangents):
    # TensorFlow's gradients: softmax(logits) - labels for the logits (its kernel assumes labels
    # summing to one along ``axis``; the exact one is sum(labels) * softmax - labels) and
    # -log_softmax(logits) for the labels. As a forward rule, each is differentiated again as
    # the expression it is: d(softmax - labels)/d labels = -I, d(-log_softmax)/d logits exact.
    labels, logits = primals
    d_labels, d_logits = tangents
    log_p = jax.nn.log_softmax(logits, axis=axis)
    out = -jnp.sum(labels * log_p, axis=axis)
    d_out = jnp.sum((jnp.exp(log_p) - labels) * d_logits, axis=axis) - jnp.sum(log_p * d_labels, axis=axis)
    return out, d_out


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
    labels, logits = convert(labels), convert(logits)
    fn = "tf.nn.sparse_softmax_cross_entropy_with_logits"
    if tuple(labels.shape) != tuple(logits.shape)[:-1]:
        raise _errors.GradkitValueError(
            f"{fn} needs labels of the logits' shape without its last (class) axis, as TensorFlow does, "
            f"but got labels of shape {tuple(labels.shape)} and logits of shape {tuple(logits.shape)}. "
            f"Pass one integer class per row of logits (labels of shape {tuple(logits.shape)[:-1]})."
        )
    known = known_value(labels)
    n = logits.shape[-1]
    if known is not None and known.size and (known.min() < 0 or known.max() >= n):
        # TensorFlow raises here (InvalidArgumentError); the gather would give NaN silently.
        bad = int(known.min()) if known.min() < 0 else int(known.max())
        raise _errors.InvalidArgumentValueError(
            f"{fn} got a label value of {bad}, outside the valid range of classes [0, {n}) of logits "
            f"with {n} classes; TensorFlow refuses it too. Pass class indices in [0, {n})."
        )
    return call(_sparse_softmax_xent, labels, logits)
