"""More of Keras 3's whole-model saving in gradkit.tf, against Keras 3 on TensorFlow: every
optimizer's state in a ``.keras`` archive is laid out as Keras lays it out, so a model trained in
one library, saved and loaded in the other continues training to the same weights; and
``model.to_json`` / ``tf.keras.models.model_from_json`` as Keras 3 writes and reads them."""

import json
import zipfile

import numpy as np
import pytest

import gradkit.tf as gtf

X = np.linspace(-1.0, 1.0, 6, dtype=np.float32).reshape(2, 3)
Y = np.sin(np.arange(4, dtype=np.float32)).reshape(2, 2)


def _sequential(lib):
    lib.keras.backend.clear_session()
    return lib.keras.Sequential(
        [lib.keras.Input((3,)), lib.keras.layers.Dense(4, activation="tanh"), lib.keras.layers.Dense(2)], name="seq"
    )


OPTIMIZERS = {
    "sgd": lambda o: o.SGD(0.1),
    "sgd_nesterov": lambda o: o.SGD(0.1, momentum=0.9, nesterov=True),
    "adam_amsgrad": lambda o: o.Adam(0.05, amsgrad=True),
    "adamw_amsgrad": lambda o: o.AdamW(0.05, weight_decay=0.1, amsgrad=True),
    "rmsprop": lambda o: o.RMSprop(0.01),
    "rmsprop_momentum": lambda o: o.RMSprop(0.01, momentum=0.5),
    "rmsprop_centered": lambda o: o.RMSprop(0.01, centered=True),
    "rmsprop_momentum_centered": lambda o: o.RMSprop(0.01, momentum=0.5, centered=True),
    "adagrad": lambda o: o.Adagrad(0.1),
    "adadelta": lambda o: o.Adadelta(1.0),
    "adamax": lambda o: o.Adamax(0.05),
    "nadam": lambda o: o.Nadam(0.05),
    "ftrl": lambda o: o.Ftrl(0.1, l1_regularization_strength=0.01, beta=0.1),
    "lion": lambda o: o.Lion(0.01),
    "lamb": lambda o: o.Lamb(0.05),
    "adafactor": lambda o: o.Adafactor(0.1),
    "muon": lambda o: o.Muon(0.05),
    "schedule_free_adamw": lambda o: o.ScheduleFreeAdamW(0.05, warmup_steps=1),
    "adam_ema": lambda o: o.Adam(0.05, use_ema=True, ema_overwrite_frequency=3),
    "sgd_accumulation": lambda o: o.SGD(0.1, momentum=0.5, gradient_accumulation_steps=2),
    "adam_schedule": lambda o: o.Adam(o.schedules.ExponentialDecay(0.05, decay_steps=2, decay_rate=0.5)),
}


def _compiled(lib, optimizer):
    model = _sequential(lib)
    model.compile(optimizer=OPTIMIZERS[optimizer](lib.keras.optimizers), loss="mse")
    return model


def _optimizer_group(path):
    """The archive's optimizer datasets: name, shape, dtype and value, in Keras' order."""
    import h5py

    with zipfile.ZipFile(path) as zf, zf.open("model.weights.h5") as raw:
        with h5py.File(raw, "r") as f:
            group = f["optimizer"]["vars"]
            return [(key, group[key].shape, group[key].dtype, group[key][()]) for key in sorted(group, key=int)]


def _fit(model, epochs):
    model.fit(X, Y, epochs=epochs, batch_size=1, shuffle=False, verbose=0)


def _layout(group):
    return [(key, shape, dtype) for key, shape, dtype, _ in group]


def _assert_groups_close(got, want):
    assert _layout(got) == _layout(want)
    for (_, _, _, g), (_, _, _, w) in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


def _trained_and_saved(lib, optimizer, weights, path):
    model = _compiled(lib, optimizer)
    model.set_weights(weights)
    _fit(model, 2)
    model.save(path)
    return model


# Keras on TensorFlow steps ScheduleFreeAdamW differently from the algorithm gradkit follows (see
# test_tf_parity_keras_optimizer_schedule_free.py): its archive is checked for layout only.
_SAME_STEPS = sorted(set(OPTIMIZERS) - {"schedule_free_adamw"})


@pytest.mark.parametrize("optimizer", _SAME_STEPS)
def test_optimizer_state_crosses_libraries_and_training_continues_alike(optimizer, tmp_path):
    tf = pytest.importorskip("tensorflow")
    pytest.importorskip("h5py")
    keras_path, path = tmp_path / "keras.keras", tmp_path / "gradkit.keras"
    weights = _sequential(tf).get_weights()
    keras_model = _trained_and_saved(tf, optimizer, weights, keras_path)
    _trained_and_saved(gtf, optimizer, weights, path)
    # The same datasets in the same order, with the same dtypes, shapes and values.
    _assert_groups_close(_optimizer_group(path), _optimizer_group(keras_path))
    from_keras = gtf.keras.models.load_model(keras_path)
    in_keras = tf.keras.models.load_model(path)
    for m in (keras_model, from_keras, in_keras):
        _fit(m, 2)
    for continued in (from_keras, in_keras):
        for g, w in zip(continued.get_weights(), keras_model.get_weights()):
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)
    # ... and the optimizer's state went on alike.
    keras_model.save(keras_path)
    from_keras.save(path)
    _assert_groups_close(_optimizer_group(path), _optimizer_group(keras_path))


