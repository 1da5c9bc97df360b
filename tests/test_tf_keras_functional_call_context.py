"""A functional model's call as Keras 3 makes it: a dict of inputs is matched by key whatever
order the dict was written in; inputs whose sizes differ from the Inputs' are refused; and the
``training`` the model is called with (``fit``: True, ``predict``: False) replaces the one each
layer was called with when the graph was built (Keras 3's ``operation_fn``), so
``base(x, training=False)`` trains its BatchNormalization under ``fit``. Oracles: hand
derivations, and Keras itself."""

import numpy as np
import pytest

import gradkit.tf as gtf

keras = gtf.keras


def test_dict_inputs_written_in_unsorted_order_are_matched_by_key():
    a = keras.Input((2,), name="alpha")
    b = keras.Input((2,), name="beta")
    model = keras.Model({"zz": a, "aa": b}, a - 10.0 * b)
    out = model({"zz": np.ones((2, 2), np.float32), "aa": np.zeros((2, 2), np.float32)})
    np.testing.assert_array_equal(out.numpy(), np.ones((2, 2)))  # a - 10 b with a = 1, b = 0


def test_inputs_in_the_wrong_order_are_refused():
    a = keras.Input((2,), name="a")
    b = keras.Input((3,), name="b")
    model = keras.Model([b, a], keras.layers.Dense(1)(keras.layers.Concatenate()([a, b])))
    with pytest.raises(ValueError, match=r"\[gradkit\].*Input 0 with name 'b'.*expected shape=\(None, 3\)"):
        model([np.ones((6, 2), np.float32), np.ones((6, 3), np.float32)])
    assert model([np.ones((6, 3), np.float32), np.ones((6, 2), np.float32)]).shape == (6, 1)


def test_dropout_built_with_training_false_drops_when_the_model_trains():
    inputs = keras.Input((64,))
    model = keras.Model(inputs, keras.layers.Dropout(0.5, seed=1)(inputs, training=False))
    x = np.ones((4, 64), np.float32)
    trained = model(x, training=True).numpy()
    assert set(np.unique(trained)) == {0.0, 2.0}  # dropped, the rest scaled by 1 / (1 - 0.5)
    np.testing.assert_array_equal(model(x).numpy(), x)  # no training given: the recorded False


def test_batch_normalization_built_with_training_true_predicts_with_moving_statistics():
    inputs = keras.Input((3,))
    model = keras.Model(inputs, keras.layers.BatchNormalization()(inputs, training=True))
    x = np.array([[1.0, 2.0, 3.0], [3.0, 6.0, 9.0]], np.float32)
    # predict calls with training=False: moving mean 0, variance 1, so x / sqrt(1 + 1e-3).
    np.testing.assert_allclose(model.predict(x, verbose=0), x / np.sqrt(1.0 + 1e-3), rtol=1e-6)


def test_fine_tuning_a_base_called_with_training_false_updates_its_moving_statistics():
    base_inputs = keras.Input((2,))
    base = keras.Model(base_inputs, keras.layers.BatchNormalization()(base_inputs))
    inputs = keras.Input((2,))
    model = keras.Model(inputs, keras.layers.Dense(1)(base(inputs, training=False)))
    model.compile(keras.optimizers.SGD(0.0), loss="mse")
    x = np.array([[1.0, 4.0], [3.0, 8.0]], np.float32)
    model.fit(x, np.zeros((2, 1), np.float32), batch_size=2, epochs=1, shuffle=False, verbose=0)
    moving_mean = base.layers[-1].moving_mean.numpy()
    # One training step with momentum 0.99: 0.99 * 0 + 0.01 * batch mean.
    np.testing.assert_allclose(moving_mean, 0.01 * x.mean(axis=0), rtol=1e-6)


def test_matches_keras():
    pytest.importorskip("tensorflow")
    import keras as real_keras

    rng = np.random.RandomState(7)
    x = (rng.randn(16, 4) * 3 + 2).astype(np.float32)
    y = rng.randn(16, 1).astype(np.float32)

    def build(k):
        base_inputs = k.Input((4,))
        base = k.Model(base_inputs, k.layers.BatchNormalization()(k.layers.Dense(4)(base_inputs)))
        inputs = k.Input((4,))
        model = k.Model(inputs, k.layers.Dense(1)(base(inputs, training=False)))
        model.compile(k.optimizers.SGD(0.05), loss="mse")
        return model

    theirs, ours = build(real_keras), build(keras)
    ours.set_weights(theirs.get_weights())
    want = theirs.fit(x, y, epochs=2, batch_size=8, shuffle=False, verbose=0).history["loss"]
    got = ours.fit(x, y, epochs=2, batch_size=8, shuffle=False, verbose=0).history["loss"]
    np.testing.assert_allclose(got, want, rtol=1e-5)
    for w_ours, w_theirs in zip(ours.get_weights(), theirs.get_weights()):
        np.testing.assert_allclose(w_ours, w_theirs, rtol=1e-5, atol=1e-6)


def test_building_the_graph_leaves_moving_statistics_and_losses_alone():
    # Keras builds a functional model symbolically: a BatchNormalization recorded with
    # training=True keeps its initial moving statistics, and model.losses holds only the
    # weight penalties (no activity penalty of the zeros the graph was built on).
    inputs = keras.Input((3,))
    normalized = keras.layers.BatchNormalization()(inputs, training=True)
    dense = keras.layers.Dense(
        2, kernel_initializer="ones", bias_initializer="ones", activity_regularizer=keras.regularizers.L1(0.1)
    )
    model = keras.Model(inputs, dense(normalized))
    bn = model.layers[1]
    np.testing.assert_array_equal(bn.moving_mean.numpy(), np.zeros(3))
    np.testing.assert_array_equal(bn.moving_variance.numpy(), np.ones(3))
    assert model.losses == []
