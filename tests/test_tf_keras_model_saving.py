"""Keras 3's whole-model saving in gradkit.tf, against Keras 3 on TensorFlow: a functional model's
``get_config`` equals Keras' and ``from_config`` rebuilds it, ``model.save("m.keras")`` writes an
archive real Keras loads (and the other way round) with equal predictions, a compiled and trained
model's compile config and optimizer state survive the trip and training continues alike, and
the formats Keras 3 refuses (or gradkit does not cover) are refused."""

import json
import zipfile

import numpy as np
import pytest

import gradkit.tf as gtf

pytest.importorskip("h5py")  # the archive's weights file; gradkit does not depend on h5py

X = np.linspace(-1.0, 1.0, 6, dtype=np.float32).reshape(2, 3)
B = np.cos(np.arange(6, dtype=np.float32)).reshape(2, 3)
Y = np.sin(np.arange(4, dtype=np.float32)).reshape(2, 2)


def _functional(lib):
    """Shared layer, two inputs, dict outputs, Python operators, a nested Sequential."""
    lib.keras.backend.clear_session()
    a, b = lib.keras.Input((3,), name="a"), lib.keras.Input((3,), name="b")
    shared = lib.keras.layers.Dense(4, name="shared")
    h = shared(a)
    h2 = shared(lib.keras.layers.Dense(3, name="back")(h))
    x = lib.keras.layers.Dropout(0.5, name="drop")(h2)
    x = lib.keras.layers.BatchNormalization(name="bn")(x)
    joined = lib.keras.layers.Concatenate(name="cat")([x, h])
    inner = lib.keras.Sequential([lib.keras.Input((8,)), lib.keras.layers.Dense(2, name="inner_dense")], name="inner")
    s = inner(joined) * 2.0 + b[:, 1:]
    return lib.keras.Model([a, b], {"s": s, "g": h[:, 0], "n": -abs(h2)}, name="net")


def _nested_functional(lib):
    lib.keras.backend.clear_session()
    i = lib.keras.Input((3,), name="inner_in")
    block = lib.keras.Model(i, lib.keras.layers.Dense(2, activation="relu", name="inner_dense")(i), name="block")
    x = lib.keras.Input((3,), name="x")
    return lib.keras.Model(x, lib.keras.layers.Dense(2, name="head")(block(x)), name="outer")


def _shape_layers(lib):
    """Layers without weights: Keras records the input shape each was built for (build_config),
    except for those built when made (pooling, Dropout, Reshape, ...)."""
    lib.keras.backend.clear_session()
    i = lib.keras.Input((6, 6, 2), name="image")
    x = lib.keras.layers.RandomFlip(name="flip")(i)
    x = lib.keras.layers.Cropping2D(1, name="crop")(x)
    x = lib.keras.layers.AveragePooling2D(2, name="pool")(x)
    x = lib.keras.layers.Flatten(name="flat")(x)
    x = lib.keras.layers.Dropout(0.1, name="drop")(x)
    x = lib.keras.layers.RepeatVector(2, name="repeat")(x)
    return lib.keras.Model(i, lib.keras.layers.Reshape((16,), name="reshape")(x), name="shapes")


def _sequential(lib):
    lib.keras.backend.clear_session()
    return lib.keras.Sequential(
        [lib.keras.Input((3,)), lib.keras.layers.Dense(4, activation="tanh"), lib.keras.layers.Dense(2)], name="seq"
    )


def _json(config):
    return json.loads(json.dumps(config))


def _predict(model, inputs):
    return gtf.nest.map_structure(np.asarray, model(inputs))


