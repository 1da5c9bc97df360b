"""A subclassed model whose ``call()`` takes no ``training`` runs its layers with ``training=None``
in ``fit``, ``evaluate`` and ``predict``, as Keras' trainer calls it: a BatchNormalization inside
keeps its moving statistics and normalizes by them. Against Keras (skipped without TensorFlow) and
a NumPy rewrite of the same steps."""

import numpy as np
import pytest

import gradkit.tf as gtf

_RNG = np.random.default_rng(0)
_X = _RNG.normal(size=(16, 4)).astype("float32")
_Y = _RNG.normal(size=(16, 1)).astype("float32")


def _run(tf, run_eagerly):
    seen = []

    class Probe(tf.keras.layers.Layer):
        def call(self, x, training=None):
            seen.append(training)
            return x

    class Model(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.bn = tf.keras.layers.BatchNormalization()
            self.probe = Probe()
            self.dense = tf.keras.layers.Dense(1, kernel_initializer="ones")

        def call(self, x):
            return self.dense(self.probe(self.bn(x)))

    model = Model()
    model.compile(optimizer=tf.keras.optimizers.SGD(0.01), loss="mse", run_eagerly=run_eagerly)
    history = model.fit(_X, _Y, batch_size=8, epochs=1, verbose=0, shuffle=False)
    return {
        "moving_mean": model.bn.moving_mean.numpy(),
        "loss": history.history["loss"][0],
        "evaluate": model.evaluate(_X, _Y, verbose=0),
        "predict": model.predict(_X, verbose=0),
        "training_seen": set(seen),
    }


def _numpy_rewrite():
    """Two SGD steps of mse through BatchNormalization in inference mode (moving mean 0, variance 1,
    epsilon 1e-3) and Dense(1) with ones; the moving statistics never change."""
    scale = 1 / np.sqrt(1 + 1e-3)
    gamma, beta, kernel, bias = np.ones(4), np.zeros(4), np.ones((4, 1)), np.zeros(1)
    losses = []
    for start in (0, 8):
        x, y = _X[start : start + 8].astype(np.float64), _Y[start : start + 8]
        h = x * scale * gamma + beta
        err = h @ kernel + bias - y
        losses.append(np.mean(err**2))
        d_out = 2 * err / err.size
        d_h = d_out @ kernel.T
        kernel, bias = kernel - 0.01 * h.T @ d_out, bias - 0.01 * d_out.sum(0)
        gamma, beta = gamma - 0.01 * (d_h * x * scale).sum(0), beta - 0.01 * d_h.sum(0)
    prediction = (_X * scale * gamma + beta) @ kernel + bias
    return np.mean(losses), prediction, np.mean((prediction - _Y) ** 2)


@pytest.mark.parametrize("run_eagerly", [True, False])
def test_fit_calls_a_model_without_training_without_it(run_eagerly):
    got = _run(gtf, run_eagerly)
    loss, prediction, evaluate = _numpy_rewrite()
    np.testing.assert_array_equal(got["moving_mean"], np.zeros(4))
    np.testing.assert_allclose(got["loss"], loss, rtol=1e-5)
    np.testing.assert_allclose(got["predict"], prediction, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got["evaluate"], evaluate, rtol=1e-5)
    assert got["training_seen"] == {None}


def test_matches_keras():
    tf = pytest.importorskip("tensorflow")
    ours, theirs = _run(gtf, False), _run(tf, False)
    assert ours["training_seen"] == theirs["training_seen"]
    for key in ("moving_mean", "loss", "evaluate", "predict"):
        np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-5, atol=1e-6)
