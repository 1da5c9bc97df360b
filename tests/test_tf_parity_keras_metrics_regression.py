"""``tf.keras.metrics`` R2Score and the Pearson and concordance correlations against real Keras
on TensorFlow (two updates, the second weighted, a reset, the config; the function forms), and
against their textbook definitions in NumPy."""

import numpy as np
import pytest

import gradkit.tf as gtf
from tests._metric_parity import assert_same_config, two_updates

RNG = np.random.default_rng(7)
TARGETS = RNG.standard_normal((10, 3)).astype(np.float32)
PREDS = (TARGETS + 0.5 * RNG.standard_normal((10, 3))).astype(np.float32)
WEIGHTS = RNG.random(10).astype(np.float32)
COLUMN_TARGETS, COLUMN_PREDS = TARGETS[:, :1], PREDS[:, 0]

METRICS = {
    "R2Score": (lambda m: m.R2Score(), TARGETS, PREDS),
    "R2Score-per-output": (lambda m: m.R2Score(class_aggregation=None), TARGETS, PREDS),
    "R2Score-variance-weighted": (lambda m: m.R2Score(class_aggregation="variance_weighted_average"), TARGETS, PREDS),
    "R2Score-adjusted": (lambda m: m.R2Score(num_regressors=2), TARGETS, PREDS),
    "R2Score-adjusted-too-few": (lambda m: m.R2Score(num_regressors=40), TARGETS, PREDS),
    "R2Score-column": (lambda m: m.R2Score(), COLUMN_TARGETS, COLUMN_PREDS),
    "PearsonCorrelation": (lambda m: m.PearsonCorrelation(), TARGETS, PREDS),
    "PearsonCorrelation-axis0": (lambda m: m.PearsonCorrelation(axis=0), TARGETS, PREDS),
    "ConcordanceCorrelation": (lambda m: m.ConcordanceCorrelation(), TARGETS, PREDS),
}


@pytest.mark.filterwarnings("ignore:More independent predictors")  # Keras' adjusted R2 after reset_state
@pytest.mark.parametrize("name", list(METRICS))
def test_metrics_match_keras(name):
    tf = pytest.importorskip("tensorflow")
    make, y_true, y_pred = METRICS[name]
    # Keras' axis-0 correlation has one value per column: per-sample weights do not fit it.
    weights = None if "axis0" in name else WEIGHTS
    *want, want_config = two_updates(tf, make, y_true, y_pred, weights)
    *got, got_config = two_updates(gtf, make, y_true, y_pred, weights)
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6)
    assert_same_config(got_config, want_config)


@pytest.mark.parametrize("name", ["pearson_correlation", "concordance_correlation"])
def test_functions_match_keras(name):
    tf = pytest.importorskip("tensorflow")
    for axis in (-1, 0):
        want = getattr(tf.keras.metrics, name)(TARGETS, PREDS, axis=axis).numpy()
        got = getattr(gtf.keras.metrics, name)(TARGETS, PREDS, axis=axis).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_against_the_definitions():
    t, p = TARGETS[:, 0].astype(np.float64), PREDS[:, 0].astype(np.float64)
    r2 = gtf.keras.metrics.R2Score()
    r2.update_state(t[:, None], p[:, None])
    np.testing.assert_allclose(float(r2.result()), 1 - np.sum((t - p) ** 2) / np.sum((t - t.mean()) ** 2), rtol=1e-5)
    pearson = float(gtf.keras.metrics.pearson_correlation(t, p))
    np.testing.assert_allclose(pearson, np.corrcoef(t, p)[0, 1], rtol=1e-5)
    lin = 2 * np.mean((t - t.mean()) * (p - p.mean())) / (t.var() + p.var() + (t.mean() - p.mean()) ** 2)
    np.testing.assert_allclose(float(gtf.keras.metrics.concordance_correlation(t, p)), lin, rtol=1e-5)


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match=r"\[gradkit\].*class_aggregation"):
        gtf.keras.metrics.R2Score(class_aggregation="mean")
    with pytest.raises(ValueError, match=r"\[gradkit\].*num_regressors"):
        gtf.keras.metrics.R2Score(num_regressors=-1)
    with pytest.raises(ValueError, match=r"\[gradkit\].*2D"):
        gtf.keras.metrics.R2Score().update_state(np.ones((2, 2, 2)), np.ones((2, 2, 2)))


def test_r2_score_variables_in_keras_order():
    # Keras' weight files hold a metric's variables by position: the order and shapes must match.
    tf = pytest.importorskip("tensorflow")

    def variables(module):
        metric = module.keras.metrics.R2Score()
        metric.update_state(TARGETS, PREDS)
        return [(v.name.split(":")[0].split("/")[-1], tuple(v.shape), np.asarray(v)) for v in metric.variables]

    got, want = variables(gtf), variables(tf)
    assert [(name, shape) for name, shape, _ in got] == [(name, shape) for name, shape, _ in want]
    for (_, _, g), (_, _, w) in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
