"""``AdaptiveAveragePooling1D/2D/3D`` and ``AdaptiveMaxPooling1D/2D/3D``: outputs, input gradients,
``compute_output_shape`` and config against Keras on TensorFlow (skipped without it), and the
1-D average by hand."""

import numpy as np
import pytest

import gradkit.tf as gtf

_SHAPES = {1: (2, 7, 3), 2: (2, 7, 5, 3), 3: (2, 5, 6, 7, 2)}


def _run(tf, kind, n, data_format):
    x = np.random.RandomState(n).rand(*_SHAPES[n]).astype("float32")
    layer = getattr(tf.keras.layers, f"Adaptive{kind}Pooling{n}D")(3 if n != 2 else (3, 2), data_format=data_format)
    xv = tf.Variable(x)
    with tf.GradientTape() as tape:
        y = layer(xv)
        loss = tf.reduce_sum(y * y)
    config = layer.get_config()
    again = type(layer).from_config(config)
    return (
        np.asarray(y),
        np.asarray(tape.gradient(loss, xv)),
        tuple(layer.compute_output_shape(_SHAPES[n])),
        (tuple(config["output_size"]), config["data_format"]),
        np.asarray(again(x)),
    )


@pytest.mark.parametrize("kind", ["Average", "Max"])
@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
def test_adaptive_pooling_layers_as_keras(kind, n, data_format):
    got = _run(gtf, kind, n, data_format)
    assert got[2] == tuple(got[0].shape)
    np.testing.assert_allclose(got[4], got[0], rtol=1e-6)  # the layer made from its config
    tf = pytest.importorskip("tensorflow")
    want = _run(tf, kind, n, data_format)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-5, atol=1e-6)
    assert got[2:4] == want[2:4]


def test_adaptive_average_by_hand():
    x = np.arange(7, dtype=np.float32).reshape(1, 7, 1)
    # 7 steps into 3 windows: [0, 3), [2, 5), [4, 7) (start floor(i*7/3), end ceil((i+1)*7/3)).
    got = gtf.keras.layers.AdaptiveAveragePooling1D(3)(x).numpy().ravel()
    np.testing.assert_allclose(got, [1.0, 3.0, 5.0])
    with pytest.raises(TypeError, match="output_size"):
        gtf.keras.layers.AdaptiveMaxPooling2D((1, 2, 3))


def _tied_gradient(tf, n, x):
    layer = getattr(tf.keras.layers, f"AdaptiveMaxPooling{n}D")(2)
    xv = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(xv)
        y = layer(xv)
    return np.asarray(tape.gradient(y, xv))


def test_tied_maxima_send_the_gradient_to_the_first_entry():
    # Windows [0, 3) and [3, 6) of zeros and a one: TensorFlow's max pool gradient (which Keras'
    # adaptive pooling runs on) goes all to the first of tied entries, not a third to each.
    x = np.array([0, 0, 0, 1, 0, 0], np.float32).reshape(1, 6, 1)
    np.testing.assert_array_equal(_tied_gradient(gtf, 1, x).ravel(), [1, 0, 0, 1, 0, 0])
    zeros = np.zeros((1, 4, 4, 1), np.float32)
    want = np.zeros((4, 4), np.float32)
    want[::2, ::2] = 1  # the first entry of each 2x2 window
    np.testing.assert_array_equal(_tied_gradient(gtf, 2, zeros)[0, :, :, 0], want)
    # MaxPool3DGrad's rule: every entry within 1e-5 of the maximum.
    np.testing.assert_array_equal(_tied_gradient(gtf, 3, np.zeros((1, 4, 4, 4, 1), np.float32)), 1.0)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_tied_maxima_as_keras(n):
    tf = pytest.importorskip("tensorflow")
    x = np.random.RandomState(n).randint(-1, 2, size=(2, *([5] * n), 2)).astype(np.float32)
    np.testing.assert_array_equal(_tied_gradient(gtf, n, x), _tied_gradient(tf, n, x))
