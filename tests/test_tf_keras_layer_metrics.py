"""A layer's ``metrics`` (the subclassing guide's ``LogisticEndpoint``), and the error for a metric
on an output given no target. Oracles: the accuracy computed by hand, and Keras where TensorFlow is
installed."""

from __future__ import annotations

import numpy as np
import pytest

import gradkit.tf as gtf

TARGETS = np.array([[0.0], [1.0], [1.0], [0.0]], np.float32)
LOGITS = np.array([[1.0], [-1.0], [2.0], [-3.0]], np.float32)


def _endpoint(tf):
    class LogisticEndpoint(tf.keras.layers.Layer):
        def __init__(self, name=None):
            super().__init__(name=name)
            self.loss_fn = tf.keras.losses.BinaryCrossentropy(from_logits=True)
            self.accuracy_fn = tf.keras.metrics.BinaryAccuracy()

        def call(self, targets, logits, sample_weights=None):
            self.add_loss(self.loss_fn(targets, logits, sample_weights))
            self.accuracy_fn.update_state(targets, tf.nn.sigmoid(logits), sample_weights)
            return tf.nn.softmax(logits)

    layer = LogisticEndpoint()
    layer(tf.constant(TARGETS), tf.constant(LOGITS))
    return [m.name for m in layer.metrics], float(layer.metrics[0].result())


def test_a_layers_metrics_are_the_ones_it_holds():
    names, accuracy = _endpoint(gtf)
    predicted = (1 / (1 + np.exp(-LOGITS)) > 0.5).astype(np.float32)
    assert names == ["binary_accuracy"]
    assert accuracy == pytest.approx(float(np.mean(predicted == TARGETS)))


def test_a_metric_on_an_output_without_a_target_says_so():
    inputs = gtf.keras.Input((3,))
    model = gtf.keras.Model(
        inputs, [gtf.keras.layers.Dense(1, name="score")(inputs), gtf.keras.layers.Dense(2, name="cls")(inputs)]
    )
    model.compile(optimizer="sgd", loss=[None, "mse"], metrics=[["mae"], None])
    before = [w.copy() for w in model.get_weights()]
    with pytest.warns(UserWarning), pytest.raises(ValueError, match=r"\[gradkit\].*'score'.*target is None"):
        model.fit(np.ones((4, 3), "float32"), [None, np.ones((4, 2), "float32")], verbose=0)
    for a, b in zip(before, model.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_against_keras():
    tf = pytest.importorskip("tensorflow")
    (our_names, ours), (their_names, theirs) = _endpoint(gtf), _endpoint(tf)
    assert our_names == their_names
    assert ours == pytest.approx(theirs)
