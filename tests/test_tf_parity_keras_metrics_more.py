"""More ``tf.keras.metrics`` against real Keras on TensorFlow: each metric over two updates (with
and without sample weights), its function form, ``reset_state``, configs, and the top-k
accuracies on ties and higher-rank inputs."""

import numpy as np
import pytest

import gradkit.tf as gtf

RNG = np.random.default_rng(0)
SCORES = RNG.random((6, 5)).astype(np.float32)
ONE_HOT = np.eye(5, dtype=np.float32)[[0, 3, 4, 1, 1, 2]]
LABELS = np.array([0, 3, 4, 1, 1, 2], np.int32)
SIGNS = np.where(RNG.random((6, 5)) > 0.5, 1.0, -1.0).astype(np.float32)
POSITIVE = RNG.random((6, 5)).astype(np.float32) + 0.1
WEIGHTS = np.array([1.0, 0.5, 2.0, 0.0, 1.0, 3.0], np.float32)

METRICS = {
    "Hinge": (lambda m: m.Hinge(), SIGNS, SCORES * 2 - 1),
    "SquaredHinge": (lambda m: m.SquaredHinge(), SIGNS, SCORES * 2 - 1),
    "CategoricalHinge": (lambda m: m.CategoricalHinge(), ONE_HOT, SCORES),
    "LogCoshError": (lambda m: m.LogCoshError(), POSITIVE, SCORES),
    "MeanAbsolutePercentageError": (lambda m: m.MeanAbsolutePercentageError(), POSITIVE, SCORES),
    "MeanSquaredLogarithmicError": (lambda m: m.MeanSquaredLogarithmicError(), POSITIVE, SCORES),
    "Poisson": (lambda m: m.Poisson(), POSITIVE, SCORES + 0.1),
    "CosineSimilarity": (lambda m: m.CosineSimilarity(), POSITIVE - 0.5, SCORES - 0.5),
    "CosineSimilarity-axis0": (lambda m: m.CosineSimilarity(axis=0), POSITIVE - 0.5, SCORES - 0.5),
    "RootMeanSquaredError": (lambda m: m.RootMeanSquaredError(), POSITIVE, SCORES),
    "TopKCategoricalAccuracy": (lambda m: m.TopKCategoricalAccuracy(k=2), ONE_HOT, SCORES),
    "SparseTopKCategoricalAccuracy": (lambda m: m.SparseTopKCategoricalAccuracy(k=3), LABELS, SCORES),
    "SparseTopK-sorted-ids": (
        lambda m: m.SparseTopKCategoricalAccuracy(k=2, from_sorted_ids=True),
        LABELS,
        np.argsort(-SCORES, axis=-1).astype(np.int32),
    ),
}


@pytest.mark.parametrize("name", list(METRICS))
def test_metrics_match_keras(name):
    tf = pytest.importorskip("tensorflow")
    make, y_true, y_pred = METRICS[name]
    results = []
    for lib in (tf, gtf):
        metric = make(lib.keras.metrics)
        metric.update_state(y_true[:3], y_pred[:3])
        first = float(metric.result().numpy())
        # Keras' axis-0 cosine similarity has one value per column: weights do not fit it.
        metric.update_state(y_true[3:], y_pred[3:], sample_weight=None if "axis0" in name else WEIGHTS[3:])
        second = float(metric.result().numpy())
        metric.reset_state()
        results.append((first, second, float(metric.result().numpy()), metric.get_config()))
    (*want, want_config), (*got, got_config) = results
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert {k: v for k, v in got_config.items() if k != "dtype"} == {
        k: v for k, v in want_config.items() if k != "dtype"
    }


FUNCTIONS = {
    "hinge": (SIGNS, SCORES),
    "squared_hinge": (SIGNS, SCORES),
    "categorical_hinge": (ONE_HOT, SCORES),
    "logcosh": (POSITIVE, SCORES),
    "mape": (POSITIVE, SCORES),
    "msle": (POSITIVE, SCORES),
    "poisson": (POSITIVE, SCORES + 0.1),
    "huber": (POSITIVE, SCORES * 3),
    "kullback_leibler_divergence": (POSITIVE / POSITIVE.sum(-1, keepdims=True), SCORES / SCORES.sum(-1, keepdims=True)),
    "top_k_categorical_accuracy": (ONE_HOT, SCORES),
    "sparse_top_k_categorical_accuracy": (LABELS, SCORES),
}


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_functions_match_keras(name):
    tf = pytest.importorskip("tensorflow")
    y_true, y_pred = FUNCTIONS[name]
    want = getattr(tf.keras.metrics, name)(y_true, y_pred).numpy()
    got = getattr(gtf.keras.metrics, name)(y_true, y_pred).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_top_k_counts_ties_and_takes_higher_ranks():
    tf = pytest.importorskip("tensorflow")
    scores = np.array([[0.5, 0.5, 0.1, 0.5], [0.2, 0.9, 0.9, 0.1]], np.float32)
    labels = np.array([2, 0], np.int32)
    for k in (1, 2, 3):
        want = tf.keras.metrics.sparse_top_k_categorical_accuracy(labels, scores, k=k).numpy()
        np.testing.assert_array_equal(
            gtf.keras.metrics.sparse_top_k_categorical_accuracy(labels, scores, k=k).numpy(), want
        )
    cube = RNG.random((2, 3, 5)).astype(np.float32)
    cube_labels = RNG.integers(0, 5, (2, 3)).astype(np.int32)
    want = tf.keras.metrics.sparse_top_k_categorical_accuracy(cube_labels, cube, k=2).numpy()
    got = gtf.keras.metrics.sparse_top_k_categorical_accuracy(cube_labels, cube, k=2).numpy()
    assert got.shape == want.shape == (2, 3)
    np.testing.assert_array_equal(got, want)


def test_sparse_top_k_never_counts_a_label_outside_the_classes():
    # A padding -1 or a label past the last class is a miss in Keras (tf.math.in_top_k), for any k.
    tf = pytest.importorskip("tensorflow")
    scores = np.array([[0.1, 0.7, 0.2], [0.5, 0.3, 0.2], [0.2, 0.2, 0.6], [0.3, 0.3, 0.4]], np.float32)
    labels = np.array([3, -1, 2, 7], np.int32)
    for k in (1, 2, 3):
        want = tf.keras.metrics.sparse_top_k_categorical_accuracy(labels, scores, k=k).numpy()
        got = gtf.keras.metrics.sparse_top_k_categorical_accuracy(labels, scores, k=k).numpy()
        np.testing.assert_array_equal(got, want)
        want = float(tf.keras.metrics.SparseTopKCategoricalAccuracy(k=k)(labels, scores))
        assert float(gtf.keras.metrics.SparseTopKCategoricalAccuracy(k=k)(labels, scores)) == pytest.approx(want)
