"""Keras preprocessing layers against real Keras 3 on TensorFlow, round 2: ``Normalization.adapt``
on a dataset of ``(x, y)`` pairs (the labels take no part), ``Rescaling`` with an array or tensor
scale in configs, JSON and ``.keras`` files (both ways), and ``tf.keras.layers.Pipeline``."""

import json

import numpy as np
import pytest

import gradkit.tf as gtf
from gradkit import _errors

tf = pytest.importorskip("tensorflow")
keras = pytest.importorskip("keras")

RS = np.random.RandomState(6)
X = (RS.rand(8, 3) * 10).astype("float32")
Y = RS.rand(8, 3).astype("float32")
IMG = np.random.RandomState(0).rand(2, 8, 10, 3).astype("float32")


def _stats(layer):
    return np.asarray(layer.mean), np.asarray(layer.variance)


def _adapted(lib, data_of):
    layer = lib.keras.layers.Normalization()
    layer.adapt(data_of(lib))
    return _stats(layer), np.asarray(layer(X))


@pytest.mark.parametrize(
    "data_of",
    [
        lambda lib: lib.data.Dataset.from_tensor_slices((X, Y)).batch(3),
        lambda lib: lib.data.Dataset.from_tensor_slices((X, Y, Y[:, 0])).batch(4),
        lambda lib: [(X[:3], Y[:3]), (X[3:], Y[3:])],
        lambda lib: ((X[i : i + 2], Y[i : i + 2]) for i in range(0, 8, 2)),
        lambda lib: [X[:5], X[5:]],
    ],
    ids=["dataset-pairs", "dataset-triples", "list-of-pairs", "generator-of-pairs", "list-of-arrays"],
)
def test_normalization_adapt_takes_x_of_each_tuple_batch(data_of):
    (want_mean, want_var), want_out = _adapted(tf, data_of)
    (mean, var), out = _adapted(gtf, data_of)
    assert mean.shape == want_mean.shape == (1, 3)
    np.testing.assert_allclose(mean, want_mean, rtol=1e-5)
    np.testing.assert_allclose(var, want_var, rtol=1e-5)
    np.testing.assert_allclose(mean.ravel(), X.mean(0), rtol=1e-5)
    assert out.shape == want_out.shape == X.shape
    np.testing.assert_allclose(out, want_out, rtol=1e-4, atol=1e-5)


def test_discretization_adapt_on_pairs_stacks_them_as_keras():
    # Keras' Discretization (np.array(batch)) does not drop the labels: the same boundaries here.
    def boundaries(lib):
        layer = lib.keras.layers.Discretization(num_bins=3)
        layer.adapt(lib.data.Dataset.from_tensor_slices((X.ravel(), Y.ravel() * 20)).batch(6))
        return np.asarray(layer.bin_boundaries)

    np.testing.assert_allclose(boundaries(gtf), boundaries(tf), rtol=1e-6)


# -- Rescaling ------------------------------------------------------------------------------------


def _rescaling_configs(make):
    return [{k: make(lib).get_config()[k] for k in ("scale", "offset")} for lib in (tf, gtf)]


@pytest.mark.parametrize(
    "make",
    [
        lambda lib: lib.keras.layers.Rescaling(np.array([1.0, 2.0, 3.0], "float32"), offset=np.float32(1.0)),
        lambda lib: lib.keras.layers.Rescaling(np.array(0.5, "float64"), offset=np.array([[1, 2, 3]], "int32")),
        lambda lib: lib.keras.layers.Rescaling(lib.constant([1.0, 2.0, 3.0]), offset=0.5),
        lambda lib: lib.keras.layers.Rescaling([np.float32(2.0), 3.0, 1.0], offset=(np.float64(1.0), 0.0, 2)),
        lambda lib: lib.keras.layers.Rescaling(1 / 255, offset=-1.0),
    ],
    ids=["array-scale", "0d-and-int-array", "tensor-scale", "lists-of-numpy-scalars", "floats"],
)
def test_rescaling_config_is_keras_and_round_trips(make):
    want, got = _rescaling_configs(make)
    assert got == want
    json.dumps(got)  # JSON can hold it
    x = np.ones((2, 3), "float32") * 2.0
    expected = np.asarray(make(tf)(x))
    for lib in (tf, gtf):
        config = json.loads(json.dumps(make(gtf).get_config()))
        np.testing.assert_allclose(np.asarray(lib.keras.layers.Rescaling.from_config(config)(x)), expected)


def _rescaling_model(lib):
    layers = lib.keras.layers
    scale = np.array([1.0, 2.0, 3.0], "float32")
    return lib.keras.Sequential([lib.keras.Input((3,)), layers.Rescaling(scale, offset=np.float32(1.0))])


@pytest.mark.parametrize("src, dst", [(gtf, gtf), (gtf, tf), (tf, gtf)], ids=["gk-gk", "gk-keras", "keras-gk"])
def test_rescaling_with_arrays_saves_and_loads_across(src, dst, tmp_path):
    x = np.ones((1, 3), "float32")
    model = _rescaling_model(src)
    from_json = dst.keras.models.model_from_json(model.to_json())
    np.testing.assert_allclose(np.asarray(from_json(x)), [[2.0, 3.0, 4.0]])
    path = str(tmp_path / "rescaling.keras")
    model.save(path)
    loaded = dst.keras.models.load_model(path)
    np.testing.assert_allclose(np.asarray(loaded(x)), [[2.0, 3.0, 4.0]])
    scale = loaded.layers[0].get_config()["scale"]
    assert scale == {"class_name": "__numpy__", "config": {"value": [1.0, 2.0, 3.0], "dtype": "float32"}}


