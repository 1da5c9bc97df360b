"""``compile(steps_per_execution=N)`` trains as one step per batch does: the same History, weights and
iterations (gradkit runs the N steps one per compiled call). Against a NumPy rewrite of SGD on mse
and Keras (skipped without TensorFlow)."""

import numpy as np
import pytest

import gradkit.tf as gtf

_RNG = np.random.default_rng(0)
_X = _RNG.normal(size=(20, 3)).astype("float32")
_Y = _RNG.normal(size=(20, 1)).astype("float32")


def _fit(tf):
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1, kernel_initializer="ones")])
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="mse", steps_per_execution=2)
    history = model.fit(_X, _Y, batch_size=4, epochs=2, verbose=0, shuffle=False)
    return (
        np.asarray(history.history["loss"]),
        model.get_weights()[0],
        int(model.optimizer.iterations.numpy()),
        model.get_compile_config()["steps_per_execution"],
    )


def _numpy_sgd():
    kernel, bias, losses = np.ones((3, 1)), np.zeros(1), []
    for _ in range(2):
        epoch = []
        for start in range(0, 20, 4):
            x, y = _X[start : start + 4].astype(np.float64), _Y[start : start + 4]
            err = x @ kernel + bias - y
            epoch.append(np.mean(err**2))
            d_out = 2 * err / err.size
            kernel, bias = kernel - 0.1 * x.T @ d_out, bias - 0.1 * d_out.sum(0)
        losses.append(np.mean(epoch))
    return np.asarray(losses), kernel


def test_steps_per_execution_trains_as_single_steps():
    losses, kernel, iterations, recorded = _fit(gtf)
    expected_losses, expected_kernel = _numpy_sgd()
    np.testing.assert_allclose(losses, expected_losses, rtol=1e-5)
    np.testing.assert_allclose(kernel, expected_kernel, rtol=1e-5, atol=1e-6)
    assert (iterations, recorded) == (10, 2)


def test_steps_per_execution_must_be_a_positive_int():
    model = gtf.keras.Sequential([gtf.keras.Input((3,)), gtf.keras.layers.Dense(1)])
    with pytest.raises(ValueError, match=r"\[gradkit\] .*steps_per_execution=0.*positive int"):
        model.compile(optimizer="sgd", loss="mse", steps_per_execution=0)


def test_matches_keras():
    tf = pytest.importorskip("tensorflow")
    ours, theirs = _fit(gtf), _fit(tf)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-5)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-5, atol=1e-6)
    assert ours[2:] == theirs[2:]
