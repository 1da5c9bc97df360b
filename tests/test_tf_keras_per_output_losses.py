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


def _partial_dict_losses(keras_module):
    """A model with dict outputs, a loss for one of them, and targets for that one only: Keras
    trains it (the other output needs no target) and warns that its weights get no gradient."""
    rng = np.random.RandomState(0)
    a_np, y_np = rng.randn(8, 5).astype("float32"), rng.randn(8, 1).astype("float32")
    a = keras_module.Input((5,), name="a")
    h = keras_module.layers.Dense(4, name="h")(a)
    model = keras_module.Model(
        a,
        {"zeta": keras_module.layers.Dense(1, name="zeta")(h), "alpha": keras_module.layers.Dense(3, name="alpha")(h)},
    )
    model.set_weights([np.full(w.shape, 0.1, np.float32) for w in model.get_weights()])
    model.compile("sgd", loss={"zeta": "mse"})
    with pytest.warns(UserWarning, match="Gradients do not exist"):
        history = model.fit(a_np, {"zeta": y_np}, epochs=1, batch_size=8, verbose=0).history
    return history["loss"][0], a_np, y_np


def test_a_dict_output_without_a_loss_needs_no_target():
    loss, a_np, y_np = _partial_dict_losses(gtf.keras)
    h = a_np @ np.full((5, 4), 0.1, np.float32) + 0.1
    pred = h @ np.full((4, 1), 0.1, np.float32) + 0.1
    np.testing.assert_allclose(loss, np.mean((pred - y_np) ** 2), rtol=1e-5)  # the loss before the step


def test_a_dict_output_without_a_loss_matches_keras():
    pytest.importorskip("tensorflow")
    import keras

    np.testing.assert_allclose(_partial_dict_losses(gtf.keras)[0], _partial_dict_losses(keras)[0], rtol=1e-5)


def test_an_output_with_a_loss_and_no_target_raises():
    a = gtf.keras.Input((5,), name="a")
    model = gtf.keras.Model(
        a, {"zeta": gtf.keras.layers.Dense(1, name="zeta")(a), "alpha": gtf.keras.layers.Dense(2, name="alpha")(a)}
    )
    model.compile("sgd", loss={"zeta": "mse", "alpha": "mse"})
    with pytest.raises(ValueError, match=r"\[gradkit\] the model's output 'alpha' has a loss"):
        model.fit(np.ones((4, 5), np.float32), {"zeta": np.ones((4, 1), np.float32)}, verbose=0)


def test_a_loss_weights_dict_shorter_than_the_loss_dict_is_refused():
    a = gtf.keras.Input((5,), name="a")
    outputs = {"zeta": gtf.keras.layers.Dense(1, name="zeta")(a), "alpha": gtf.keras.layers.Dense(1, name="alpha")(a)}
    model = gtf.keras.Model(a, outputs)
    model.compile("sgd", loss={"zeta": "mse", "alpha": "mae"}, loss_weights={"zeta": 2.0})
    targets = {"zeta": np.ones((4, 1), np.float32), "alpha": np.ones((4, 1), np.float32)}
    with pytest.raises(
        ValueError, match=r"\[gradkit\] `loss_weights` must match the number of losses, got 2 losses and 1"
    ):
        model.fit(np.ones((4, 5), np.float32), targets, verbose=0)


@pytest.mark.parametrize("loss_weights", [{"b": 0.1}, [0.5]])
def test_loss_weights_of_another_length_than_a_loss_list_is_refused_as_keras_refuses_it(loss_weights):
    def run(k):
        a = k.Input((5,), name="a")
        model = k.Model(a, [k.layers.Dense(3, name="a_out")(a), k.layers.Dense(1, name="b")(a)])
        model.compile("sgd", loss=["sparse_categorical_crossentropy", "mse"], loss_weights=loss_weights)
        model.train_on_batch(np.ones((4, 5), np.float32), [np.zeros((4,), np.int32), np.ones((4, 1), np.float32)])

    with pytest.raises(ValueError, match=r"\[gradkit\] `loss_weights` must match the number of losses, got 2"):
        run(gtf.keras)
    keras = pytest.importorskip("keras")
    pytest.importorskip("tensorflow")
    with pytest.raises(ValueError, match="must match the number of losses"):
        run(keras)
