"""``tf.keras.metrics`` built on confusion counts (TruePositives ... FalseNegatives, Precision,
Recall, AUC, SensitivityAtSpecificity and the like, the F-scores) against real Keras on TensorFlow: each over two updates (the second weighted),
after ``reset_state``, with their configs; thresholds, top_k, class_id, multi-label AUC, every
curve and summation method, and inside a ``tf.function`` step."""

import numpy as np
import pytest

import gradkit.tf as gtf
from tests._metric_parity import assert_same_config, two_updates

RNG = np.random.default_rng(3)
PROBS = RNG.random((8, 4)).astype(np.float32)
LABELS = (RNG.random((8, 4)) > 0.5).astype(np.float32)
WEIGHTS = np.array([1.0, 0.5, 2.0, 0.0, 1.0, 3.0, 0.25, 1.5], np.float32)
FLAT_PROBS = RNG.random(12).astype(np.float32)
FLAT_LABELS = (RNG.random(12) > 0.4).astype(np.float32)
FLAT_WEIGHTS = RNG.random(12).astype(np.float32)

METRICS = {
    "TruePositives": (lambda m: m.TruePositives(), "2d"),
    "FalsePositives-list": (lambda m: m.FalsePositives(thresholds=[0.2, 0.7]), "2d"),
    "TrueNegatives-even": (lambda m: m.TrueNegatives(thresholds=[0.0, 0.5, 1.0]), "2d"),
    "FalseNegatives": (lambda m: m.FalseNegatives(thresholds=0.3), "flat"),
    "Precision": (lambda m: m.Precision(), "2d"),
    "Precision-thresholds": (lambda m: m.Precision(thresholds=[0.1, 0.4, 0.8]), "2d"),
    "Precision-top_k": (lambda m: m.Precision(top_k=2), "2d"),
    "Precision-class_id": (lambda m: m.Precision(class_id=1, thresholds=0.4), "2d"),
    "Recall": (lambda m: m.Recall(), "flat"),
    "Recall-top_k-class_id": (lambda m: m.Recall(top_k=2, class_id=3), "2d"),
    "AUC": (lambda m: m.AUC(), "flat"),
    "AUC-2d": (lambda m: m.AUC(num_thresholds=50), "2d"),
    "AUC-PR": (lambda m: m.AUC(curve="PR"), "flat"),
    "AUC-PR-minoring": (lambda m: m.AUC(curve="PR", summation_method="minoring"), "flat"),
    "AUC-ROC-majoring": (lambda m: m.AUC(summation_method="majoring", num_thresholds=7), "flat"),
    "AUC-PRGAIN": (lambda m: m.AUC(curve="PRGAIN"), "flat"),
    "AUC-thresholds": (lambda m: m.AUC(thresholds=[0.3, 0.1, 0.6]), "flat"),
    "AUC-thresholds-even": (lambda m: m.AUC(thresholds=[0.25, 0.5, 0.75]), "flat"),
    "AUC-multi_label": (lambda m: m.AUC(multi_label=True), "2d"),
    "AUC-multi_label-num_labels-weights": (
        lambda m: m.AUC(multi_label=True, num_labels=4, label_weights=[1.0, 0.5, 0.0, 2.0]),
        "2d",
    ),
    "AUC-label_weights": (lambda m: m.AUC(label_weights=[1.0, 0.5, 0.0, 2.0], num_thresholds=20), "2d"),
    "AUC-from_logits": (lambda m: m.AUC(from_logits=True), "logits"),
    "SensitivityAtSpecificity": (lambda m: m.SensitivityAtSpecificity(0.6), "flat"),
    "SpecificityAtSensitivity-class_id": (lambda m: m.SpecificityAtSensitivity(0.5, class_id=2), "2d"),
    "PrecisionAtRecall": (lambda m: m.PrecisionAtRecall(0.7, num_thresholds=40), "2d"),
    "RecallAtPrecision": (lambda m: m.RecallAtPrecision(0.5), "flat"),
    "RecallAtPrecision-one-threshold": (lambda m: m.RecallAtPrecision(0.5, num_thresholds=1), "flat"),
    "F1Score": (lambda m: m.F1Score(), "2d"),
    "F1Score-threshold-micro": (lambda m: m.F1Score(average="micro", threshold=0.5), "2d"),
    "FBetaScore-macro": (lambda m: m.FBetaScore(average="macro", beta=2.0, threshold=0.3), "2d"),
    "FBetaScore-weighted": (lambda m: m.FBetaScore(average="weighted", beta=0.5), "2d"),
}


def _data(kind):
    if kind == "flat":
        return FLAT_LABELS, FLAT_PROBS, FLAT_WEIGHTS
    if kind == "logits":
        return FLAT_LABELS, (FLAT_PROBS - 0.5) * 6, FLAT_WEIGHTS
    return LABELS, PROBS, WEIGHTS


def _run(lib, make, kind):
    return two_updates(lib, make, *_data(kind))


@pytest.mark.parametrize("name", list(METRICS))
def test_metrics_match_keras(name):
    tf = pytest.importorskip("tensorflow")
    make, kind = METRICS[name]
    *want, want_config = _run(tf, make, kind)
    *got, got_config = _run(gtf, make, kind)
    for g, w in zip(got, want):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    assert_same_config(got_config, want_config, drop=("label_weights",))  # a list here, an array there
    np.testing.assert_allclose(_label_weights(got_config), _label_weights(want_config))


