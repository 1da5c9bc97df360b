"""``tf.keras.models.clone_model`` against Keras 3's on TensorFlow: the same architecture (layer
classes, names, configs, weight shapes), new weights, the same outputs once the weights are
copied, shared layers cloned once, ``clone_function``/``call_function``/``input_tensors``/
``recursive``, and a compiled model's clone compiled alike."""

import numpy as np
import pytest

import gradkit.tf as gtf

X = np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(3, 4)
Z = np.cos(np.arange(6, dtype=np.float32)).reshape(3, 2)


def _sequential(lib):
    return lib.keras.Sequential(
        [
            lib.keras.Input((4,), name="features"),
            lib.keras.layers.Dense(5, activation="relu", name="hidden"),
            lib.keras.layers.Dropout(0.5),
            lib.keras.layers.Dense(2, name="head"),
        ],
        name="seq",
    )


def _functional(lib):
    a, b = lib.keras.Input((4,), name="a"), lib.keras.Input((2,), name="b")
    shared = lib.keras.layers.Dense(3, name="shared")
    h = shared(a) + lib.keras.layers.Dense(3, name="from_b")(b)
    g = shared(lib.keras.layers.Dense(4, name="back")(h))
    out1 = lib.keras.layers.Dense(1, name="out1")(h)
    out2 = lib.keras.layers.Activation("tanh", name="out2")(g)
    return lib.keras.Model([a, b], [out1, out2], name="two_heads")


def _describe(model):
    return (
        model.name,
        [type(layer).__name__ for layer in model.layers],
        [layer.name for layer in model.layers],
        [tuple(w.shape) for w in model.weights],
    )


def _check_clone(lib, model, clone, inputs):
    assert clone is not model
    assert all(c is not o for c, o in zip(clone.weights, model.weights))
    clone.set_weights(model.get_weights())
    for got, want in zip(gtf.nest.flatten(clone(inputs)), gtf.nest.flatten(model(inputs))):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)


@pytest.mark.parametrize("build", [_sequential, _functional])
def test_clone_has_keras_structure_and_new_weights(build):
    tf = pytest.importorskip("tensorflow")
    inputs = X if build is _sequential else [X, Z]
    described = []
    for lib in (tf, gtf):
        lib.keras.backend.clear_session()  # auto names ('dropout_3') count from zero in both
        model = build(lib)
        model(inputs)
        clone = lib.keras.models.clone_model(model)
        described.append(_describe(clone))
        _check_clone(lib, model, clone, inputs)
    assert described[0] == described[1]


def test_clone_function_and_call_function_as_keras():
    tf = pytest.importorskip("tensorflow")
    results = []
    for lib in (tf, gtf):
        model = _functional(lib)

        def clone_function(layer, lib=lib):
            config = layer.get_config()
            if isinstance(layer, lib.keras.layers.Dense):
                config["units"] = config["units"] + 1 if layer.name == "out1" else config["units"]
            return layer.__class__.from_config(config)

        def call_function(layer, *args, lib=lib, **kwargs):
            out = layer(*args, **kwargs)
            if layer.name == "back":
                out = lib.keras.layers.Activation("relu", name="after_back")(out)
            return out

        clone = lib.keras.models.clone_model(model, clone_function=clone_function, call_function=call_function)
        results.append((_describe(clone), [tuple(t.shape) for t in clone.outputs]))
    assert results[0] == results[1]


def test_given_input_tensors_and_recursive_cloning():
    tf = pytest.importorskip("tensorflow")
    results = []
    for lib in (tf, gtf):
        inner = lib.keras.Sequential([lib.keras.layers.Dense(3, name="inner_dense")], name="inner")
        x = lib.keras.Input((4,), name="x")
        model = lib.keras.Model(x, lib.keras.layers.Dense(2, name="top")(inner(x)), name="outer")
        model(X)
        new_input = lib.keras.Input((4,), name="given")
        for recursive in (False, True):
            clone = lib.keras.models.clone_model(model, input_tensors=new_input, recursive=recursive)
            assert clone.layers[1] is not inner
            _check_clone(lib, model, clone, X)
            results.append(_describe(clone)[:3])
    assert results[:2] == results[2:]


