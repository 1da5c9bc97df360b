"""``tf.keras.metrics`` of how well predictions follow targets: ``R2Score`` and the Pearson and
concordance correlations (``PearsonCorrelation``, ``ConcordanceCorrelation`` and their
function forms), as Keras 3 computes them."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from gradkit import _errors

from .._convert import call, convert
from .losses import same_rank
from .metrics import Metric, _unrecorded, _wrapper_class, require_2d

_EPSILON = 1e-7  # keras.backend.epsilon()


def _pearson(y_true, y_pred, axis):
    y_true, y_pred = same_rank(y_true.astype(y_pred.dtype), y_pred)
    t = y_true - jnp.mean(y_true, axis=axis, keepdims=True)
    p = y_pred - jnp.mean(y_pred, axis=axis, keepdims=True)
    t = t / jnp.std(t, axis=axis, keepdims=True)
    p = p / jnp.std(p, axis=axis, keepdims=True)
    return jnp.mean(t * p, axis=axis)


def _concordance(y_true, y_pred, axis):
    y_true, y_pred = same_rank(y_true.astype(y_pred.dtype), y_pred)
    true_mean = jnp.mean(y_true, axis=axis, keepdims=True)
    pred_mean = jnp.mean(y_pred, axis=axis, keepdims=True)
    true_var = jnp.var(y_true - true_mean, axis=axis, keepdims=True)
    pred_var = jnp.var(y_pred - pred_mean, axis=axis, keepdims=True)
    # Keras' expression: (y_true - pred_mean) in place of (y_true - true_mean) adds
    # (true_mean - pred_mean) * mean(y_pred - pred_mean), which is zero: the same covariance.
    covariance = (y_true - pred_mean) * (y_pred - pred_mean)
    norm = true_var + pred_var + jnp.square(true_mean - pred_mean)
    return jnp.mean(2 * covariance / (norm + _EPSILON), axis=axis)


def pearson_correlation(y_true, y_pred, axis=-1):
    """Pearson's correlation of ``y_true`` and ``y_pred`` along ``axis``."""
    return call(_pearson, convert(y_true), convert(y_pred), axis=axis)


def concordance_correlation(y_true, y_pred, axis=-1):
    """Lin's concordance correlation of ``y_true`` and ``y_pred`` along ``axis``: 1 only where they agree."""
    return call(_concordance, convert(y_true), convert(y_pred), axis=axis)


PearsonCorrelation = _wrapper_class(
    "PearsonCorrelation", pearson_correlation, "pearson_correlation", "Mean Pearson correlation.", axis=-1
)
ConcordanceCorrelation = _wrapper_class(
    "ConcordanceCorrelation",
    concordance_correlation,
    "concordance_correlation",
    "Mean concordance correlation.",
    axis=-1,
)

_AGGREGATIONS = (None, "uniform_average", "variance_weighted_average")


def _r2_float32_increments(y_true, y_pred, sample_weight):
    """The increments computed in the metric's dtype, for its float32 state (Keras' ``sum + increment``)."""
    return [x.astype(jnp.float32) for x in _r2_increments(y_true, y_pred, sample_weight)]


def _r2_increments(y_true, y_pred, sample_weight):
    y_true, y_pred = same_rank(y_true, y_pred)
    weights = jnp.ones((), y_true.dtype) if sample_weight is None else sample_weight.astype(y_true.dtype)
    if weights.ndim == 1:
        weights = weights[:, None]
    weights = jnp.broadcast_to(weights, y_true.shape)
    weighted = y_true * weights
    increments = (
        jnp.sum(weighted, axis=0),
        jnp.sum(y_true * weighted, axis=0),
        jnp.sum((y_true - y_pred) ** 2 * weights, axis=0),
        jnp.sum(weights, axis=0),
        jnp.asarray(y_true.size, y_true.dtype),
    )
    return tuple(jax.lax.stop_gradient(x) for x in increments)