def _assert_outputs_close(got, want):
    got, want = gtf.nest.flatten(got), gtf.nest.flatten(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("build", [_functional, _nested_functional, _shape_layers])
def test_functional_get_config_equals_keras(build):
    tf = pytest.importorskip("tensorflow")
    assert _json(build(gtf).get_config()) == _json(build(tf).get_config())


def _sequential_built_by(lib, how):
    lib.keras.backend.clear_session()
    model = lib.keras.Sequential(
        [
            lib.keras.layers.RandomFlip(),
            lib.keras.layers.Flatten(),
            lib.keras.layers.Dense(3),
            lib.keras.layers.Dropout(0.1),
        ]
    )
    if how == "build":
        model.build((None, 2, 2, 1))
    else:
        model(np.ones((2, 2, 2, 1), np.float32))
    return model


@pytest.mark.parametrize("how", ["build", "first_call"])
def test_sequential_built_without_an_input_has_keras_config(how):
    """Keras 3 gives such a Sequential an InputLayer of the shape it was built for, and each layer
    built at its first call (Dense, and Flatten and RandomFlip too) its build_config."""
    tf = pytest.importorskip("tensorflow")
    ours, theirs = _sequential_built_by(gtf, how), _sequential_built_by(tf, how)
    assert _json(ours.get_config()) == _json(theirs.get_config())
    assert [layer.name for layer in ours.layers] == [layer.name for layer in theirs.layers]


@pytest.mark.parametrize("build", [_functional, _nested_functional])
def test_functional_from_config_rebuilds_the_graph(build):
    tf = pytest.importorskip("tensorflow")
    inputs = [X, B] if build is _functional else X
    keras_model, model = build(tf), build(gtf)
    config = model.get_config()
    rebuilt = gtf.keras.Model.from_config(config)
    assert _json(rebuilt.get_config()) == _json(config)
    assert [type(layer).__name__ for layer in rebuilt.layers] == [type(layer).__name__ for layer in model.layers]
    rebuilt.set_weights(keras_model.get_weights())
    _assert_outputs_close(_predict(rebuilt, inputs), keras_model(inputs))
    # Keras' config, read by gradkit, makes the same model.
    from_keras = gtf.keras.Model.from_config(_json(keras_model.get_config()))
    from_keras.set_weights(keras_model.get_weights())
    _assert_outputs_close(_predict(from_keras, inputs), keras_model(inputs))


@pytest.mark.parametrize("build", [_functional, _nested_functional, _sequential])
def test_archive_written_by_gradkit_loads_in_keras(build, tmp_path):
    tf = pytest.importorskip("tensorflow")
    inputs = [X, B] if build is _functional else X
    keras_model, model = build(tf), build(gtf)
    model.set_weights(keras_model.get_weights())
    path = tmp_path / "model.keras"
    model.save(path)
    with zipfile.ZipFile(path) as zf:
        assert zf.namelist() == ["metadata.json", "config.json", "model.weights.h5"]
        assert json.loads(zf.read("metadata.json"))["keras_version"].startswith("3.")
    loaded = tf.keras.models.load_model(path)
    assert type(loaded).__name__ == type(keras_model).__name__
    _assert_outputs_close(loaded(inputs), keras_model(inputs))


@pytest.mark.parametrize("build", [_functional, _nested_functional, _sequential])
def test_archive_written_by_keras_loads_in_gradkit(build, tmp_path):
    tf = pytest.importorskip("tensorflow")
    inputs = [X, B] if build is _functional else X
    keras_model = build(tf)
    path = tmp_path / "model.keras"
    keras_model.save(path)
    loaded = gtf.keras.models.load_model(path)
    assert [layer.name for layer in loaded.layers] == [layer.name for layer in keras_model.layers]
    _assert_outputs_close(_predict(loaded, inputs), keras_model(inputs))
    # saved again by gradkit, it loads once more
    again = tmp_path / "again.keras"
    gtf.keras.saving.save_model(loaded, again)
    _assert_outputs_close(_predict(gtf.keras.saving.load_model(again), inputs), keras_model(inputs))


def _compiled(lib, optimizer):
    model = _sequential(lib)
    model.compile(optimizer=optimizer(lib), loss="mse", metrics=["mae"])
    return model


OPTIMIZERS = {
    "adam": lambda lib: lib.keras.optimizers.Adam(0.01),
    "sgd_momentum": lambda lib: lib.keras.optimizers.SGD(0.1, momentum=0.9),
}


@pytest.mark.parametrize("optimizer", sorted(OPTIMIZERS))
def test_trained_model_continues_training_as_keras(optimizer, tmp_path):
    tf = pytest.importorskip("tensorflow")
    make = OPTIMIZERS[optimizer]
    keras_model, model = _compiled(tf, make), _compiled(gtf, make)
    model.set_weights(keras_model.get_weights())
    for m in (keras_model, model):
        m.fit(X, Y, epochs=2, batch_size=1, shuffle=False, verbose=0)
    keras_path, path = tmp_path / "keras.keras", tmp_path / "gradkit.keras"
    keras_model.save(keras_path)
    model.save(path)

    def archive_config(p):
        with zipfile.ZipFile(p) as zf:
            return json.loads(zf.read("config.json"))

    assert archive_config(path)["compile_config"] == archive_config(keras_path)["compile_config"]
    assert archive_config(path)["build_config"] == archive_config(keras_path)["build_config"]
    from_keras = gtf.keras.models.load_model(keras_path)
    in_keras = tf.keras.models.load_model(path)
    assert type(from_keras.optimizer).__name__ == type(keras_model.optimizer).__name__
    assert len(from_keras.optimizer.variables) == len(keras_model.optimizer.variables)
    for got, want in zip(from_keras.optimizer.variables, keras_model.optimizer.variables):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-6)
    for got, want in zip(in_keras.optimizer.variables, keras_model.optimizer.variables):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-6)
    for m in (from_keras, in_keras):
        m.fit(X, Y, epochs=1, batch_size=1, shuffle=False, verbose=0)
    for got, want in zip(from_keras.get_weights(), in_keras.get_weights()):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_load_without_compile_leaves_the_model_uncompiled(tmp_path):
    model = _compiled(gtf, OPTIMIZERS["adam"])
    path = tmp_path / "m.keras"
    model.save(path)
    assert not gtf.keras.models.load_model(path, compile=False).compiled
    # Saved before any step, the optimizer held two variables; loaded, it is built for the
    # weights (as Keras builds it), so its state is skipped with Keras' warning.
    with pytest.warns(UserWarning, match="Skipping variable loading for optimizer 'adam'"):
        assert gtf.keras.models.load_model(path).compiled


