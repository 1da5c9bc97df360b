"""``tf.keras.metrics.FBetaScore`` and ``F1Score``: Keras 3's F-scores of multi-class or
multi-label predictions, per class or averaged (micro, macro, weighted by support).

A prediction counts as positive where it is above ``threshold``, or, with no threshold, where
it is its row's largest (and not zero). Counts accumulate in non-trainable Variables, made at
the first update, when the number of classes is known.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from gradkit import _errors

from .._convert import call, convert
from .metrics import Metric, _unrecorded, require_2d

_EPSILON = 1e-7  # keras.backend.epsilon()
_AVERAGES = (None, "micro", "macro", "weighted")


def _fscore_counts(y_true, y_pred, sample_weight, *, threshold, axis):
    """Increments of (true positives, false positives, false negatives, support)."""
    if threshold is None:
        top = jnp.max(y_pred, axis=-1, keepdims=True)
        predicted = (y_pred >= top) & (jnp.abs(y_pred) > 1e-9)
    else:
        predicted = y_pred > threshold
    predicted = predicted.astype(y_pred.dtype)
    y_true = y_true.astype(y_pred.dtype)

    def weighted_sum(values):
        if sample_weight is not None:
            values = values * jnp.expand_dims(sample_weight, 1)
        return jnp.sum(values, axis=axis)

    counts = (
        weighted_sum(predicted * y_true),
        weighted_sum(predicted * (1 - y_true)),
        weighted_sum((1 - predicted) * y_true),
        weighted_sum(y_true),
    )
    return tuple(jax.lax.stop_gradient(c) for c in counts)


def _fscore(tp, fp, fn, support, *, beta, average):
    precision = tp / (tp + fp + _EPSILON)
    recall = tp / (tp + fn + _EPSILON)
    score = (precision * recall) / (beta**2 * precision + recall + _EPSILON) * (1 + beta**2)
    if average == "weighted":
        return jnp.sum(score * support / (jnp.sum(support) + _EPSILON))
    if average is not None:
        return jnp.mean(score)
    return score


class FBetaScore(Metric):
    """The F-beta score: ``(1 + beta²) · precision · recall / (beta² · precision + recall)``.

    ``average``: None (one score per class), ``"micro"`` (from the counts over every class),
    ``"macro"`` (the mean of the per-class scores) or ``"weighted"`` (their mean weighted by each
    class's number of true labels). Inputs are ``(batch, classes)``.
    """

    def __init__(self, average=None, beta=1.0, threshold=None, name="fbeta_score", dtype=None):
        super().__init__(name=name, dtype=dtype)
        if average not in _AVERAGES:
            raise _errors.GradkitValueError(
                "Invalid `average` argument value. Expected one of: {None, 'micro', 'macro', 'weighted'}, as in "
                f"Keras. Received: average={average!r}"
            )
        if not isinstance(beta, float) or beta <= 0.0:
            raise _errors.GradkitValueError(
                f"Invalid `beta` argument value: it must be a Python float > 0, as in Keras. Received: beta={beta!r} "
                f"of type {type(beta).__name__}. Write beta=2.0, not beta=2."
            )
        if threshold is not None and (not isinstance(threshold, float) or not 0.0 < threshold <= 1.0):
            raise _errors.GradkitValueError(
                "Invalid `threshold` argument value: it must be a Python float with 0 < threshold <= 1, as in "
                f"Keras. Received: threshold={threshold!r} of type {type(threshold).__name__}."
            )
        self.average = average
        self.beta = beta
        self.threshold = threshold
        self.axis = None if average == "micro" else 0
        self._built = False

    def _build(self, true_shape, pred_shape):
        require_2d("FBetaScore", true_shape, pred_shape)
        shape = () if self.average == "micro" else (pred_shape[-1],)
        for kind in ("true_positives", "false_positives", "false_negatives", "intermediate_weights"):
            setattr(self, kind, self.add_variable(shape, dtype=self._dtype, name=kind))
        self._built = True

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true, y_pred = convert(y_true, self._dtype), convert(y_pred, self._dtype)
        if not self._built:
            self._build(y_true.shape, y_pred.shape)
        with _unrecorded():
            weights = None if sample_weight is None else convert(sample_weight, self._dtype)
            counts = call(_fscore_counts, y_true, y_pred, weights, threshold=self.threshold, axis=self.axis)
            for kind, count in zip(
                ("true_positives", "false_positives", "false_negatives", "intermediate_weights"), counts
            ):
                getattr(self, kind).assign_add(count)

    def result(self):
        if not self._built:
            return convert(0.0, self._dtype)
        counts = (self.true_positives, self.false_positives, self.false_negatives, self.intermediate_weights)
        return call(_fscore, *(v.value for v in counts), beta=self.beta, average=self.average)

    def reset_state(self):
        if self._built:
            super().reset_state()

    def get_config(self):
        return {**super().get_config(), "average": self.average, "beta": self.beta, "threshold": self.threshold}


class F1Score(FBetaScore):
    """The F-1 score, the harmonic mean of precision and recall (``FBetaScore`` with beta 1)."""

    def __init__(self, average=None, threshold=None, name="f1_score", dtype=None):
        super().__init__(average=average, beta=1.0, threshold=threshold, name=name, dtype=dtype)

    def get_config(self):
        config = super().get_config()
        del config["beta"]
        return config


NAMES = "FBetaScore F1Score"