def _r2(total_sum, squared_sum, residual, count, num_samples, *, aggregation, num_regressors):
    mean = total_sum / count
    total = squared_sum - total_sum * mean
    scores = 1 - residual / total
    scores = jnp.where(jnp.isinf(scores), 0.0, scores)
    if aggregation == "uniform_average":
        score = jnp.mean(scores)
    elif aggregation == "variance_weighted_average":
        score = jnp.sum(total * scores) / jnp.sum(total)
    else:
        score = scores
    if num_regressors:
        # Adjusted R²; with no more samples than predictors plus one, the plain score (Keras warns).
        adjusted = 1.0 - (1.0 - score) * (num_samples - 1.0) / (num_samples - num_regressors - 1.0)
        score = jnp.where(num_regressors < num_samples - 1, adjusted, score)
    return score


class R2Score(Metric):
    """The coefficient of determination, ``1 - residual sum of squares / total sum of squares``,
    per output (``class_aggregation=None``) or averaged (uniformly or weighted by each output's
    variance); adjusted for ``num_regressors`` predictors when that is not 0.

    Where Keras warns that there are too few samples for the adjusted score, gradkit returns
    the plain score, as Keras does, without the warning (the choice is made in the program).
    """

    def __init__(self, class_aggregation="uniform_average", num_regressors=0, name="r2_score", dtype=None):
        super().__init__(name=name, dtype=dtype)
        if class_aggregation not in _AGGREGATIONS:
            raise _errors.GradkitValueError(
                f"Invalid value for argument `class_aggregation`: expected one of {_AGGREGATIONS}, as in Keras. "
                f"Received: class_aggregation={class_aggregation!r}"
            )
        if num_regressors < 0:
            raise _errors.GradkitValueError(
                "Invalid value for argument `num_regressors`: expected a value >= 0, as in Keras. "
                f"Received: num_regressors={num_regressors}"
            )
        self.class_aggregation = class_aggregation
        self.num_regressors = num_regressors
        self.num_samples = self.add_variable((), name="num_samples")
        self._built = False

    def _build(self, true_shape, pred_shape):
        require_2d("R2Score", true_shape, pred_shape)
        outputs = pred_shape[-1]
        # Keras' order (its weight files hold the variables by position).
        self.squared_sum = self.add_variable((outputs,), name="squared_sum")
        self.sum = self.add_variable((outputs,), name="sum")
        self.total_mse = self.add_variable((outputs,), name="residual")
        self.count = self.add_variable((outputs,), name="count")
        self._built = True

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true, y_pred = convert(y_true, self._dtype), convert(y_pred, self._dtype)
        if not self._built:  # on the shapes after Keras' squeeze-or-expand to the same rank
            shapes = jax.eval_shape(
                same_rank, *(jax.ShapeDtypeStruct(tuple(x.shape), jnp.float32) for x in (y_true, y_pred))
            )
            self._build(*(s.shape for s in shapes))
        with _unrecorded():
            weights = None if sample_weight is None else convert(sample_weight, self._dtype)
            increments = call(_r2_float32_increments, y_true, y_pred, weights)
            for variable, increment in zip((self.sum, self.squared_sum, self.total_mse, self.count), increments[:4]):
                variable.assign_add(increment)
            self.num_samples.assign_add(increments[4])

    def result(self):
        if not self._built:
            return convert(0.0, self._dtype)
        states = (self.sum, self.squared_sum, self.total_mse, self.count, self.num_samples)
        return call(
            _r2,
            *(v.value for v in states),
            aggregation=self.class_aggregation,
            num_regressors=self.num_regressors,
        )

    def get_config(self):
        return {
            **super().get_config(),
            "class_aggregation": self.class_aggregation,
            "num_regressors": self.num_regressors,
        }


NAMES = "R2Score PearsonCorrelation ConcordanceCorrelation pearson_correlation concordance_correlation"