# -- Pipeline -------------------------------------------------------------------------------------


def _augment(lib):
    layers = lib.keras.layers
    return layers.Pipeline([layers.RandomInvert((1.0, 1.0), value_range=(0, 1)), layers.Resizing(4, 5)])


def _both(fn):
    want, got = fn(tf), fn(gtf)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-5)
    return got


def test_pipeline_applies_layers_in_order_training_true_by_default():
    got = _both(lambda lib: _augment(lib)(IMG))
    assert got.shape == (2, 4, 5, 3)
    # training defaults to True (the inversion runs); training=False passes it to RandomInvert.
    _both(lambda lib: _augment(lib)(IMG, training=False))
    inverted = np.asarray(_augment(gtf)(IMG))
    assert not np.allclose(inverted, np.asarray(_augment(gtf)(IMG, training=False)))


def test_pipeline_in_a_functional_model_and_predict():
    def model_of(lib):
        inputs = lib.keras.Input((8, 10, 3))
        return lib.keras.Model(inputs, _augment(lib)(inputs))

    out = _both(lambda lib: model_of(lib)(IMG))  # no training given: the pipeline's default, True
    assert out.shape == (2, 4, 5, 3)
    _both(lambda lib: model_of(lib).predict(IMG, verbose=0))  # predict: training False


def test_pipeline_in_dataset_map_and_function():
    def mapped(lib):
        ds = lib.data.Dataset.from_tensor_slices(IMG).batch(2).map(_augment(lib))
        return next(iter(ds))

    assert tuple(_both(mapped).shape) == (2, 4, 5, 3)

    def traced(training):
        def run(lib):
            pipeline = _augment(lib)
            return lib.function(lambda x: pipeline(x, training=training))(IMG)

        return run

    _both(traced(True))
    _both(traced(False))


def test_pipeline_passes_training_and_mask_as_keras():
    def canaries(lib):
        class Canary(lib.keras.layers.Layer):
            def __init__(self):
                super().__init__()
                self.training = None
                self.received_mask = False

            def call(self, x, training=False, mask=None):
                self.training = training
                self.received_mask = mask is not None
                return x

            def compute_mask(self, x, mask=None):
                return x

            def compute_output_shape(self, input_shape):
                return input_shape

        pipeline = lib.keras.layers.Pipeline([Canary(), Canary()])
        # Keras' Pipeline does not support masking: it warns that it drops the mask it was given.
        with pytest.warns(UserWarning, match="destroy the mask"):
            pipeline(np.array([0.0], "float32"), training=True, mask=np.array([0.0], "float32"))
        first = [(layer.training, layer.received_mask) for layer in pipeline.layers]
        pipeline(np.array([0.0], "float32"))
        return first, [layer.training for layer in pipeline.layers]

    assert canaries(gtf) == canaries(tf) == ([(True, True), (True, True)], [True, True])


def test_pipeline_config_is_keras_and_loads_both_ways():
    def config_of(lib):
        pipeline = _augment(lib)
        pipeline(IMG)
        return json.loads(json.dumps(pipeline.get_config()))

    want, got = config_of(tf), config_of(gtf)
    assert sorted(got) == sorted(want) == ["layers", "name"]
    assert [c["class_name"] for c in got["layers"]] == [c["class_name"] for c in want["layers"]]
    assert [c.get("build_config") for c in got["layers"]] == [c.get("build_config") for c in want["layers"]]
    for config in (want, got):
        for lib in (tf, gtf):
            made = lib.keras.layers.Pipeline.from_config(config)
            assert [layer.name for layer in made.layers] == [c["config"]["name"] for c in config["layers"]]
            assert made.name == config["name"]
            np.testing.assert_allclose(np.asarray(made(IMG)), np.asarray(_augment(tf)(IMG)), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("src, dst", [(gtf, gtf), (gtf, tf), (tf, gtf)], ids=["gk-gk", "gk-keras", "keras-gk"])
def test_pipeline_with_weights_saves_and_loads_across(src, dst, tmp_path):
    layers = src.keras.layers
    norm = layers.Normalization()
    norm.adapt(X)
    dense = layers.Dense(2, kernel_initializer="ones")
    model = src.keras.Sequential([src.keras.Input((3,)), layers.Pipeline([norm, dense])])
    want = np.asarray(model(X))
    path = str(tmp_path / "pipeline.keras")
    model.save(path)
    loaded = dst.keras.models.load_model(path)
    np.testing.assert_allclose(np.asarray(loaded(X)), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(loaded.layers[0].layers[0].mean).ravel(), X.mean(0), rtol=1e-5)


def test_pipeline_errors():
    with pytest.raises(_errors.GradkitTypeError, match=r"\[gradkit\].*list of tf.keras.layers.Layer"):
        gtf.keras.layers.Pipeline(lambda x: x)
    with pytest.raises(_errors.GradkitTypeError, match=r"\[gradkit\].*\['Rescaling', 'function'\]"):
        gtf.keras.layers.Pipeline([gtf.keras.layers.Rescaling(2.0), lambda x: x])
    with pytest.raises(ValueError, match=r"\[gradkit\].*`layers` key"):
        gtf.keras.layers.Pipeline.from_config({"name": "p"})
    pipeline = _augment(gtf)
    with pytest.raises(NotImplementedError, match=r"\[gradkit\].*compute_output_shape"):
        pipeline.compute_output_shape((None, 8, 10, 3))
