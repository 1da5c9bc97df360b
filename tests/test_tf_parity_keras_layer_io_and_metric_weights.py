"""Keras guide patterns: ``layer.output`` / ``layer.input`` of a functional model's layers
(the Grad-CAM recipe builds a model of an inner layer's output), and ``Metric.add_weight`` with
Keras 3's signature (``shape=()`` by default, any initializer; ``reset_state`` to zeros).
Oracles: hand derivations, and TensorFlow/Keras where installed."""

import numpy as np
import pytest

import gradkit.tf as gtf

_IMG = np.random.RandomState(0).rand(2, 8, 8, 1).astype("float32")


def _grad_cam(tf):
    keras = tf.keras
    inp = keras.Input((8, 8, 1))
    x = keras.layers.Conv2D(4, 3, activation="relu", name="last_conv", kernel_initializer="glorot_uniform")(inp)
    pooled = keras.layers.GlobalAveragePooling2D()(x)
    model = keras.Model(inp, keras.layers.Dense(3, name="head")(pooled))
    conv = model.get_layer("last_conv")
    grad_model = keras.Model(model.input, [conv.output, model.output])
    return model, grad_model, conv


def _heatmap(tf, model, grad_model):
    with tf.GradientTape() as tape:
        conv_out, preds = grad_model(_IMG)
        score = preds[:, 0]
    grads = tape.gradient(score, conv_out)
    return np.asarray(conv_out), np.asarray(preds), np.asarray(grads)


def test_layer_output_builds_the_grad_cam_model():
    model, grad_model, conv = _grad_cam(gtf)
    conv_out, preds, grads = _heatmap(gtf, model, grad_model)
    np.testing.assert_allclose(preds, np.asarray(model(_IMG)), rtol=1e-6)
    assert conv_out.shape == (2, 6, 6, 4) and conv.input.shape == (None, 8, 8, 1)
    # score = mean over the 36 positions of conv_out, dotted with the head's first column (plus
    # bias): its gradient is that column / 36 wherever the ReLU passed (by hand).
    column = model.get_layer("head").get_weights()[0][:, 0]
    np.testing.assert_allclose(grads, np.broadcast_to(column / 36, grads.shape), rtol=1e-5, atol=1e-7)


def test_grad_cam_matches_tensorflow():
    tf = pytest.importorskip("tensorflow")
    theirs_model, theirs_grad, _ = _grad_cam(tf)
    ours_model, ours_grad, _ = _grad_cam(gtf)
    ours_model.set_weights(theirs_model.get_weights())
    for a, b in zip(_heatmap(gtf, ours_model, ours_grad), _heatmap(tf, theirs_model, theirs_grad)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_a_layer_never_called_on_keras_tensors_has_no_output():
    with pytest.raises(AttributeError, match=r"\[gradkit\] The layer dense_never has never been called"):
        gtf.keras.layers.Dense(2, name="dense_never").output  # noqa: B018


def _counter(tf):
    class Counter(tf.keras.metrics.Metric):
        def __init__(self, name="counter", **kwargs):
            super().__init__(name=name, **kwargs)
            self.total = self.add_weight(name="total", initializer="zeros")
            self.offset = self.add_weight(shape=(2,), name="offset", initializer="ones")

        def update_state(self, y_true, y_pred, sample_weight=None):
            self.total.assign_add(tf.reduce_sum(y_pred))

        def result(self):
            return self.total + tf.reduce_sum(self.offset)

    m = Counter()
    m.update_state([1.0], [2.0, 3.0])
    first = float(m.result())
    m.reset_state()
    return first, float(m.result()), [tuple(v.shape) for v in m.variables]


def test_metric_add_weight_takes_keras_3s_signature():
    # 2 + 3 summed, plus the offset of ones (2); reset_state zeros every state variable, as Keras does.
    assert _counter(gtf) == (7.0, 0.0, [(), (2,)])


def test_metric_add_weight_matches_keras():
    tf = pytest.importorskip("tensorflow")
    assert _counter(gtf) == _counter(tf)


def _recompiled(tf):
    x = np.random.RandomState(0).randn(8, 3).astype("float32")
    y = np.arange(8) % 2
    m = tf.keras.Sequential(
        [tf.keras.Input((3,)), tf.keras.layers.Dense(3, kernel_initializer="ones"), tf.keras.layers.Dense(2)]
    )
    m.compile("sgd", tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    m.fit(x, y, verbose=0)
    m.layers[0].trainable = False
    m.compile("sgd")  # a new optimizer only: the loss and metrics compiled before stay
    h = m.fit(x, y, verbose=0)
    return sorted(h.history), [x.name for x in m.metrics], h.history["loss"][0], m.get_weights()


def test_recompiling_without_loss_or_metrics_keeps_them():
    names, metrics, loss, _ = _recompiled(gtf)
    assert names == ["accuracy", "loss"] and metrics == ["loss", "compile_metrics"]
    assert np.isfinite(loss)


def test_recompiling_matches_keras():
    tf = pytest.importorskip("tensorflow")
    theirs = _recompiled(tf)
    gtf.keras.utils.set_random_seed(0)
    ours = _recompiled(gtf)
    assert ours[:2] == theirs[:2]
    assert np.isfinite(ours[2]) and np.isfinite(theirs[2])  # the second Dense's random start differs


_FEATURES = np.random.default_rng(0).normal(size=(2, 4)).astype(np.float32)


def _feature_extractor(K, weights=None):
    model = K.Sequential([K.Input((4,)), K.layers.Dense(3, activation="relu", name="a"), K.layers.Dense(2, name="b")])
    if weights is not None:
        model.set_weights(weights)
    extractor = K.Model(inputs=model.inputs, outputs=[layer.output for layer in model.layers])
    shapes = [tuple(t.shape) for t in model.inputs + model.outputs]
    return model, shapes, [np.asarray(o) for o in extractor([_FEATURES])]


def test_a_sequential_with_an_input_has_keras_inputs_and_outputs():
    model, shapes, (hidden, out) = _feature_extractor(gtf.keras)
    assert shapes == [(None, 4), (None, 2)]
    kernel_a, bias_a, kernel_b, bias_b = model.get_weights()
    # The feature-extraction recipe gives each layer's output for the input (by hand).
    np.testing.assert_allclose(hidden, np.maximum(_FEATURES @ kernel_a + bias_a, 0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out, hidden @ kernel_b + bias_b, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out, np.asarray(model(_FEATURES)), rtol=1e-6)


def test_sequential_feature_extraction_matches_keras():
    keras = pytest.importorskip("keras")
    theirs_model, theirs_shapes, theirs = _feature_extractor(keras)
    _, ours_shapes, ours = _feature_extractor(gtf.keras, theirs_model.get_weights())
    assert ours_shapes == theirs_shapes
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_a_sequential_s_outputs_follow_added_layers():
    model = gtf.keras.Sequential([gtf.keras.Input((4,)), gtf.keras.layers.Dense(3)])
    assert tuple(model.outputs[0].shape) == (None, 3)
    model.add(gtf.keras.layers.Dense(5))
    assert tuple(model.outputs[0].shape) == (None, 5)
    model.pop()
    assert tuple(model.outputs[0].shape) == (None, 3)
