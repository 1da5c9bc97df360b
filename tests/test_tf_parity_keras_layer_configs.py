"""Keras 3's layer and Sequential configs and model helpers in gradkit.tf.keras: get_config /
from_config (Keras' automatic config for layer subclasses too), get_layer and
compute_output_shape. Against real Keras 3 (the same dicts, both ways, the same errors), and
round trips checked against NumPy without it."""

import numpy as np
import pytest

import gradkit.tf as gtf


def _tf():
    return pytest.importorskip("tensorflow")


def _keras():
    _tf()
    return pytest.importorskip("keras")


# -- layers and Sequential, without TensorFlow -----------------------------------------------------


def _layers(lib):
    layers = lib.keras.layers
    return {
        "Dense": layers.Dense(3, activation="relu", name="l"),
        "Dense_initializer": layers.Dense(
            2, use_bias=False, kernel_initializer=lib.keras.initializers.RandomNormal(stddev=0.1, seed=1), name="l"
        ),
        "Dropout": layers.Dropout(0.3, noise_shape=(None, 1), seed=3, name="l"),
        "Flatten": layers.Flatten(name="l"),
        "Reshape": layers.Reshape((2, -1), name="l"),
        "Activation": layers.Activation("tanh", name="l"),
        "ReLU": layers.ReLU(max_value=6.0, name="l"),
        "LeakyReLU": layers.LeakyReLU(0.2, name="l"),
        "Softmax": layers.Softmax(name="l"),
        "BatchNormalization": layers.BatchNormalization(momentum=0.9, name="l"),
        "LayerNormalization": layers.LayerNormalization(epsilon=1e-5, name="l"),
        "Embedding": layers.Embedding(10, 3, name="l"),
    }


@pytest.mark.parametrize("key", sorted(_layers(gtf)))
def test_layer_from_config_round_trip(key):
    layer = _layers(gtf)[key]
    config = layer.get_config()
    copy = type(layer).from_config(config)
    assert type(copy) is type(layer) and copy.get_config() == config


def _model(lib):
    layers = lib.keras.layers
    return lib.keras.Sequential(
        [
            lib.keras.Input((3,), name="in"),
            layers.Dense(4, activation="relu", name="d1"),
            layers.Dropout(0.5, name="drop"),
            layers.Dense(2, use_bias=False, name="d2"),
        ],
        name="seq",
    )


