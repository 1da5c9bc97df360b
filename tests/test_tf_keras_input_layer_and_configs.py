"""Keras' feature-extraction idiom ``Model(m.input, [l.output for l in m.layers])`` (an
InputLayer's output is its Input), ``Model.from_config`` of Keras' in-memory config (tuples
where JSON has lists), and ``ActivityRegularization``'s L1 gradient at 0 (TensorFlow's abs: 0
there). Oracles: the models' own layers called in turn, hand derivations, and Keras."""

import numpy as np
import pytest

import gradkit.tf as gtf

keras = gtf.keras
X = np.random.RandomState(0).randn(5, 4).astype(np.float32)


def test_feature_extraction_from_every_layer_output():
    inputs = keras.Input((4,))
    hidden = keras.layers.Dense(3, activation="relu")(inputs)
    model = keras.Model(inputs, keras.layers.Dense(1)(hidden))
    assert model.layers[0].output is model.input and model.layers[0].input == []
    features = keras.Model(model.input, [layer.output for layer in model.layers])
    x, h, y = features(X)
    np.testing.assert_array_equal(x.numpy(), X)
    np.testing.assert_allclose(h.numpy(), model.layers[1](X).numpy(), rtol=1e-6)
    np.testing.assert_allclose(y.numpy(), model(X).numpy(), rtol=1e-6)


def test_an_input_layer_made_alone_declares_its_output():
    layer = keras.layers.InputLayer(shape=(3,))
    assert layer.output.shape == (None, 3) and layer.output is layer.output


def test_from_config_takes_tuples_of_arguments():
    inputs = keras.Input((4,), name="a")
    config = keras.Model(inputs, keras.layers.Dense(3, name="d")(inputs)).get_config()
    for layer in config["layers"]:
        for node in layer["inbound_nodes"]:
            node["args"] = tuple(node["args"])  # as Keras' get_config() holds them in memory
    rebuilt = keras.Model.from_config(config)
    assert [type(layer).__name__ for layer in rebuilt.layers] == ["InputLayer", "Dense"]
    assert rebuilt(X).shape == (5, 3)


def test_activity_regularization_l1_gradient_is_zero_at_zero():
    y = gtf.constant([[0.0, 2.0, -1.0], [0.0, 0.0, 3.0]])
    layer = keras.layers.ActivityRegularization(l1=0.5)
    with gtf.GradientTape() as tape:
        tape.watch(y)
        layer(y)
        loss = gtf.add_n(layer.losses)
    # d/dy of l1 * sum|y| / batch = l1 * sign(y) / 2, with sign(0) = 0.
    np.testing.assert_allclose(tape.gradient(loss, y).numpy(), 0.5 * np.sign(y.numpy()) / 2)


def _activity_gradient(lib, layer, y):
    t = lib.constant(y)
    with lib.GradientTape() as tape:
        tape.watch(t)
        layer(t)
        loss = lib.add_n(layer.losses)
    return np.asarray(tape.gradient(loss, t))


def test_matches_keras():
    tf = pytest.importorskip("tensorflow")
    import keras as real_keras

    inputs = real_keras.Input((4,), name="a")
    theirs = real_keras.Model(inputs, real_keras.layers.Dense(3, name="d")(inputs))
    ours = keras.Model.from_config(theirs.get_config())
    ours.set_weights(theirs.get_weights())
    np.testing.assert_allclose(ours(X).numpy(), np.asarray(theirs(X)), rtol=1e-6)
    y = np.array([[0.0, 2.0, -1.0]], np.float32)
    np.testing.assert_allclose(
        _activity_gradient(gtf, keras.layers.ActivityRegularization(l1=0.5), y),
        _activity_gradient(tf, real_keras.layers.ActivityRegularization(l1=0.5), y),
        rtol=1e-6,
    )