def test_compiled_clone_is_compiled_alike():
    tf = pytest.importorskip("tensorflow")
    y = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]], np.float32)
    names = []
    for lib in (tf, gtf):
        model = _sequential(lib)
        optimizer = lib.keras.optimizers.Adam(learning_rate=0.01)
        model.compile(optimizer=optimizer, loss="mse", metrics=["mae", lib.keras.metrics.MeanSquaredError(name="m")])
        model.fit(X, y, epochs=1, verbose=0)
        clone = lib.keras.models.clone_model(model)
        assert clone.compiled and clone.optimizer is not optimizer
        assert type(clone.optimizer) is type(optimizer)
        np.testing.assert_allclose(float(np.asarray(clone.optimizer.learning_rate)), 0.01, rtol=1e-6)
        assert int(np.asarray(clone.optimizer.iterations)) == 0
        clone.set_weights(model.get_weights())
        logs = clone.evaluate(X, y, verbose=0, return_dict=True)
        names.append(sorted(logs))
        expected = model.evaluate(X, y, verbose=0, return_dict=True)
        for key in logs:
            np.testing.assert_allclose(logs[key], expected[key], rtol=1e-5)
        clone.fit(X, y, epochs=1, verbose=0)  # trains with its own optimizer state
    assert names[0] == names[1]


def test_compiled_clone_has_a_built_optimizer_that_loads_a_weights_file(tmp_path):
    # Keras builds the clone's optimizer, so a weights file's optimizer state loads into it.
    tf = pytest.importorskip("tensorflow")
    y = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]], np.float32)
    seen = []
    for lib in (tf, gtf):
        model = _sequential(lib)
        model.compile(optimizer=lib.keras.optimizers.SGD(0.05, momentum=0.9), loss="mse")
        model.fit(X, y, epochs=3, verbose=0)
        clone = lib.keras.models.clone_model(model)
        built = [clone.optimizer.built, len(clone.optimizer.variables)]
        path = str(tmp_path / f"{lib.__name__}.weights.h5")
        model.save_weights(path)
        clone.load_weights(path)
        seen.append(built + [int(np.asarray(clone.optimizer.iterations))])
    assert seen[1] == seen[0]
    assert seen[1][0] and seen[1][2] == 3


def test_a_target_network_copy_is_independent():
    model = _functional(gtf)
    model([X, Z])
    target = gtf.keras.models.clone_model(model)
    target.set_weights(model.get_weights())
    before = [np.asarray(t) for t in target([X, Z])]
    model.layers[2].kernel.assign_add(np.ones((4, 3), np.float32))
    for got, want in zip(target([X, Z]), before):
        np.testing.assert_array_equal(np.asarray(got), want)


class _Subclassed(gtf.keras.Model):
    def __init__(self, units=2, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.dense = gtf.keras.layers.Dense(units)

    def call(self, x):
        return self.dense(x)

    def get_config(self):
        return {"units": self.units, "name": self.name}


def test_subclassed_model_is_cloned_from_its_config():
    model = _Subclassed(units=3, name="sub")
    clone = gtf.keras.models.clone_model(model)
    assert type(clone) is _Subclassed and clone.units == 3 and clone.name == "sub"
    assert np.asarray(clone(X)).shape == (3, 3)
    with pytest.raises(ValueError, match=r"\[gradkit\].*only supported for Sequential models or functional"):
        gtf.keras.models.clone_model(model, clone_function=lambda layer: layer)


def test_bad_arguments_are_refused():
    model = _sequential(gtf)
    with pytest.raises(ValueError, match=r"\[gradkit\].*call_function.*not supported with Sequential"):
        gtf.keras.models.clone_model(model, call_function=lambda layer, *a, **k: layer(*a, **k))
    with pytest.raises(ValueError, match=r"\[gradkit\].*takes a tf.keras Model"):
        gtf.keras.models.clone_model(gtf.keras.layers.Dense(2))
    with pytest.raises(ValueError, match=r"\[gradkit\].*must be a KerasTensor"):
        gtf.keras.models.clone_model(model, input_tensors=X)
    with pytest.raises(ValueError, match=r"\[gradkit\].*unexpected keyword"):
        gtf.keras.models.clone_model(model, seed=1)