def _label_weights(config):
    weights = config.get("label_weights")
    return np.zeros(0) if weights is None else np.asarray(weights)


def test_auc_of_a_perfect_and_a_reversed_ranking():
    # Independent of Keras: a ranking that puts every positive first has ROC AUC 1, the reverse 0.
    labels = np.array([1, 1, 0, 0, 0], np.float32)
    scores = np.array([0.9, 0.8, 0.3, 0.2, 0.1], np.float32)
    auc = gtf.keras.metrics.AUC(num_thresholds=1000)
    auc.update_state(labels, scores)
    np.testing.assert_allclose(float(auc.result()), 1.0, atol=1e-3)
    reverse = gtf.keras.metrics.AUC(num_thresholds=1000)
    reverse.update_state(labels, 1 - scores)
    np.testing.assert_allclose(float(reverse.result()), 0.0, atol=1e-3)


def test_precision_and_recall_by_hand():
    labels = np.array([1, 0, 1, 1, 0], np.float32)
    scores = np.array([0.9, 0.6, 0.4, 0.7, 0.2], np.float32)  # predicted positive (> 0.5): 0, 1, 3
    precision, recall = gtf.keras.metrics.Precision(), gtf.keras.metrics.Recall()
    precision.update_state(labels, scores)
    recall.update_state(labels, scores)
    np.testing.assert_allclose(float(precision.result()), 2 / 3, rtol=1e-6)
    np.testing.assert_allclose(float(recall.result()), 2 / 3, rtol=1e-6)


def _streamed_in_a_function(lib):
    auc, precision = lib.keras.metrics.AUC(num_thresholds=30), lib.keras.metrics.Precision(thresholds=0.4)

    @lib.function
    def step(y, p):
        auc.update_state(y, p)
        precision.update_state(y, p)
        return auc.result(), precision.result()

    for i in range(3):
        out = step(LABELS[2 * i : 2 * i + 2], PROBS[2 * i : 2 * i + 2])
    return [float(np.asarray(x)) for x in out]


def test_updated_inside_a_tf_function_step():
    tf = pytest.importorskip("tensorflow")
    np.testing.assert_allclose(_streamed_in_a_function(gtf), _streamed_in_a_function(tf), rtol=1e-5)


def test_bad_arguments_are_refused():
    m = gtf.keras.metrics
    with pytest.raises(ValueError, match=r"\[gradkit\].*\[0, 1\]"):
        m.Precision(thresholds=[0.5, 1.5])
    with pytest.raises(ValueError, match=r"\[gradkit\].*curve"):
        m.AUC(curve="area")
    with pytest.raises(ValueError, match=r"\[gradkit\].*summation"):
        m.AUC(summation_method="trapezoid")
    with pytest.raises(ValueError, match=r"\[gradkit\].*num_thresholds"):
        m.AUC(num_thresholds=1)
    with pytest.raises(ValueError, match=r"\[gradkit\].*num_labels"):
        m.AUC(num_labels=3)
    with pytest.raises(ValueError, match=r"\[gradkit\].*specificity"):
        m.SensitivityAtSpecificity(1.5)
    with pytest.raises(ValueError, match=r"\[gradkit\].*beta=2.0"):
        m.FBetaScore(beta=2)
    with pytest.raises(ValueError, match=r"\[gradkit\].*average"):
        m.F1Score(average="mean")
    with pytest.raises(ValueError, match=r"\[gradkit\].*2D"):
        m.F1Score().update_state(FLAT_LABELS, FLAT_PROBS)
    auc = m.AUC(multi_label=True)
    with pytest.raises(ValueError, match=r"\[gradkit\].*rank 2"):
        auc.update_state(FLAT_LABELS, FLAT_PROBS)


GRID_METRICS = {
    "AUC-101": lambda m: m.AUC(num_thresholds=101),
    "AUC-PR-51": lambda m: m.AUC(curve="PR", num_thresholds=51),
    "Precision-linspace": lambda m: m.Precision(thresholds=list(np.linspace(0, 1, 101))),
    "TruePositives-linspace": lambda m: m.TruePositives(thresholds=list(np.linspace(0, 1, 101))),
    "PrecisionAtRecall": lambda m: m.PrecisionAtRecall(0.5, num_thresholds=101),
    "SensitivityAtSpecificity": lambda m: m.SensitivityAtSpecificity(0.5, num_thresholds=200),
}


@pytest.mark.parametrize("name", sorted(GRID_METRICS))
def test_predictions_on_evenly_spaced_thresholds_count_as_keras_buckets_them(name):
    # Keras counts by bucket, ceil(y_pred * (T - 1)) - 1 in float32, so 0.3, 0.6 and 0.15 (rounded
    # predictions on a 101-point grid) count above their own threshold.
    tf = pytest.importorskip("tensorflow")
    rng = np.random.default_rng(3)
    y_true = (rng.random(300) > 0.5).astype(np.float32)
    y_pred = np.round(rng.random(300), 2).astype(np.float32)
    y_pred[:6] = [0.0, 1.0, 0.3, 0.6, 0.15, 0.27]
    weights = rng.integers(1, 4, 300).astype(np.float32)  # whole weights: sums exact in float32
    results = []
    for library in (tf, gtf):
        metric = GRID_METRICS[name](library.keras.metrics)
        metric.update_state(y_true, y_pred, sample_weight=weights)
        results.append(np.asarray(metric.result()))
    np.testing.assert_allclose(results[1], results[0], rtol=1e-6, atol=1e-7)
