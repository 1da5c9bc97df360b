"""More of ``tf.keras.metrics``: the hinge, log-cosh, percentage, logarithmic and Poisson errors as
means of Keras' loss functions, ``CosineSimilarity``, ``RootMeanSquaredError`` and the top-k
accuracies, with the functions Keras exports beside them; as Keras 3 computes them.

>>> import gradkit.tf as tf
>>> m = tf.keras.metrics.RootMeanSquaredError()
>>> m.update_state([[0.0, 1.0]], [[1.0, 1.0]]); float(m.result().numpy())
0.7071067690849304
>>> tf.keras.metrics.top_k_categorical_accuracy([[0.0, 1.0, 0.0]], [[0.5, 0.3, 0.2]], k=2).numpy().tolist()
[1.0]
"""

from __future__ import annotations

import jax.numpy as jnp

from .._convert import call, convert
from .._math import _divide_no_nan
from . import losses as _losses
from .metrics import Mean, _unrecorded, _wrapper_class


def _l2_normalize(x, axis):
    square_sum = jnp.sum(jnp.square(x), axis=axis, keepdims=True)
    return x * jnp.reciprocal(jnp.sqrt(jnp.maximum(square_sum, 1e-12)))


def _cosine_similarity(y_true, y_pred, axis):
    y_true, y_pred = _losses.same_rank(y_true.astype(y_pred.dtype), y_pred)
    return jnp.sum(_l2_normalize(y_true, axis) * _l2_normalize(y_pred, axis), axis=axis)


def cosine_similarity(y_true, y_pred, axis=-1):
    """The cosine similarity of ``y_true`` and ``y_pred`` along ``axis`` (1: the same direction)."""
    return call(_cosine_similarity, convert(y_true), convert(y_pred), axis=axis)


def _flat_rows(y_pred):
    return y_pred.reshape(-1, y_pred.shape[-1]) if y_pred.ndim > 2 else y_pred


def _in_top_k(targets, y_pred, k):
    """Whether each target's score is among the ``k`` largest of its row (ties count, as in_top_k);
    a target outside the row's classes (a padding -1, a label past the end) is never a hit."""
    n = y_pred.shape[-1]
    is_class = (targets >= 0) & (targets < n)
    safe = jnp.clip(targets, 0, n - 1)
    target_scores = jnp.take_along_axis(y_pred, safe[:, None], axis=-1)
    finite = jnp.all(jnp.isfinite(y_pred), axis=-1)  # a row with a non-finite score is never a hit, as in_top_k
    return ((jnp.sum(y_pred > target_scores, axis=-1) < k) & finite & is_class).astype(jnp.float32)


def _top_k_categorical(y_true, y_pred, k):
    targets = jnp.argmax(y_true.astype(y_pred.dtype), axis=-1)
    shape = targets.shape
    matches = _in_top_k(targets.reshape(-1).astype(jnp.int32), _flat_rows(y_pred), k)
    return matches.reshape(shape)


def _sparse_top_k_categorical(y_true, y_pred, k, from_sorted_ids):
    shape = y_true.shape
    targets = y_true.reshape(-1)
    rows = _flat_rows(y_pred)
    if from_sorted_ids:
        matches = jnp.any(rows[:, :k] == targets.astype(rows.dtype)[:, None], axis=-1).astype(jnp.float32)
    else:
        matches = _in_top_k(targets.astype(jnp.int32), rows, k)
    return matches.reshape(shape)


def top_k_categorical_accuracy(y_true, y_pred, k=5):
    """1 where the one-hot label's class is among the ``k`` top-scored, else 0."""
    return call(_top_k_categorical, convert(y_true), convert(y_pred), k=int(k))


def sparse_top_k_categorical_accuracy(y_true, y_pred, k=5, from_sorted_ids=False):
    """1 where the integer label is among the ``k`` top-scored classes (or, ``from_sorted_ids``, the
    first ``k`` ids of ``y_pred``), else 0."""
    return call(
        _sparse_top_k_categorical, convert(y_true), convert(y_pred), k=int(k), from_sorted_ids=bool(from_sorted_ids)
    )


