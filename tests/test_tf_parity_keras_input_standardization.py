"""How a Keras model takes its inputs and gives its outputs, against Keras 3 on TensorFlow 2.21:
an input whose rank is one off its ``Input``'s loses or gains a trailing axis of size 1, and is
refused otherwise (``fit`` on a dataset that was never batched is an error, and leaves the
weights as they were); a Sequential takes its one input in a list; a dict of inputs is read by
the ``Input`` names; a dict output keeps the order the model was given, through ``call``,
``predict`` and ``tf.function``, and ``output_names`` are the output layers' names."""

import warnings

import numpy as np
import pytest

import gradkit.tf as gtf

tf_real = pytest.importorskip("tensorflow")

_RNG = np.random.default_rng(0)
X = _RNG.normal(size=(6, 4)).astype(np.float32)
Y = _RNG.normal(size=(6, 2)).astype(np.float32)


def _dense_model(tf, input_shape, functional=True):
    if functional:
        i = tf.keras.Input(input_shape, name="feat")
        return tf.keras.Model(i, tf.keras.layers.Dense(2, kernel_initializer="ones", bias_initializer="zeros")(i))
    return tf.keras.Sequential(
        [tf.keras.Input(input_shape, name="feat"), tf.keras.layers.Dense(2, kernel_initializer="ones")]
    )


@pytest.mark.parametrize("functional", [True, False])
def test_an_input_one_rank_short_is_refused_and_fit_changes_nothing(functional):
    for tf in (tf_real, gtf):
        model = _dense_model(tf, (4,), functional)
        with pytest.raises(ValueError, match="Invalid input shape"):
            model(X[0])
        model.compile(optimizer="sgd", loss="mse")
        before = [w.copy() for w in model.get_weights()]
        with pytest.raises(ValueError, match="Invalid input shape"):
            model.fit(tf.data.Dataset.from_tensor_slices((X, Y)), epochs=1, verbose=0, shuffle=False)
        for w, b in zip(model.get_weights(), before):
            np.testing.assert_array_equal(w, b)


@pytest.mark.parametrize(
    ("input_shape", "data"),
    [((3, 1), X[:, :3]), ((3,), X[:, :3, None])],
    ids=["gains-a-trailing-axis", "loses-a-trailing-axis"],
)
@pytest.mark.parametrize("functional", [True, False])
def test_a_trailing_axis_of_size_one_is_added_or_dropped(input_shape, data, functional):
    outs = [np.asarray(_dense_model(tf, input_shape, functional)(data)) for tf in (tf_real, gtf)]
    assert outs[1].shape == outs[0].shape
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-6)


def test_a_sequential_takes_its_one_input_in_a_list():
    results = []
    for tf in (tf_real, gtf):
        model = _dense_model(tf, (4,), functional=False)
        model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="mse")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # Keras warns that the structure differs
            called = np.asarray(model([X]))
            predicted = model.predict([X], verbose=0)
            loss = model.fit([X], Y, verbose=0, shuffle=False, batch_size=6).history["loss"]
        results.append((called, predicted, loss, model.get_weights()))
    for got, want in zip(results[1], results[0]):
        for g, w in zip(got if isinstance(got, list) else [got], want if isinstance(want, list) else [want]):
            np.testing.assert_allclose(g, w, rtol=1e-5)


@pytest.mark.parametrize("functional", [True, False])
def test_a_dict_of_inputs_is_read_by_the_input_names(functional):
    results = []
    for tf in (tf_real, gtf):
        model = _dense_model(tf, (4,), functional)
        model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="mse")
        data = tf.data.Dataset.from_tensor_slices(({"feat": X}, Y)).batch(3)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            loss = model.fit(data, epochs=1, verbose=0).history["loss"]
            results.append((loss, np.asarray(model({"feat": X}))))
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-5)
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-5)


def test_a_dict_of_inputs_without_an_input_name_is_refused():
    model = _dense_model(gtf, (4,))
    with pytest.raises(ValueError, match=r"\[gradkit\] .*named \['feat'\].*\['other'\]"):
        model({"other": X})


def _dict_output_model(tf):
    i = tf.keras.Input((4,))
    return tf.keras.Model(
        i, {"r": tf.keras.layers.Dense(2, name="reg")(i), "c": tf.keras.layers.Dense(3, name="cls")(i)}
    )


def test_a_dict_output_keeps_its_order_and_output_names_are_layer_names():
    results = []
    for tf in (tf_real, gtf):
        model = _dict_output_model(tf)
        results.append(
            (list(model(X)), list(model.predict(X, verbose=0)), list(model.predict_on_batch(X)), model.output_names)
        )
    assert results[1] == results[0] == (["r", "c"], ["r", "c"], ["r", "c"], ["cls", "reg"])


def test_tf_function_returns_dicts_in_the_order_the_function_built_them():
    keys = []
    for tf in (tf_real, gtf):
        fn = tf.function(lambda x, tf=tf: {"z": x, "a": [x, {"q": x * 2, "b": x}]})
        out = [fn(tf.constant(1.0)) for _ in range(2)]  # the first call traces; the second does not
        keys.append([(list(o), list(o["a"][1])) for o in out])
    assert keys[1] == keys[0] == [(["z", "a"], ["q", "b"])] * 2