def _subclassed(lib):
    @lib.keras.utils.register_keras_serializable(package="saving_test")
    class Scaled(lib.keras.Model):
        def __init__(self, units=2, **kwargs):
            super().__init__(**kwargs)
            self.units = units
            self.dense = lib.keras.layers.Dense(units)

        def call(self, x):
            return 2.0 * self.dense(x)

        def get_config(self):
            return {**super().get_config(), "units": self.units}

    lib.keras.backend.clear_session()
    model = Scaled(units=2, name="scaled")
    model(X)
    return model


def test_registered_subclassed_model_round_trips(tmp_path):
    tf = pytest.importorskip("tensorflow")
    keras_model, model = _subclassed(tf), _subclassed(gtf)
    model.set_weights(keras_model.get_weights())
    keras_path, path = tmp_path / "keras.keras", tmp_path / "gradkit.keras"
    keras_model.save(keras_path)
    model.save(path)
    _assert_outputs_close(tf.keras.models.load_model(path)(X), keras_model(X))
    loaded = gtf.keras.models.load_model(keras_path)
    assert type(loaded).__name__ == "Scaled" and loaded.units == 2
    _assert_outputs_close(_predict(loaded, X), keras_model(X))


def test_unregistered_class_needs_custom_objects(tmp_path):
    class Doubler(gtf.keras.layers.Layer):
        def call(self, x):
            return 2.0 * x

    x = gtf.keras.Input((3,))
    model = gtf.keras.Model(x, Doubler(name="doubler")(x))
    path = tmp_path / "m.keras"
    model.save(path)
    with pytest.raises(TypeError, match="Doubler"):
        gtf.keras.models.load_model(path)
    loaded = gtf.keras.models.load_model(path, custom_objects={"Doubler": Doubler})
    _assert_outputs_close(_predict(loaded, X), 2.0 * X)


