"""Small tf.keras names against real Keras 3: Progbar's printed text (verbose 1 and 2, on a clock
both read alike), the custom-object registry (and gradkit's deserialization finding registered
classes), clear_session's layer names, the backend settings and dtype helpers, and
tf.keras.preprocessing.sequence.pad_sequences."""

import itertools
import time

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
keras = pytest.importorskip("keras")

import gradkit.tf as gtf  # noqa: E402


@pytest.fixture
def fake_clock(monkeypatch):
    """time.time() giving 100.0, 100.04, 100.08, ... from a fresh start each time it is asked for."""

    def start():
        ticks = itertools.count()
        monkeypatch.setattr(time, "time", lambda: 100.0 + 0.04 * next(ticks))

    return start


def _printed(progbar_class, capsys, clock, script, **kwargs):
    clock()
    capsys.readouterr()
    bar = progbar_class(**kwargs)
    for method, args in script:
        getattr(bar, method)(*args)
    return capsys.readouterr().out


SCRIPTS = {
    "steps": [("update", (1, [("loss", 0.5), ("acc", 0.25)])), ("update", (2, [("loss", 0.25)])),
              ("update", (5, [("loss", 0.125), ("acc", 0.75)]))],
    "add": [("add", (1, [("loss", 2.0)])), ("add", (1, [("loss", 1e-5)])), ("add", (3, [("loss", 4.0)]))],
    "unknown_target": [("update", (1, [("loss", 1.0)])), ("update", (3, [("loss", 2.0)])),
                       ("update", (4, [("loss", 3.0)], True))],
    "finalize_early": [("update", (1, [("m", 0.5)])), ("update", (2, [("m", 0.7)], True))],
}  # fmt: skip


@pytest.mark.parametrize("verbose", [1, 2])
@pytest.mark.parametrize("key", sorted(SCRIPTS))
@pytest.mark.parametrize("stateful", [None, ["acc", "m"]])
def test_progbar_prints_what_keras_prints(capsys, fake_clock, key, verbose, stateful):
    target = None if key == "unknown_target" else 5
    kwargs = dict(target=target, verbose=verbose, stateful_metrics=stateful, interval=0.05)
    want = _printed(keras.utils.Progbar, capsys, fake_clock, SCRIPTS[key], **kwargs)
    got = _printed(gtf.keras.utils.Progbar, capsys, fake_clock, SCRIPTS[key], **kwargs)
    assert got == want
    if verbose == 1:
        assert "\r" in got  # the line is redrawn in place, as Keras writes it to any stream on Linux


def test_progbar_arguments():
    bar = gtf.keras.utils.Progbar(3, width=5, unit_name="sample", stateless_metrics=["loss"])
    assert (bar.width, bar.unit_name, bar.stateless_metrics) == (5, "sample", {"loss"})
    with pytest.raises(ValueError, match=r"\[gradkit\].*not both"):
        gtf.keras.utils.Progbar(3, stateful_metrics=["a"], stateless_metrics=["b"])


def test_registry_names_and_lookup():
    saving = gtf.keras.saving

    @saving.register_keras_serializable(package="pkg")
    class Doubler(gtf.keras.layers.Layer):
        def call(self, x):
            return 2.0 * x

    @gtf.keras.utils.register_keras_serializable(name="triple")
    def triple(x):
        return 3 * x

    assert saving.get_registered_name(Doubler) == "pkg>Doubler"
    assert saving.get_registered_name(triple) == "Custom>triple"
    assert saving.get_registered_name(len) == "len"
    assert saving.get_registered_object("pkg>Doubler") is Doubler
    assert saving.get_custom_objects()["Custom>triple"] is triple
    assert saving.get_custom_objects is gtf.keras.utils.get_custom_objects
    assert saving.get_registered_object("nothing") is None
    assert saving.get_registered_object("x", custom_objects={"x": 1}) == 1
    with saving.custom_object_scope({"Alias": Doubler}) as scope:
        assert isinstance(scope, gtf.keras.utils.CustomObjectScope)
        assert saving.get_registered_object("Alias") is Doubler
        with gtf.keras.utils.custom_object_scope({"Other": triple}):
            assert saving.get_registered_object("Alias") is None  # an inner scope replaces the outer one
        assert saving.get_registered_object("Alias") is Doubler
    assert saving.get_registered_object("Alias") is None

    class NoConfig:
        pass

    with pytest.raises(ValueError, match=r"\[gradkit\].*get_config"):
        saving.register_keras_serializable()(NoConfig)
    # Keras' registry behaves alike.
    assert (
        keras.saving.get_registered_name(
            keras.saving.register_keras_serializable("pkg")(type("K", (), {"get_config": None}))
        )
        == "pkg>K"
    )


def test_deserialization_finds_registered_and_scoped_classes():
    @gtf.keras.saving.register_keras_serializable(package="gk_test")
    class Shift(gtf.keras.layers.Layer):
        def call(self, x):
            return x + 1.0

    class Scale(gtf.keras.layers.Layer):
        def call(self, x):
            return x * 3.0

    model = gtf.keras.Sequential([gtf.keras.Input((2,)), Shift(), Scale()])
    config = model.get_config()
    assert [layer["registered_name"] for layer in config["layers"][1:]] == ["gk_test>Shift", "Scale"]
    with pytest.raises(TypeError, match=r"\[gradkit\].*Scale"):
        gtf.keras.Sequential.from_config(config)
    with gtf.keras.saving.custom_object_scope({"Scale": Scale}):
        rebuilt = gtf.keras.Sequential.from_config(config)
    assert [type(layer) for layer in rebuilt.layers] == [Shift, Scale]
    np.testing.assert_allclose(rebuilt(np.ones((1, 2), np.float32)).numpy(), [[6.0, 6.0]])


