"""``tf.keras.metrics`` built on confusion-matrix counts at thresholds: ``TruePositives``,
``FalsePositives``, ``TrueNegatives``, ``FalseNegatives``, ``Precision``, ``Recall``, ``AUC``,
and the best of one rate where another reaches a value (``SensitivityAtSpecificity``,
``SpecificityAtSensitivity``, ``PrecisionAtRecall``, ``RecallAtPrecision``).

As in Keras 3 (``metrics_utils.update_confusion_matrix_variables``): a prediction is positive
at threshold ``t`` when it is greater than ``t``; a label is positive when it is nonzero; each
count is weighted by ``sample_weight`` (and an AUC's ``label_weights``). The counts are computed
for every threshold at once, one recorded program per update, and accumulate in non-trainable
Variables, so inside a ``tf.function`` step they thread through the compiled program.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from .._convert import call, convert
from .._math import _divide_no_nan
from .losses import same_rank
from .metrics import Metric, _unrecorded

NEG_INF = -1e10  # what Keras gives the predictions outside the top k
_EPSILON = 1e-7  # keras.backend.epsilon(): an AUC's end thresholds lie this far outside [0, 1]


def _filter_top_k(y_pred, k):
    """Keras' ``_filter_top_k``: the top ``k`` predictions of the last axis kept, the rest NEG_INF."""
    _, idx = jax.lax.top_k(y_pred, k)
    mask = jnp.sum(jax.nn.one_hot(idx, y_pred.shape[-1], dtype=y_pred.dtype), axis=-2)
    return y_pred * mask + NEG_INF * (1 - mask)


def _confusion_counts(
    y_true,
    y_pred,
    sample_weight,
    *,
    thresholds,
    dtype,
    top_k=None,
    class_id=None,
    multi_label=False,
    label_weights=None,
    clip=False,
):
    """(tp, fp, tn, fn) at each threshold: shape (T,), or (T, labels) with ``multi_label``."""
    y_true = y_true.astype(dtype)
    y_pred = y_pred.astype(dtype)
    y_pred, y_true = same_rank(y_pred, y_true)
    if sample_weight is not None:
        sample_weight = jnp.expand_dims(sample_weight.astype(dtype), -1)
        _, sample_weight = same_rank(y_true, sample_weight, expand_rank_1=False)
    if top_k is not None:
        y_pred = _filter_top_k(y_pred, top_k)
    if class_id is not None:
        y_true = y_true[..., class_id, None]
        y_pred = y_pred[..., class_id, None]
    if clip:  # Keras' evenly-spaced algorithm (an AUC's default thresholds) clips to [0, 1] first
        y_pred = jnp.clip(y_pred, 0.0, 1.0)
    weights = jnp.ones(y_pred.shape, dtype)
    if sample_weight is not None:
        weights = weights * jnp.broadcast_to(sample_weight, y_pred.shape)
    if label_weights is not None and not multi_label:
        weights = weights * jnp.broadcast_to(jnp.asarray(label_weights, dtype), y_pred.shape)
    positive = y_true != 0
    if not multi_label:  # every prediction one of a single label's, as Keras flattens them
        y_pred, positive, weights = y_pred.reshape(-1), positive.reshape(-1), weights.reshape(-1)
    t = jnp.asarray(thresholds, dtype).reshape((-1,) + (1,) * y_pred.ndim)
    if clip:
        # Keras' evenly-spaced algorithm counts a prediction above the thresholds below its bucket,
        # ceil(y_pred * (T - 1)) - 1 in the metric's dtype: not quite y_pred > t where a prediction
        # lies on a threshold (0.3 is above its own at 101 thresholds, as float32 rounds it).
        n = len(thresholds)
        bucket = jnp.ceil(y_pred * jnp.asarray(n - 1, dtype)) - 1
        if thresholds[0] < 0 or thresholds[-1] > 1:  # the ends moved past 0 and 1: every prediction is above the first
            bucket = jnp.maximum(bucket, 0)
        predicted = jnp.arange(n).reshape(t.shape) <= bucket[None].astype(jnp.int32)
    else:
        predicted = y_pred[None] > t  # (T, samples) or, multi-label, (T, samples, labels)
    actual = jnp.broadcast_to(positive[None], predicted.shape)
    w = jnp.broadcast_to(weights[None], predicted.shape)

    def count(label, pred):
        return jnp.sum(jnp.where(label & pred, w, jnp.zeros((), dtype)), axis=1)

    counts = (
        count(actual, predicted),
        count(~actual, predicted),
        count(~actual, ~predicted),
        count(actual, ~predicted),
    )
    return tuple(jax.lax.stop_gradient(c) for c in counts)


