"""A model of several outputs logs each output's loss (``o1_loss``) as Keras does: its compiled
step runs in a graph where the batch size is unknown, so each batch's loss counts alike, also a
smaller last batch; with ``run_eagerly=True`` each counts by its size. The total ``loss`` counts
by size either way. Oracles: the per-batch losses by hand from the model's predictions, and Keras."""

import numpy as np
import pytest

import gradkit.tf as gtf

keras = gtf.keras
rs = np.random.RandomState(1)
X = rs.randn(24, 4).astype(np.float32)
Y1 = rs.randn(24, 1).astype(np.float32)
Y2 = rs.randn(24, 2).astype(np.float32)
BATCH = 7  # batches of 7, 7, 7 and 3


def _model(k):
    inputs = k.Input((4,), name="a")
    return k.Model(inputs, [k.layers.Dense(1, name="o1")(inputs), k.layers.Dense(2, name="o2")(inputs)])


def _batch_losses(model):
    p1, _ = model.predict(X, verbose=0)
    starts = range(0, len(X), BATCH)
    return np.array([np.mean((p1[i : i + BATCH] - Y1[i : i + BATCH]) ** 2) for i in starts]), np.array(
        [len(X[i : i + BATCH]) for i in starts]
    )


@pytest.mark.parametrize("run_eagerly", [False, True])
def test_each_outputs_loss_as_keras_logs_it(run_eagerly):
    model = _model(keras)
    model.compile("sgd", loss=["mse", "mse"], run_eagerly=run_eagerly)
    logs = model.evaluate(X, [Y1, Y2], batch_size=BATCH, return_dict=True, verbose=0)
    losses, sizes = _batch_losses(model)
    want = np.average(losses, weights=sizes) if run_eagerly else losses.mean()
    np.testing.assert_allclose(logs["o1_loss"], want, rtol=1e-5)


def test_matches_keras():
    pytest.importorskip("tensorflow")
    import keras as real_keras

    theirs, ours = _model(real_keras), _model(keras)
    ours.set_weights(theirs.get_weights())
    for model in (theirs, ours):
        model.compile("sgd", loss=["mse", "mse"])
    want = theirs.fit(X, [Y1, Y2], batch_size=10, epochs=2, shuffle=False, verbose=0).history
    got = ours.fit(X, [Y1, Y2], batch_size=10, epochs=2, shuffle=False, verbose=0).history
    for key in ("loss", "o1_loss", "o2_loss"):
        np.testing.assert_allclose(got[key], want[key], rtol=1e-5)


def test_targets_only_for_the_outputs_with_a_loss():
    inputs = keras.Input((4,))
    outputs = [keras.layers.Dense(units)(inputs) for units in (1, 2, 1)]
    model = keras.Model(inputs, outputs)
    model.compile("sgd", loss=["mse", None, "mae"])
    y3 = Y1 * 2.0
    logs = model.evaluate(X, [Y1, y3], batch_size=24, return_dict=True, verbose=0)
    p1, _, p3 = model.predict(X, verbose=0)
    want = np.mean((p1 - Y1) ** 2) + np.mean(np.abs(p3 - y3))  # the output without a loss takes no target
    np.testing.assert_allclose(logs["loss"], want, rtol=1e-5)