class RootMeanSquaredError(Mean):
    """The square root of the (weighted) mean squared error over all values seen."""

    def __init__(self, name="root_mean_squared_error", dtype=None):
        super().__init__(name=name, dtype=dtype)

    def update_state(self, y_true, y_pred, sample_weight=None):
        with _unrecorded():
            y_pred = convert(y_pred, self._dtype)
            y_true = convert(y_true, self._dtype)
            squared = call(_squared_error, y_true, y_pred)
        return super().update_state(squared, sample_weight=sample_weight)

    def result(self):
        return call(_root, self.total.value, self.count.value)


def _squared_error(y_true, y_pred):
    y_true, y_pred = _losses.same_rank(y_true, y_pred)
    return jnp.square(y_true - y_pred)


def _root(total, count):
    return jnp.sqrt(_divide_no_nan(total, count))


Hinge = _wrapper_class("Hinge", _losses.hinge, "hinge", "Mean hinge loss.")
SquaredHinge = _wrapper_class("SquaredHinge", _losses.squared_hinge, "squared_hinge", "Mean squared hinge loss.")
CategoricalHinge = _wrapper_class(
    "CategoricalHinge", _losses.categorical_hinge, "categorical_hinge", "Mean categorical hinge loss."
)
LogCoshError = _wrapper_class("LogCoshError", _losses.log_cosh, "logcosh", "Mean log-cosh error.")
MeanAbsolutePercentageError = _wrapper_class(
    "MeanAbsolutePercentageError",
    _losses.mean_absolute_percentage_error,
    "mean_absolute_percentage_error",
    "Mean absolute percentage error.",
)
MeanSquaredLogarithmicError = _wrapper_class(
    "MeanSquaredLogarithmicError",
    _losses.mean_squared_logarithmic_error,
    "mean_squared_logarithmic_error",
    "Mean squared logarithmic error.",
)
Poisson = _wrapper_class("Poisson", _losses.poisson, "poisson", "Mean Poisson loss.")
CosineSimilarity = _wrapper_class(
    "CosineSimilarity", cosine_similarity, "cosine_similarity", "Mean cosine similarity.", axis=-1
)


def _cosine_config(self):
    """Keras' config of CosineSimilarity: its name and dtype (not its axis)."""
    return Mean.get_config(self)


CosineSimilarity.get_config = _cosine_config
TopKCategoricalAccuracy = _wrapper_class(
    "TopKCategoricalAccuracy",
    top_k_categorical_accuracy,
    "top_k_categorical_accuracy",
    "How often the one-hot label is in the top k.",
    k=5,
)
SparseTopKCategoricalAccuracy = _wrapper_class(
    "SparseTopKCategoricalAccuracy",
    sparse_top_k_categorical_accuracy,
    "sparse_top_k_categorical_accuracy",
    "How often the integer label is in the top k.",
    k=5,
    from_sorted_ids=False,
)


def _config_without(cls, *dropped):
    """``cls`` whose config leaves out ``dropped`` unless set (Keras writes those configs by hand)."""

    def get_config(self):
        config = super(cls, self).get_config()
        for key in dropped:
            if not config.get(key):
                config.pop(key, None)
        return config

    cls.get_config = get_config


_config_without(SparseTopKCategoricalAccuracy, "from_sorted_ids")

# The loss functions Keras also exports as metrics, under its metric names.
hinge = _losses.hinge
squared_hinge = _losses.squared_hinge
categorical_hinge = _losses.categorical_hinge
logcosh = _losses.log_cosh
mape = MAPE = _losses.mean_absolute_percentage_error
msle = MSLE = _losses.mean_squared_logarithmic_error
poisson = _losses.poisson
huber = _losses.huber
binary_focal_crossentropy = _losses.binary_focal_crossentropy
categorical_focal_crossentropy = _losses.categorical_focal_crossentropy
kullback_leibler_divergence = _losses.kl_divergence

NAMES = (
    "Hinge SquaredHinge CategoricalHinge LogCoshError MeanAbsolutePercentageError MeanSquaredLogarithmicError "
    "Poisson CosineSimilarity RootMeanSquaredError TopKCategoricalAccuracy SparseTopKCategoricalAccuracy "
    "top_k_categorical_accuracy sparse_top_k_categorical_accuracy hinge squared_hinge categorical_hinge logcosh "
    "mape MAPE msle MSLE poisson huber binary_focal_crossentropy categorical_focal_crossentropy "
    "kullback_leibler_divergence"
)