def _thresholds(thresholds, default):
    """Keras' ``parse_init_thresholds``: the thresholds given (each in [0, 1]), or ``default``."""
    if thresholds is None:
        return (float(default),)
    values = list(thresholds) if isinstance(thresholds, (list, tuple, np.ndarray)) else [thresholds]
    bad = [t for t in values if t is None or not 0 <= float(t) <= 1]
    if bad:
        raise _errors.GradkitValueError(
            f"Threshold values must be in [0, 1], as in Keras; received {bad}. Pass thresholds between 0 and 1 "
            "(a prediction is counted positive when it is greater than the threshold)."
        )
    return tuple(float(t) for t in values)


def _evenly(thresholds) -> bool:
    """Keras' ``is_evenly_distributed_thresholds``: 0 to 1 in equal steps (3 or more). Keras then
    counts by buckets, which first clips the predictions to [0, 1]."""
    n = len(thresholds)
    return n >= 3 and bool(np.allclose(thresholds, np.arange(n, dtype=np.float32) / (n - 1), atol=_EPSILON))


class _ConfusionMetric(Metric):
    """Counts of the kinds in ``_KINDS`` at each threshold, in Variables named as Keras names them."""

    _KINDS: tuple = ()  # ("true_positives", ...) this metric keeps

    def _counts_variables(self, shape):
        for kind in self._KINDS:
            setattr(self, kind, self.add_variable(shape, name=kind))

    def _counts(self, y_true, y_pred, sample_weight, **options) -> dict:
        """This batch's counts by kind (call under ``_unrecorded``), in the counts' float32, as Keras
        casts the labels and predictions to its count Variables' dtype whatever the metric's."""
        weights = None if sample_weight is None else convert(sample_weight, "float32")
        counts = call(_confusion_counts, convert(y_true), convert(y_pred), weights, dtype="float32", **options)
        return dict(zip(("true_positives", "false_positives", "true_negatives", "false_negatives"), counts))

    def _accumulate(self, y_true, y_pred, sample_weight, **options):
        with _unrecorded():
            counts = self._counts(y_true, y_pred, sample_weight, **options)
            for kind in self._KINDS:
                getattr(self, kind).assign_add(counts[kind])


def _first_if_one(values, n):
    return values[0] if n == 1 else values