def test_sequential_from_config_round_trip_computes_alike():
    model = _model(gtf)
    copy = gtf.keras.Sequential.from_config(model.get_config())
    assert [layer.name for layer in copy.layers] == ["d1", "drop", "d2"] and copy.built
    copy.set_weights(model.get_weights())
    x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    kernel1, bias1, kernel2 = model.get_weights()
    expected = np.maximum(x @ kernel1 + bias1, 0) @ kernel2
    # float32 products: XLA's rounding differs from NumPy's by ~1e-8, relatively large for an
    # output near 0 (the weights are random, so one may be).
    np.testing.assert_allclose(copy(gtf.constant(x)).numpy(), expected, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(model(gtf.constant(x)).numpy(), expected, rtol=1e-6, atol=1e-6)


def test_get_layer():
    model = _model(gtf)
    assert model.get_layer("d1") is model.layers[0]
    assert model.get_layer(index=-1) is model.layers[2]
    for call in (
        lambda: model.get_layer(),
        lambda: model.get_layer("zz"),
        lambda: model.get_layer(index=7),
        lambda: model.get_layer("d1", 0),
    ):
        with pytest.raises(ValueError, match=r"\[gradkit\]"):
            call()


SHAPES = {
    "Dense": (lambda L: L.Dense(3), (None, 7)),
    "Dense_rank3": (lambda L: L.Dense(3), (4, None, 7)),
    "Flatten": (lambda L: L.Flatten(), (None, 2, 3)),
    "Reshape": (lambda L: L.Reshape((3, -1)), (None, 2, 3)),
    "Dropout": (lambda L: L.Dropout(0.5), (None, 5)),
    "Embedding": (lambda L: L.Embedding(10, 4), (None, 6)),
    "MaxPooling2D": (lambda L: L.MaxPooling2D(), (None, 6, 4, 3)),
    "BatchNormalization": (lambda L: L.BatchNormalization(), (None, 5)),
}


def test_compute_output_shape_without_tensorflow():
    assert gtf.keras.layers.Dense(3).compute_output_shape((None, 7)) == (None, 3)
    assert _model(gtf).compute_output_shape((None, 3)) == (None, 2)
    assert gtf.keras.layers.Flatten().compute_output_shape((None, 2, 3)) == (None, 6)


def _unbuilt_and_functional_shapes(tf):
    layers = tf.keras.layers
    unbuilt = [
        layers.Conv2D(4, 3, strides=2).compute_output_shape((2, 9, 9, 3)),
        layers.MaxPooling2D().compute_output_shape((2, 8, 8, 3)),
        layers.GlobalAveragePooling2D().compute_output_shape((2, 8, 8, 3)),
        layers.Conv1D(2, 3, padding="same").compute_output_shape((None, 7, 5)),
    ]
    inputs = tf.keras.Input((None, 4))
    model = tf.keras.Model(inputs, layers.Dense(2)(inputs))
    return [tuple(s) for s in unbuilt] + [tuple(model.compute_output_shape((3, 10, 4)))]


def test_compute_output_shape_of_unbuilt_layers_and_of_a_functional_model():
    got = _unbuilt_and_functional_shapes(gtf)
    # By hand: (9 - 3) // 2 + 1 = 4; pooling halves; global pooling keeps channels; same padding.
    assert got == [(2, 4, 4, 4), (2, 4, 4, 3), (2, 3), (None, 7, 2), (3, 10, 2)]
    if _tf():
        assert got == _unbuilt_and_functional_shapes(_tf())


def test_compute_output_shape_of_a_custom_layer_raises_as_keras():
    class Custom(gtf.keras.layers.Layer):
        def call(self, x):
            return x

    with pytest.raises(NotImplementedError, match=r"\[gradkit\]"):
        Custom().compute_output_shape((None, 3))


def test_user_layer_configs():
    class WithArgs(gtf.keras.layers.Layer):
        def __init__(self, units, **kw):
            super().__init__(**kw)
            self.units = units

    class Overriding(gtf.keras.layers.Layer):
        def __init__(self, rate, **kwargs):
            super().__init__(**kwargs)
            self.rate = rate

        def get_config(self):
            return {**super().get_config(), "rate": self.rate}

    config = WithArgs(3, trainable=False).get_config()
    assert config["units"] == 3 and config["trainable"] is False and "name" not in config
    assert WithArgs.from_config(config).units == 3
    config = Overriding(0.5, name="o").get_config()
    assert config == {"name": "o", "trainable": True, "dtype": config["dtype"], "rate": 0.5}
    assert Overriding.from_config(config).rate == 0.5
    with pytest.raises(NotImplementedError, match=r"\[gradkit\].*get_config"):
        WithArgs(object()).get_config()


# -- layers and Sequential, against Keras ----------------------------------------------------------


@pytest.mark.parametrize("key", sorted(_layers(gtf)))
def test_layer_config_matches_keras(key):
    tf = _tf()
    ours, theirs = _layers(gtf)[key].get_config(), _layers(tf)[key].get_config()
    assert ours == theirs
    assert type(_layers(tf)[key]).from_config(ours).get_config() == theirs


def _comparable(config):
    """The config with its build shape as a tuple (a list once through JSON)."""
    config = dict(config)
    config["build_input_shape"] = tuple(config["build_input_shape"])
    return config


def test_sequential_config_matches_keras():
    tf = _tf()
    ours, theirs = _model(gtf).get_config(), _model(tf).get_config()
    assert _comparable(ours) == _comparable(theirs)
    copy = gtf.keras.Sequential.from_config(theirs)
    assert [tuple(w.shape) for w in copy.weights] == [(3, 4), (4,), (4, 2)]
    assert [layer.name for layer in tf.keras.Sequential.from_config(ours).layers] == ["d1", "drop", "d2"]


@pytest.mark.parametrize("key", sorted(SHAPES))
def test_compute_output_shape_matches_keras(key):
    keras = _keras()
    make, shape = SHAPES[key]
    layer = make(gtf.keras.layers)
    if key == "MaxPooling2D" or key == "BatchNormalization":
        layer(gtf.zeros(tuple(2 if d is None else d for d in shape)))
    assert tuple(layer.compute_output_shape(shape)) == tuple(make(keras.layers).compute_output_shape(shape))


def test_get_layer_errors_match_keras():
    model = _model(_tf())
    for call in (lambda: model.get_layer(), lambda: model.get_layer("zz"), lambda: model.get_layer(index=7)):
        with pytest.raises(ValueError):
            call()


def test_user_layer_configs_match_keras():
    keras = _keras()
    configs = []
    for lib in (gtf.keras, keras):

        class WithArgs(lib.layers.Layer):
            def __init__(self, units, **kw):
                super().__init__(**kw)
                self.units = units

        class Plain(lib.layers.Layer):
            def call(self, x):
                return x

        configs.append((WithArgs(3).get_config(), Plain(name="p", trainable=False).get_config()))
    assert configs[0] == configs[1]


@pytest.mark.parametrize("make", [lambda k: k.layers.Dense(2), lambda k: k.Sequential([k.layers.Dense(2)])])
def test_count_params_of_an_unbuilt_layer_raises_as_keras(make):
    with pytest.raises(ValueError, match=r"^\[gradkit\] You tried to call `count_params` on layer"):
        make(gtf.keras).count_params()
    layer = make(gtf.keras)
    layer.build((None, 3))
    assert layer.count_params() == 3 * 2 + 2  # kernel and bias, by hand
    with pytest.raises(ValueError, match="isn't built"):
        make(_keras()).count_params()
