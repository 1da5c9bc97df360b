"""``tf.keras.losses``' Circle loss (Sun et al., 2020) for metric learning, as Keras 3 computes
it: each embedding's similarities to the others of its class and of other classes, reweighted
by how far each is from its optimum, combined by ``softplus(logsumexp + logsumexp)``.

Keras marks the samples whose loss is 0 (one with no other sample of its class) and leaves them
out of the reduction: ``Circle()`` averages over the others, and so does gradkit.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .._convert import call, convert
from .._math import _tf_maximum
from .losses import _loss_class


def _pos_neg_masks(query_labels, key_labels, remove_diagonal):
    # Keras' build_pos_neg_masks.
    if query_labels.ndim == 1:
        query_labels = query_labels.reshape(-1, 1)
    if key_labels.ndim == 1:
        key_labels = key_labels.reshape(-1, 1)
    positive = query_labels == key_labels.T
    negative = ~positive
    if remove_diagonal:
        positive = positive & ~jnp.eye(query_labels.size, key_labels.size, dtype=bool)
    return positive, negative


def _circle(y_true, y_pred, ref_labels, ref_embeddings, remove_diagonal, gamma, margin):
    dtype = y_pred.dtype
    zero = jnp.zeros((), dtype)
    distances = _tf_maximum(1 - y_pred @ ref_embeddings.T, zero)
    positive, negative = _pos_neg_masks(y_true.astype(jnp.int32), ref_labels.astype(jnp.int32), remove_diagonal)
    pos_weights = _tf_maximum((margin + distances) * positive.astype(dtype), zero)
    neg_weights = _tf_maximum((1 + margin - distances) * negative.astype(dtype), zero)
    pos_scaled = (-1 * gamma) * pos_weights * (margin - distances)
    neg_scaled = gamma * neg_weights * ((1 - margin) - distances)
    minus_inf = jnp.asarray(-jnp.inf, dtype)
    p_loss = jax.nn.logsumexp(jnp.where(positive, pos_scaled, minus_inf), axis=1)
    n_loss = jax.nn.logsumexp(jnp.where(negative, neg_scaled, minus_inf), axis=1)
    return jax.nn.softplus(p_loss + n_loss)


def circle(y_true, y_pred, ref_labels=None, ref_embeddings=None, remove_diagonal=True, gamma=80, margin=0.4):
    """Keras' Circle loss of L2-normalized embeddings ``y_pred`` (batch, dim) with integer labels
    ``y_true``, against ``ref_embeddings``/``ref_labels`` (by default the batch itself); one value
    per sample, 0 for a sample with no other sample of its class."""
    y_pred = convert(y_pred)
    y_true = convert(y_true)
    ref_embeddings = y_pred if ref_embeddings is None else convert(ref_embeddings)
    ref_labels = y_true if ref_labels is None else convert(ref_labels)
    return call(
        _circle,
        y_true,
        y_pred,
        ref_labels,
        ref_embeddings,
        remove_diagonal=bool(remove_diagonal),
        gamma=float(gamma),
        margin=float(margin),
    )


def _positive(losses):
    return losses > 0


def _output_mask(self, losses):
    # Keras sets the mask ``loss > 0`` on the losses; its reduction leaves the rest out.
    return call(_positive, losses)


Circle = _loss_class(
    "Circle",
    circle,
    "circle",
    "Keras' ``Circle(gamma=80.0, margin=0.4, remove_diagonal=True, reduction, name, dtype)``: the Circle "
    "loss of each sample; the reduction leaves out the samples whose loss is 0, as Keras' mask does.",
    methods={"_output_mask": _output_mask},
    gamma=80.0,
    margin=0.4,
    remove_diagonal=True,
)