@pytest.mark.parametrize(
    ("name", "error", "match"),
    [
        ("m.h5", NotImplementedError, "legacy HDF5"),
        ("m.hdf5", NotImplementedError, "legacy HDF5"),
        ("saved_model_dir", ValueError, "Invalid filepath extension"),
    ],
)
def test_save_refuses_other_formats(name, error, match, tmp_path):
    model = _sequential(gtf)
    with pytest.raises(error, match=match) as info:
        model.save(tmp_path / name)
    assert str(info.value).startswith("[gradkit]")


def test_save_refuses_overwrite_false_and_warns_unbuilt(tmp_path):
    path = tmp_path / "m.keras"
    _sequential(gtf).save(path)
    with pytest.raises(FileExistsError):
        _sequential(gtf).save(path, overwrite=False)
    with pytest.warns(UserWarning, match="not yet been built"):  # Keras saves it too, with this warning
        gtf.keras.Sequential([gtf.keras.layers.Dense(2)]).save(tmp_path / "unbuilt.keras")
    with pytest.raises(NotImplementedError, match="zipped=False"):
        _sequential(gtf).save(tmp_path / "dir", zipped=False)


def test_load_refuses_other_formats(tmp_path):
    with pytest.raises(ValueError, match="File not found"):
        gtf.keras.models.load_model(tmp_path / "missing.keras")
    with pytest.raises(NotImplementedError, match="legacy HDF5"):
        gtf.keras.models.load_model(tmp_path / "m.h5")
    with pytest.raises(ValueError, match="File format not supported"):
        gtf.keras.models.load_model(tmp_path)


def test_optimizer_state_gradkit_cannot_lay_out_is_refused(tmp_path):
    model = _sequential(gtf)
    model.compile(optimizer=gtf.keras.optimizers.LossScaleOptimizer(gtf.keras.optimizers.SGD(0.01)), loss="mse")
    model.save(tmp_path / "before_steps.keras")  # before any step: Keras' two variables
    model.fit(X, Y, epochs=1, verbose=0)
    with pytest.raises(NotImplementedError, match="LossScaleOptimizer"):
        model.save(tmp_path / "after_steps.keras")


def test_unknown_keras_operation_is_refused():
    config = _functional(gtf).get_config()
    for entry in config["layers"]:
        if entry["class_name"] == "Multiply":  # an operation name gradkit.tf's ops do not have
            entry["class_name"] = entry["registered_name"] = "Fft3"
    with pytest.raises(NotImplementedError, match="Fft3"):
        gtf.keras.Model.from_config(config)


def test_get_compile_config_compile_from_config_and_metrics_variables_as_keras():
    keras = pytest.importorskip("keras")
    pytest.importorskip("tensorflow")
    results, weights = [], None
    for k in (keras, gtf.keras):
        a = k.Input((3,))
        model = k.Model(a, k.layers.Dense(2)(a))
        weights = model.get_weights() if weights is None else model.set_weights(weights) or weights
        before = (model.get_compile_config(), model.metrics_variables)
        model.compile(k.optimizers.SGD(0.1), loss="mse", metrics=["mae"])
        model.train_on_batch(X, Y)
        config = model.get_compile_config()
        counts = [float(np.asarray(v)) for v in model.metrics_variables]
        a2 = k.Input((3,))
        again = k.Model(a2, k.layers.Dense(2)(a2))
        again.compile_from_config(config)
        results.append((before, config, counts, type(again.optimizer).__name__, again.loss))
    (theirs, ours) = results
    assert ours[0] == ({}, []) and theirs[0] == ({}, [])
    assert ours[1]["loss"] == theirs[1]["loss"] and ours[1]["metrics"] == theirs[1]["metrics"]
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-5)
    assert ours[3:] == theirs[3:] == ("SGD", "mse")