class _CountMetric(_ConfusionMetric):
    def __init__(self, thresholds=None, name=None, dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.init_thresholds = thresholds
        self.thresholds = _thresholds(thresholds, 0.5)
        self.accumulator = self.add_variable((len(self.thresholds),), name="accumulator")

    def update_state(self, y_true, y_pred, sample_weight=None):
        with _unrecorded():
            counts = self._counts(
                y_true, y_pred, sample_weight, thresholds=self.thresholds, clip=_evenly(self.thresholds)
            )
            self.accumulator.assign_add(counts[self._KIND])

    def result(self):
        return _first_if_one(self.accumulator.read_value(), len(self.thresholds))

    def get_config(self):
        return {**super().get_config(), "thresholds": self.init_thresholds}


class TruePositives(_CountMetric):
    """The (weighted) number of positive labels predicted positive, at each threshold."""

    _KIND = "true_positives"


class FalsePositives(_CountMetric):
    """The (weighted) number of negative labels predicted positive, at each threshold."""

    _KIND = "false_positives"


class TrueNegatives(_CountMetric):
    """The (weighted) number of negative labels predicted negative, at each threshold."""

    _KIND = "true_negatives"


class FalseNegatives(_CountMetric):
    """The (weighted) number of positive labels predicted negative, at each threshold."""

    _KIND = "false_negatives"


class _RatioMetric(_ConfusionMetric):
    """Precision or Recall: ``true_positives / (true_positives + other)`` at each threshold."""

    def __init__(self, thresholds=None, top_k=None, class_id=None, name=None, dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.init_thresholds = thresholds
        self.top_k = top_k
        self.class_id = class_id
        self.thresholds = _thresholds(thresholds, 0.5 if top_k is None else NEG_INF)
        self._counts_variables((len(self.thresholds),))

    def update_state(self, y_true, y_pred, sample_weight=None):
        self._accumulate(
            y_true,
            y_pred,
            sample_weight,
            thresholds=self.thresholds,
            top_k=self.top_k,
            class_id=self.class_id,
            clip=_evenly(self.thresholds),
        )

    def result(self):
        tp = self.true_positives.value
        other = getattr(self, self._KINDS[1]).value
        return _first_if_one(call(_ratio, tp, other), len(self.thresholds))

    def get_config(self):
        return {
            **super().get_config(),
            "thresholds": self.init_thresholds,
            "top_k": self.top_k,
            "class_id": self.class_id,
        }


def _ratio(tp, other):
    return _divide_no_nan(tp, tp + other)


class Precision(_RatioMetric):
    """The fraction of positive predictions whose label is positive: ``tp / (tp + fp)``."""

    _KINDS = ("true_positives", "false_positives")


class Recall(_RatioMetric):
    """The fraction of positive labels predicted positive: ``tp / (tp + fn)``."""

    _KINDS = ("true_positives", "false_negatives")


class _AtConstraint(_ConfusionMetric):
    """Keras' ``SensitivitySpecificityBase``: the best of one rate over the thresholds where
    another reaches ``value`` (``num_thresholds`` evenly spaced from 0 to 1)."""

    _KINDS = ("true_positives", "false_positives", "true_negatives", "false_negatives")
    _CONSTRAINT = ""  # the argument that names the value: "specificity", ...
    _RATES: tuple = ()  # (constrained, maximized), each "recall", "specificity" or "precision"

    def __init__(self, value, num_thresholds=200, class_id=None, name=None, dtype=None):
        if not 0 <= value <= 1:
            raise _errors.GradkitValueError(
                f"Argument `{self._CONSTRAINT}` must be in the range [0, 1], as in Keras. "
                f"Received: {self._CONSTRAINT}={value}"
            )
        if num_thresholds <= 0:
            raise _errors.GradkitValueError(
                f"Argument `num_thresholds` must be an integer > 0, as in Keras. Received: num_thresholds={num_thresholds}"
            )
        super().__init__(name=name, dtype=dtype)
        setattr(self, self._CONSTRAINT, value)
        self.value = value
        self.num_thresholds = num_thresholds
        self.class_id = class_id
        if num_thresholds == 1:
            self.thresholds = (0.5,)
        else:
            self.thresholds = (0.0, *((i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)), 1.0)
        self._counts_variables((len(self.thresholds),))

    def update_state(self, y_true, y_pred, sample_weight=None):
        self._accumulate(
            y_true,
            y_pred,
            sample_weight,
            thresholds=self.thresholds,
            class_id=self.class_id,
            clip=len(self.thresholds) > 1,
        )

    def result(self):
        counts = [getattr(self, kind).value for kind in self._KINDS]
        return call(_best_under_constraint, *counts, value=float(self.value), rates=self._RATES)

    def get_config(self):
        return {
            **super().get_config(),
            "class_id": self.class_id,
            "num_thresholds": self.num_thresholds,
            self._CONSTRAINT: self.value,
        }


def _best_under_constraint(tp, fp, tn, fn, *, value, rates):
    """The largest ``rates[1]`` over the thresholds where ``rates[0]`` is at least ``value`` (0 if none)."""
    by_name = {
        "recall": _divide_no_nan(tp, tp + fn),
        "specificity": _divide_no_nan(tn, tn + fp),
        "precision": _divide_no_nan(tp, tp + fp),
    }
    constrained, maximized = by_name[rates[0]], by_name[rates[1]]
    return jnp.max(jnp.where(constrained >= value, maximized, 0), initial=0)


class SensitivityAtSpecificity(_AtConstraint):
    """The best sensitivity (recall) at thresholds where specificity is at least ``specificity``."""

    _CONSTRAINT = "specificity"
    _RATES = ("specificity", "recall")

    def __init__(self, specificity, num_thresholds=200, class_id=None, name=None, dtype=None):
        super().__init__(specificity, num_thresholds, class_id, name, dtype)


class SpecificityAtSensitivity(_AtConstraint):
    """The best specificity at thresholds where sensitivity (recall) is at least ``sensitivity``."""

    _CONSTRAINT = "sensitivity"
    _RATES = ("recall", "specificity")

    def __init__(self, sensitivity, num_thresholds=200, class_id=None, name=None, dtype=None):
        super().__init__(sensitivity, num_thresholds, class_id, name, dtype)


class PrecisionAtRecall(_AtConstraint):
    """The best precision at thresholds where recall is at least ``recall``."""

    _CONSTRAINT = "recall"
    _RATES = ("recall", "precision")

    def __init__(self, recall, num_thresholds=200, class_id=None, name=None, dtype=None):
        super().__init__(recall, num_thresholds, class_id, name, dtype)


class RecallAtPrecision(_AtConstraint):
    """The best recall at thresholds where precision is at least ``precision``."""

    _CONSTRAINT = "precision"
    _RATES = ("precision", "recall")

    def __init__(self, precision, num_thresholds=200, class_id=None, name=None, dtype=None):
        super().__init__(precision, num_thresholds, class_id, name, dtype)


_CURVES = {"roc": "ROC", "pr": "PR", "prgain": "PRGAIN"}
_SUMMATIONS = ("interpolation", "majoring", "minoring")


class AUC(_ConfusionMetric):
    """The area under the ROC (or precision-recall) curve, by a Riemann sum over thresholds.

    Keras 3's metric: ``num_thresholds`` evenly spaced thresholds (the first just below 0, the
    last just above 1) unless ``thresholds`` are given; ``curve`` ``"ROC"``, ``"PR"`` or
    ``"PRGAIN"``; ``summation_method`` ``"interpolation"`` (the PR curve by Davis & Goadrich's
    interpolation), ``"minoring"`` or ``"majoring"``; ``multi_label`` for one curve per label,
    averaged (weighted by ``label_weights``).
    """

    _KINDS = ("true_positives", "false_positives", "true_negatives", "false_negatives")

    def __init__(
        self,
        num_thresholds=200,
        curve="ROC",
        summation_method="interpolation",
        name=None,
        dtype=None,
        thresholds=None,
        multi_label=False,
        num_labels=None,
        label_weights=None,
        from_logits=False,
    ):
        curve_name = _CURVES.get(str(curve).lower())
        if curve_name is None:
            raise _errors.GradkitValueError(
                f'Invalid AUC curve value: "{curve}". Expected values are ["PR", "ROC", "PRGAIN"], as in Keras.'
            )
        if str(summation_method).lower() not in _SUMMATIONS:
            raise _errors.GradkitValueError(
                f'Invalid AUC summation method value: "{summation_method}". Expected values are '
                '["interpolation", "majoring", "minoring"], as in Keras.'
            )
        self._init_from_thresholds = thresholds is not None
        if thresholds is not None:
            inner = sorted(float(t) for t in thresholds)
            self.num_thresholds = len(inner) + 2
            self._evenly = _evenly([0.0, *inner, 1.0])
        else:
            if num_thresholds <= 1:
                raise _errors.GradkitValueError(
                    f"Argument `num_thresholds` must be an integer > 1, as in Keras. Received: num_thresholds={num_thresholds}"
                )
            self.num_thresholds = int(num_thresholds)
            inner = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
            self._evenly = True
        self._thresholds = np.array([0.0 - _EPSILON, *inner, 1.0 + _EPSILON])
        self.curve = curve_name
        self.summation_method = str(summation_method).lower()
        super().__init__(name=name, dtype=dtype)
        if num_labels and not multi_label:
            raise _errors.GradkitValueError(
                "`num_labels` is needed only when `multi_label` is True, as in Keras. Leave it out, or pass multi_label=True."
            )
        self.multi_label = multi_label
        self.num_labels = num_labels
        self.label_weights = None if label_weights is None else np.asarray(label_weights, self._dtype)
        self._from_logits = from_logits
        self._built = False
        if not multi_label:
            self._build(None)
        elif num_labels:
            self._build((None, num_labels))

    @property
    def thresholds(self):
        """The thresholds the counts are taken at."""
        return list(self._thresholds)

    def _build(self, shape):
        if self.multi_label:
            if len(shape) != 2:
                raise _errors.GradkitValueError(
                    f"`y_pred` must have rank 2 when `multi_label=True`, as in Keras. Found rank {len(shape)}; "
                    f"full shape received for `y_pred`: {tuple(shape)}."
                )
            self._num_labels = shape[1]
            self._counts_variables((self.num_thresholds, self._num_labels))
        else:
            self._counts_variables((self.num_thresholds,))
        self._built = True

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_pred = convert(y_pred)
        if not self._built:
            self._build(tuple(y_pred.shape))
        if self._from_logits:
            with _unrecorded():
                y_pred = call(jax.nn.sigmoid, y_pred)
        label_weights = None if self.multi_label or self.label_weights is None else tuple(self.label_weights.tolist())
        self._accumulate(
            y_true,
            y_pred,
            sample_weight,
            thresholds=tuple(self._thresholds.tolist()),
            multi_label=self.multi_label,
            label_weights=label_weights,
            clip=self._evenly,
        )

    def result(self):
        if not self._built:
            return convert(np.zeros((), self._dtype))
        weights = None if self.label_weights is None else tuple(self.label_weights.tolist())
        return call(
            _auc,
            self.true_positives.value,
            self.false_positives.value,
            self.true_negatives.value,
            self.false_negatives.value,
            curve=self.curve,
            summation=self.summation_method,
            multi_label=self.multi_label,
            label_weights=weights,
        )

    def reset_state(self):
        if self._built:
            super().reset_state()

    def get_config(self):
        config = {
            "num_thresholds": self.num_thresholds,
            "curve": self.curve,
            "summation_method": self.summation_method,
            "multi_label": self.multi_label,
            "num_labels": self.num_labels,
            "label_weights": None if self.label_weights is None else self.label_weights.tolist(),
            "from_logits": self._from_logits,
        }
        if self._init_from_thresholds:
            config["thresholds"] = self.thresholds[1:-1]
        return {**super().get_config(), **config}


def _auc(tp, fp, tn, fn, *, curve, summation, multi_label, label_weights):
    """Keras' ``AUC.result`` on the accumulated counts."""
    if curve == "PR" and summation == "interpolation":
        dtp = tp[:-1] - tp[1:]
        p = tp + fp
        dp = p[:-1] - p[1:]
        slope = _divide_no_nan(dtp, jnp.maximum(dp, 0))
        intercept = tp[1:] - slope * p[1:]
        ratio = jnp.where(
            (p[:-1] > 0) & (p[1:] > 0), _divide_no_nan(p[:-1], jnp.maximum(p[1:], 0)), jnp.ones_like(p[1:])
        )
        terms = _divide_no_nan(slope * (dtp + intercept * jnp.log(ratio)), jnp.maximum(tp[1:] + fn[1:], 0))
    else:
        recall = _divide_no_nan(tp, tp + fn)
        if curve == "ROC":
            x, y = _divide_no_nan(fp, fp + tn), recall
        elif curve == "PR":
            x, y = recall, _divide_no_nan(tp, tp + fp)
        else:
            scale = _divide_no_nan(tp + fn, tn + fp)
            recall_gain = jnp.where(tp == 0, 0.0, 1.0 - scale * _divide_no_nan(fn, tp))
            precision_gain = jnp.where(tp == 0, 1.0, 1.0 - scale * _divide_no_nan(fp, tp))
            x, y = jnp.maximum(recall_gain, 0.0), precision_gain
        if summation == "interpolation":
            heights = (y[:-1] + y[1:]) / 2.0
        elif summation == "minoring":
            heights = jnp.minimum(y[:-1], y[1:])
        else:
            heights = jnp.maximum(y[:-1], y[1:])
        terms = (x[:-1] - x[1:]) * heights
    if not multi_label:
        return jnp.sum(terms)
    by_label = jnp.sum(terms, axis=0)
    if label_weights is None:
        return jnp.mean(by_label)
    w = jnp.asarray(label_weights, by_label.dtype)
    return _divide_no_nan(jnp.sum(by_label * w), jnp.sum(w))


NAMES = (
    "TruePositives FalsePositives TrueNegatives FalseNegatives Precision Recall AUC SensitivityAtSpecificity "
    "SpecificityAtSensitivity PrecisionAtRecall RecallAtPrecision"
)
