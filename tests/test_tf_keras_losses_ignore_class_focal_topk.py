"""Keras losses and metrics at their edges: sparse cross-entropy's ``ignore_class`` (the ignored
labels' entries 0 and left out of the reduction, no gradient through them), binary focal
cross-entropy of a sigmoid layer's output (from its logits, as Keras' TensorFlow backend), and
top-k accuracy of rows with a non-finite score (never a hit, as ``in_top_k``). Oracles: NumPy
by hand, and Keras on TensorFlow where it is installed."""

import numpy as np
import pytest

import gradkit.tf as gtf

LOGITS = np.array([[[2.0, 0.5, -1.0], [0.1, 0.2, 0.3]], [[-0.5, 1.5, 0.0], [1.0, -2.0, 0.5]]], np.float32)  # (2, 2, 3)
LABELS = np.array([[0, 2], [2, 1]], np.int32)


def _ignore_class_program(tf):
    logits = tf.Variable(LOGITS)
    loss = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=2)
    with tf.GradientTape() as tape:
        value = loss(LABELS, logits)
    per_entry = tf.keras.losses.sparse_categorical_crossentropy(LABELS, LOGITS, from_logits=True, ignore_class=2)
    summed = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=2, reduction="sum")
    metric = tf.keras.metrics.SparseCategoricalCrossentropy(from_logits=True, ignore_class=2)
    metric.update_state(LABELS, LOGITS)
    return {
        "value": value.numpy(),
        "grad": tape.gradient(value, logits).numpy(),
        "per_entry": np.asarray(per_entry),
        "sum": summed(LABELS, LOGITS).numpy(),
        "metric": metric.result().numpy(),
    }


def _log_softmax(x):
    x = x - x.max(axis=-1, keepdims=True)
    return x - np.log(np.exp(x).sum(axis=-1, keepdims=True))


def test_ignore_class_leaves_those_labels_out():
    got = _ignore_class_program(gtf)
    valid = LABELS != 2
    nll = -np.take_along_axis(_log_softmax(LOGITS), LABELS.clip(0, 1)[..., None], axis=-1)[..., 0]
    want = np.where(valid, nll, 0.0)
    np.testing.assert_allclose(got["per_entry"], want, rtol=1e-5)
    np.testing.assert_allclose(got["value"], want.sum() / valid.sum(), rtol=1e-5)  # the mean over kept labels
    np.testing.assert_allclose(got["sum"], want.sum(), rtol=1e-5)
    np.testing.assert_allclose(got["metric"], want.mean(), rtol=1e-5)  # a metric averages the zeros too
    softmax = np.exp(_log_softmax(LOGITS))
    one_hot = np.eye(3, dtype=np.float32)[LABELS.clip(0, 1)]
    np.testing.assert_allclose(got["grad"], (softmax - one_hot) * valid[..., None] / valid.sum(), atol=1e-6)


def _focal_program(tf):
    layer = tf.keras.layers.Dense(1, activation="sigmoid", kernel_initializer="ones")
    x = np.array([[30.0], [-25.0], [0.5]], np.float32)
    y = np.array([[0.0], [1.0], [1.0]], np.float32)
    layer(x)
    with tf.GradientTape() as tape:
        loss = tf.keras.losses.BinaryFocalCrossentropy()(y, layer(x))
    return {"loss": loss.numpy(), "grad": tape.gradient(loss, layer.kernel).numpy()}


def test_binary_focal_crossentropy_of_a_sigmoid_output_uses_its_logits():
    got = _focal_program(gtf)
    z, y = np.array([30.0, -25.0, 0.5]), np.array([0.0, 1.0, 1.0])
    p = 1.0 / (1.0 + np.exp(-z))
    xent = np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z)))  # from the logits, unclipped
    p_t = y * p + (1 - y) * (1 - p)
    np.testing.assert_allclose(got["loss"], np.mean((1 - p_t) ** 2 * xent), rtol=1e-4)


def test_top_k_accuracy_of_a_row_with_a_non_finite_score_is_a_miss():
    preds = np.array([[np.inf, 1.0, 0.0, 2.0], [0.5, np.nan, 0.2, 0.1], [0.1, 0.9, 0.3, 0.2]], np.float32)
    sparse = gtf.keras.metrics.sparse_top_k_categorical_accuracy([0, 2, 1], preds, k=2)
    dense = gtf.keras.metrics.top_k_categorical_accuracy(np.eye(4, dtype=np.float32)[[0, 2, 1]], preds, k=2)
    np.testing.assert_array_equal(np.asarray(sparse), [0.0, 0.0, 1.0])
    np.testing.assert_array_equal(np.asarray(dense), [0.0, 0.0, 1.0])


@pytest.mark.parametrize("program", [_ignore_class_program, _focal_program], ids=lambda p: p.__name__)
def test_matches_keras(program):
    tf_real = pytest.importorskip("tensorflow")
    ours, theirs = program(gtf), program(tf_real)
    for key in theirs:
        np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-4, atol=1e-6, err_msg=key)


def _wrapper_round_trip(tf):
    metric = tf.keras.metrics.MeanMetricWrapper(tf.keras.losses.mse)
    config = metric.get_config()
    again = tf.keras.metrics.MeanMetricWrapper.from_config(config)
    again.update_state([[1.0, 2.0]], [[0.0, 0.0]])
    return config, float(again.result())


def test_a_mean_metric_wrapper_writes_its_function_in_its_config():
    config, result = _wrapper_round_trip(gtf)
    assert result == 2.5  # mean((1, 2)^2), by hand
    assert config["fn"]["config"] == "mean_squared_error"
    tf_real = pytest.importorskip("tensorflow")
    assert _wrapper_round_trip(tf_real) == (config, result)