def test_schedule_free_adamw_state_has_keras_layout_and_round_trips(tmp_path):
    tf = pytest.importorskip("tensorflow")
    pytest.importorskip("h5py")
    keras_path, path = tmp_path / "keras.keras", tmp_path / "gradkit.keras"
    weights = _sequential(tf).get_weights()
    _trained_and_saved(tf, "schedule_free_adamw", weights, keras_path)
    model = _trained_and_saved(gtf, "schedule_free_adamw", weights, path)
    assert _layout(_optimizer_group(path)) == _layout(_optimizer_group(keras_path))
    assert tf.keras.models.load_model(path).optimizer.iterations.numpy() == 4
    loaded = gtf.keras.models.load_model(path)
    for m in (model, loaded):
        _fit(m, 1)
    for g, w in zip(loaded.get_weights(), model.get_weights()):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-7)


def test_optimizer_wrapping_others_is_refused_after_steps(tmp_path):
    pytest.importorskip("h5py")
    model = _sequential(gtf)
    model.compile(optimizer=gtf.keras.optimizers.LossScaleOptimizer(gtf.keras.optimizers.Adam(0.01)), loss="mse")
    model.save(tmp_path / "before_steps.keras")
    _fit(model, 1)
    with pytest.raises(NotImplementedError, match="LossScaleOptimizer") as info:
        model.save(tmp_path / "after_steps.keras")
    assert "tf.train.Checkpoint" in str(info.value)


# -- to_json / model_from_json -------------------------------------------------------------------


def _functional(lib):
    """A shared layer, two inputs, dict outputs and a nested Sequential."""
    lib.keras.backend.clear_session()
    a, b = lib.keras.Input((3,), name="a"), lib.keras.Input((3,), name="b")
    shared = lib.keras.layers.Dense(3, name="shared")
    h = shared(lib.keras.layers.Dense(3, name="front")(shared(a)))
    inner = lib.keras.Sequential([lib.keras.Input((6,)), lib.keras.layers.Dense(2, name="inner_dense")], name="inner")
    s = inner(lib.keras.layers.Concatenate(name="cat")([h, b]))
    return lib.keras.Model([a, b], {"s": s, "h": lib.keras.layers.Dropout(0.2, name="drop")(h)}, name="net")


def _compiled_sequential(lib):
    model = _sequential(lib)
    model.compile(optimizer=lib.keras.optimizers.RMSprop(0.01, momentum=0.5), loss="mae", metrics=["mse"])
    return model


MODELS = {"sequential": _sequential, "functional": _functional, "compiled": _compiled_sequential}


def _inputs(build):
    return [X, np.cos(X)] if build is _functional else X


def _assert_same_outputs(got, want):
    got, want = gtf.nest.flatten(got), gtf.nest.flatten(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_to_json_equals_keras(name):
    tf = pytest.importorskip("tensorflow")
    build = MODELS[name]
    assert json.loads(build(gtf).to_json()) == json.loads(build(tf).to_json())
    # json.dumps' keyword arguments pass through, as in Keras.
    assert build(gtf).to_json(indent=2, sort_keys=True) == build(tf).to_json(indent=2, sort_keys=True)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_each_library_reads_the_others_json(name):
    tf = pytest.importorskip("tensorflow")
    build = MODELS[name]
    keras_model, model = build(tf), build(gtf)
    keras_json, gradkit_json = keras_model.to_json(), model.to_json()
    from_keras = gtf.keras.models.model_from_json(keras_json)
    in_keras = tf.keras.models.model_from_json(gradkit_json)
    assert json.loads(from_keras.to_json()) == json.loads(keras_json)
    assert json.loads(in_keras.to_json()) == json.loads(gradkit_json)
    assert from_keras.built and [layer.name for layer in from_keras.layers] == [
        layer.name for layer in keras_model.layers
    ]
    # Like Keras, a JSON with a compile config gives a compiled model (with a fresh optimizer).
    assert from_keras.compiled == in_keras.compiled == (name == "compiled")
    if name == "compiled":
        assert from_keras.optimizer.get_config() == model.optimizer.get_config()
    from_keras.set_weights(keras_model.get_weights())
    _assert_same_outputs(from_keras(_inputs(build)), keras_model(_inputs(build)))


def test_model_from_json_finds_custom_classes():
    class Doubler(gtf.keras.layers.Layer):
        def call(self, x):
            return 2.0 * x

    x = gtf.keras.Input((3,))
    text = gtf.keras.Model(x, Doubler(name="doubler")(x)).to_json()
    with pytest.raises(TypeError, match="Doubler"):
        gtf.keras.models.model_from_json(text)
    model = gtf.keras.models.model_from_json(text, custom_objects={"Doubler": Doubler})
    _assert_same_outputs(model(X), 2.0 * X)


def test_model_from_json_refuses_what_is_not_a_model_json():
    config = json.loads(_sequential(gtf).to_json())
    with pytest.raises(TypeError, match=r"\[gradkit\].*json.dumps"):
        gtf.keras.models.model_from_json(config)
    with pytest.raises(ValueError, match=r"\[gradkit\].*not a serialized model"):
        gtf.keras.models.model_from_json("[1, 2]")
