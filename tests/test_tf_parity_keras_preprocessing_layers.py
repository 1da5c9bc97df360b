"""``tf.keras.layers.Identity``, ``Rescaling`` and ``Normalization`` against real Keras on TensorFlow:
outputs, gradients with respect to the input, ``adapt`` from an array and from batches, explicit
mean and variance with their broadcasting, ``invert``, configs and the errors."""

import numpy as np
import pytest

import gradkit.tf as gtf

DATA = np.random.default_rng(0).standard_normal((6, 4, 3)).astype(np.float32) * [[[1.0, 3.0, 0.5]]] + 2.0
X = np.random.default_rng(1).standard_normal((2, 4, 3)).astype(np.float32)


def _output_and_gradient(lib, layer):
    x = lib.Variable(X)
    with lib.GradientTape() as tape:
        y = layer(x)
        loss = lib.reduce_sum(y * np.linspace(-1.0, 1.0, y.numpy().size, dtype=np.float32).reshape(y.shape))
    return np.asarray(y), np.asarray(tape.gradient(loss, x))


def _compare(make, adapt=None):
    tf = pytest.importorskip("tensorflow")
    outs = []
    for lib in (tf, gtf):
        layer = make(lib)
        if adapt is not None:
            layer.adapt(adapt(lib))
        outs.append(_output_and_gradient(lib, layer))
    for want, got in zip(*outs):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("axis", [-1, None, (1, 2), 1], ids=str)
@pytest.mark.parametrize("invert", [False, True])
def test_adapted_from_an_array(axis, invert):
    _compare(lambda lib: lib.keras.layers.Normalization(axis=axis, invert=invert), lambda lib: DATA)


def test_adapted_from_batches_streams_as_keras():
    _compare(lambda lib: lib.keras.layers.Normalization(axis=-1), lambda lib: [DATA[:2], DATA[2:3], DATA[3:]])


@pytest.mark.parametrize(
    "axis, mean, variance",
    [
        (-1, [1.0, 2.0, 3.0], [1.0, 4.0, 9.0]),
        (None, 2.0, 4.0),
        ((1, 2), [0.5, 1.0, 1.5], [2.0, 1.0, 0.5]),
        (-1, 1.0, 2.0),
    ],
    ids=["per-channel", "scalar", "right-aligned", "scalar-per-axis"],
)
def test_explicit_mean_and_variance(axis, mean, variance):
    _compare(lambda lib: lib.keras.layers.Normalization(axis=axis, mean=mean, variance=variance))


def test_rescaling_and_identity():
    _compare(lambda lib: lib.keras.layers.Rescaling(1 / 255.0, offset=-0.5))
    _compare(lambda lib: lib.keras.layers.Rescaling([1.0, 2.0, 3.0], offset=[0.0, 1.0, -1.0]))
    _compare(lambda lib: lib.keras.layers.Identity())


def test_configs_match_keras_and_round_trip():
    tf = pytest.importorskip("tensorflow")
    for make in (
        lambda lib: lib.keras.layers.Normalization(axis=(1, 2), mean=[0.5, 1.0, 1.5], variance=[2.0, 1.0, 0.5]),
        lambda lib: lib.keras.layers.Normalization(invert=True),
        lambda lib: lib.keras.layers.Rescaling(0.5, 1.0),
        lambda lib: lib.keras.layers.Identity(),
    ):
        want, got = make(tf).get_config(), make(gtf).get_config()
        assert {k: v for k, v in got.items() if k != "name"} == {
            k: (tuple(v) if k == "axis" else v) for k, v in want.items() if k != "name"
        }
        layer = make(gtf)
        assert type(layer).from_config(layer.get_config()).get_config() == layer.get_config()


def test_adapted_statistics_are_non_trainable_weights():
    layer = gtf.keras.layers.Normalization()
    layer.adapt(DATA)
    assert [w.name.split("/")[-1].split(":")[0] for w in layer.weights] == ["mean", "variance", "count"]
    assert not layer.trainable_weights
    np.testing.assert_allclose(layer.weights[0].numpy(), DATA.reshape(-1, 3).mean(axis=0), rtol=1e-5)
    np.testing.assert_allclose(layer.weights[1].numpy(), DATA.reshape(-1, 3).var(axis=0), rtol=1e-5)


def test_errors_are_keras():
    tf = pytest.importorskip("tensorflow")
    for lib in (tf, gtf):
        with pytest.raises(ValueError, match="both `mean` and `variance`"):
            lib.keras.layers.Normalization(mean=1.0)
        with pytest.raises(ValueError, match="same shape"):
            lib.keras.layers.Normalization(mean=[1.0, 2.0], variance=[1.0])
        layer = lib.keras.layers.Normalization(axis=-1)
        layer.adapt(DATA)
        with pytest.raises(ValueError, match="incompatible shape"):
            layer.adapt(DATA[..., :2])