def test_clear_session_restarts_layer_names():
    # Both libraries' counters are reset and advanced alike, so they leave this test in one state.
    gtf.keras.backend.clear_session()
    keras.backend.clear_session()
    ours = [gtf.keras.layers.Dense(1).name for _ in range(2)]
    theirs = [keras.layers.Dense(1).name for _ in range(2)]
    gtf.keras.utils.clear_session(free_memory=False)
    keras.utils.clear_session(free_memory=False)
    ours.append(gtf.keras.layers.Dense(1).name)
    theirs.append(keras.layers.Dense(1).name)
    assert ours == theirs == ["dense", "dense_1", "dense"]


def test_backend_settings():
    backend, config = gtf.keras.backend, gtf.keras.config
    assert (backend.floatx(), backend.epsilon(), backend.image_data_format()) == ("float32", 1e-7, "channels_last")
    assert (config.floatx(), config.epsilon()) == (keras.config.floatx(), keras.config.epsilon())
    backend.set_floatx("float32")
    backend.set_epsilon(1e-7)
    backend.set_image_data_format("channels_last")
    for call, text in [
        (lambda: backend.set_floatx("float16"), "float32 only"),
        (lambda: backend.set_floatx("double"), "not a float dtype"),
        (lambda: backend.set_epsilon(1e-5), "1e-7"),
        (lambda: config.set_image_data_format("channels_first"), "channels_last"),
        (lambda: backend.set_image_data_format("nchw"), "channels_first"),
    ]:
        with pytest.raises(ValueError, match=r"\[gradkit\].*" + text):
            call()


@pytest.mark.parametrize("dtype", ["float32", "int8", "uint16", "bool", "bfloat16", np.float16, float, "int", gtf.int8])
def test_dtype_helpers_match_keras(dtype):
    for name in ("standardize_dtype", "is_float_dtype", "is_int_dtype"):
        want = getattr(keras.backend, name)(dtype if dtype is not gtf.int8 else "int8")
        want = {"int64": "int32"}.get(want, want)
        assert getattr(gtf.keras.backend, name)(dtype) == want


@pytest.mark.parametrize("dtype", ["float", "double", "f4"])
def test_dtype_names_keras_refuses_are_refused(dtype):
    with pytest.raises(ValueError):
        keras.backend.standardize_dtype(dtype)
    with pytest.raises(ValueError, match=r"\[gradkit\].*dtype"):
        gtf.keras.backend.standardize_dtype(dtype)


def test_pad_sequences_alias():
    sequences = [[1, 2, 3], [4], [5, 6]]
    pad = gtf.keras.preprocessing.sequence.pad_sequences
    assert pad is gtf.keras.utils.pad_sequences
    for kwargs in ({}, dict(maxlen=2, padding="post", truncating="post", value=-1)):
        np.testing.assert_array_equal(pad(sequences, **kwargs), keras.utils.pad_sequences(sequences, **kwargs))


@pytest.mark.parametrize("path", ["backend", "config", "saving", "utils", "preprocessing", "preprocessing.sequence"])
def test_namespaces_list_keras_names_only(path):
    ours, theirs = gtf.keras, keras
    for part in path.split("."):
        ours, theirs = getattr(ours, part), getattr(theirs, part)
    names = {n for n in dir(ours) if not n.startswith("_")}
    known = {n for n in dir(theirs) if not n.startswith("_")}
    # TensorFlow's tf.keras keeps Keras' legacy names too (preprocessing.sequence.skipgrams,
    # backend.int_shape).
    tf = pytest.importorskip("tensorflow") if path in ("preprocessing.sequence", "backend") else None
    if tf is not None:
        legacy = tf.keras
        for part in path.split("."):
            legacy = getattr(legacy, part)
        known |= {n for n in dir(legacy) if not n.startswith("_")}
    assert names and names <= known


def test_aliases_keras_exports_under_two_names():
    assert gtf.keras.utils.is_keras_tensor is gtf.keras.backend.is_keras_tensor
    assert gtf.keras.utils.standardize_dtype is gtf.keras.backend.standardize_dtype
    assert gtf.keras.utils.is_keras_tensor(gtf.keras.Input((2,)))
    assert not gtf.keras.utils.is_keras_tensor(np.zeros(2))
    y_true, y_pred = np.array([[1.0, 2.0]], np.float32), np.array([[1.5, 1.0]], np.float32)
    # The loss functions Keras also exports as metric functions, by hand.
    np.testing.assert_allclose(
        gtf.keras.metrics.log_cosh(y_true, y_pred), [np.mean(np.log(np.cosh(y_pred - y_true)))], rtol=1e-6
    )
    np.testing.assert_allclose(
        gtf.keras.metrics.mean_absolute_percentage_error(y_true, y_pred), [100 * np.mean([0.5, 0.5])], rtol=1e-6
    )
    np.testing.assert_allclose(
        gtf.keras.metrics.mean_squared_logarithmic_error(y_true, y_pred),
        [np.mean((np.log1p(y_pred) - np.log1p(y_true)) ** 2)],
        rtol=1e-6,
    )
