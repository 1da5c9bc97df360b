"""``tf.keras.losses``' generalized cross-entropy (Zhang and Sabuncu, 2018): ``(1 - p ** q) / q``
of the probability ``p`` given to each integer label's class, as Keras 3 computes it (no
clipping: a zero probability gives ``1 / q`` and an infinite gradient, as in Keras).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from .._convert import call
from .losses import _loss_class, _pair


def _categorical_generalized_cross_entropy(y_true, y_pred, q):
    # Keras one-hot encodes the labels (truncated to integers; one out of range is all zeros) and
    # multiplies, broadcasting as TensorFlow does: labels of shape (batch, 1) against
    # (batch, classes) pair every label with every row, as in Keras.
    one_hot = jax.nn.one_hot(y_true.astype(jnp.int32), y_pred.shape[-1], dtype=y_pred.dtype)
    shape = np.broadcast_shapes(one_hot.shape, y_pred.shape)
    p = jnp.sum(jnp.broadcast_to(y_pred, shape) * jnp.broadcast_to(one_hot, shape), axis=-1)
    return (1 - jnp.power(p, jnp.asarray(q, p.dtype))) / q


def categorical_generalized_cross_entropy(y_true, y_pred, q):
    """Keras' generalized cross-entropy of integer class labels ``y_true`` against class
    probabilities ``y_pred``: ``(1 - p ** q) / q`` with ``p`` the true class's probability.

    >>> import gradkit.tf as tf
    >>> y_pred = [[0.7, 0.3], [0.2, 0.8]]
    >>> [round(float(v), 4) for v in tf.keras.losses.categorical_generalized_cross_entropy([0, 1], y_pred, q=0.5)]
    [0.3267, 0.2111]
    """
    return call(_categorical_generalized_cross_entropy, *_pair(y_true, y_pred), q=float(q))


def _check_q(options):
    q = options["q"]
    if not 0 < q < 1:
        raise _errors.GradkitValueError(
            f"tf.keras.losses.CategoricalGeneralizedCrossEntropy got q={q!r}, but q must be in the interval "
            "(0, 1), as Keras requires (it raises too). Pass e.g. q=0.5 (the default); q near 0 behaves like "
            "the cross-entropy, q near 1 like the mean absolute error."
        )


CategoricalGeneralizedCrossEntropy = _loss_class(
    "CategoricalGeneralizedCrossEntropy",
    categorical_generalized_cross_entropy,
    "categorical_generalized_cross_entropy",
    "Generalized cross-entropy of integer labels (``q`` in (0, 1), default 0.5).",
    check=_check_q,
    q=0.5,
)
