"""``tf.keras.losses``' overlap losses for segmentation, Dice and Tversky, as Keras 3 computes
them: one minus a ratio of soft overlaps, summed over ``axis`` (every axis by default, which
gives one value for the whole batch).
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from .._convert import call
from .losses import EPSILON, _loss_class, _pair


def _static_axis(fn, axis):
    """``axis`` as Keras' ``ops.sum`` takes it (None, an int or a sequence of ints), hashable."""
    if axis is None:
        return None
    if isinstance(axis, (int, np.integer)) and not isinstance(axis, bool):
        return int(axis)
    if isinstance(axis, (tuple, list)) and all(
        isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in axis
    ):
        return tuple(int(a) for a in axis)
    raise _errors.GradkitTypeError(
        f"tf.keras.losses.{fn} got axis={axis!r}; the axes to sum over are None (all of them), an int or a "
        "tuple of ints, as Keras takes them. Pass e.g. axis=(1, 2, 3) for one value per sample."
    )


def _dice(y_true, y_pred, axis):
    intersection = jnp.sum(y_true * y_pred, axis=axis)
    total = jnp.sum(y_true, axis=axis) + jnp.sum(y_pred, axis=axis) + jnp.asarray(EPSILON, y_pred.dtype)
    return 1 - (2.0 * intersection) / total


def _tversky(y_true, y_pred, alpha, beta, axis):
    intersection = jnp.sum(y_true * y_pred, axis=axis)
    fp = jnp.sum((1 - y_pred) * y_true, axis=axis)
    fn = jnp.sum(y_pred * (1 - y_true), axis=axis)
    eps = jnp.asarray(EPSILON, y_pred.dtype)
    return 1 - intersection / (intersection + fp * alpha + fn * beta + eps)


def dice(y_true, y_pred, axis=None):
    """Keras' Dice loss: ``1 - 2 * sum(y_true * y_pred) / (sum(y_true) + sum(y_pred) + 1e-7)``,
    the sums over ``axis`` (all axes when None).

    >>> import gradkit.tf as tf
    >>> y_true = [[[[1.0], [1.0]], [[0.0], [0.0]]], [[[1.0], [1.0]], [[0.0], [0.0]]]]
    >>> y_pred = [[[[0.0], [1.0]], [[0.0], [1.0]]], [[[0.4], [0.0]], [[0.0], [0.9]]]]
    >>> [round(float(v), 4) for v in tf.keras.losses.dice(y_true, y_pred, axis=(1, 2, 3))]
    [0.5, 0.7576]
    """
    return call(_dice, *_pair(y_true, y_pred), axis=_static_axis("dice", axis))


def tversky(y_true, y_pred, alpha=0.5, beta=0.5, axis=None):
    """Keras' Tversky loss: ``1 - TP / (TP + alpha * FP + beta * FN + 1e-7)`` with the soft counts
    summed over ``axis`` (all axes when None); ``alpha = beta = 0.5`` is the Dice loss."""
    return call(
        _tversky, *_pair(y_true, y_pred), alpha=float(alpha), beta=float(beta), axis=_static_axis("tversky", axis)
    )


Dice = _loss_class(
    "Dice",
    dice,
    "dice",
    "Dice loss over ``axis`` (``Dice(reduction, name, axis=None, dtype)``).",
    order=("reduction", "name", "axis", "dtype"),
    axis=None,
)
Tversky = _loss_class(
    "Tversky",
    tversky,
    "tversky",
    "Tversky loss over ``axis`` (``Tversky(alpha=0.5, beta=0.5, reduction, name, axis=None, dtype)``).",
    order=("alpha", "beta", "reduction", "name", "axis", "dtype"),
    alpha=0.5,
    beta=0.5,
    axis=None,
)
