"""The layers and ops the generative tutorials needed, against real TensorFlow 2.21 / Keras 3:
transposed convolutions (Keras' output sizes, weight layout, first and second derivatives),
LeakyReLU / ReLU / Softmax, and the input declarations of a Sequential."""

import warnings

import jax
import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
from test_tf_parity import _np, run_both  # noqa: E402

import gradkit.tf as gtf  # noqa: E402

_rs = np.random.RandomState(1)
_X = _rs.randn(2, 3, 4, 2).astype(np.float32)
_SEQ = _rs.randn(2, 5, 2).astype(np.float32)
_KERNEL = _rs.randn(3, 3, 2, 2).astype(np.float32)
_LOGITS = _rs.randn(2, 3, 4).astype(np.float32)
_KINKS = np.array([[-2.0, -0.5, 0.0, 0.5, 1.0, 6.0, 7.0]], np.float32)


@pytest.fixture(autouse=True)
def _tensorflow_broadcasting():
    with jax.numpy_rank_promotion("allow"):
        yield


def _layer_parity(make, x, seed=0):
    """Output, input gradient and weight gradients of one layer, weights set equal by shape."""

    def program(tf):
        layer = make(tf)
        xv = tf.Variable(x)
        layer(xv)
        rng = np.random.default_rng(seed)
        layer.set_weights([rng.standard_normal(tuple(v.shape)).astype(np.float32) for v in layer.weights])
        with tf.GradientTape() as tape:
            y = layer(xv)
            loss = tf.reduce_sum(y * tf.sin(y))
        return [y, tape.gradient(loss, [xv, *layer.trainable_weights]), [tuple(v.shape) for v in layer.weights]]

    return run_both(program)


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(filters=3, kernel_size=3, strides=2, padding="same"),
        dict(filters=3, kernel_size=(3, 2), strides=(2, 1), padding="valid", activation="tanh"),
        dict(filters=2, kernel_size=2, strides=3, padding="valid", use_bias=False),  # stride > kernel
        dict(filters=2, kernel_size=3, strides=2, padding="same", output_padding=1),
        dict(filters=2, kernel_size=4, strides=2, padding="valid", output_padding=(1, 0)),
        dict(filters=2, kernel_size=3, padding="same", dilation_rate=2),
    ],
)
def test_conv2d_transpose_matches_keras(kwargs):
    _layer_parity(lambda tf: tf.keras.layers.Conv2DTranspose(**kwargs), _X)


@pytest.mark.parametrize("padding", ["same", "valid"])
def test_conv1d_transpose_matches_keras(padding):
    _layer_parity(lambda tf: tf.keras.layers.Conv1DTranspose(3, 3, strides=2, padding=padding), _SEQ)


def test_conv2d_transpose_second_derivative_matches_tensorflow():
    # A gradient penalty through a transposed convolution: d/dfilters of |d out / d x|^2.
    def program(tf):
        x, k = tf.Variable(_X), tf.Variable(_KERNEL)
        with tf.GradientTape() as outer:
            with tf.GradientTape() as inner:
                y = tf.nn.conv2d_transpose(x, k, [2, 6, 8, 2], strides=2, padding="SAME")
                y = tf.nn.leaky_relu(y, 0.2) ** 2
            gx = inner.gradient(y, x)
            penalty = tf.reduce_sum(gx * gx)
        return [y, gx, outer.gradient(penalty, [k, x])]

    run_both(program)


def test_conv_transpose_errors_are_clear():
    layers = gtf.keras.layers
    with pytest.raises(ValueError, match=r"\[gradkit\].*output_padding.*strictly less"):
        layers.Conv2DTranspose(2, 3, strides=2, output_padding=2)
    with pytest.raises(TypeError, match=r"\[gradkit\].*float32"):
        layers.Conv2DTranspose(2, 3, dtype="float16")
    with pytest.raises(ValueError, match=r"\[gradkit\].*output_shape"):
        gtf.nn.conv2d_transpose(gtf.constant(_X), gtf.ones([3, 3, 2, 2]), [2, 5, 5, 2], 2)
    # TensorFlow refuses the same output_shape (an op error, not a ValueError).
    with pytest.raises(Exception):  # noqa: B017
        tf_real.nn.conv2d_transpose(tf_real.constant(_X), tf_real.ones([3, 3, 2, 2]), [2, 5, 5, 2], 2)


@pytest.mark.parametrize(
    "make",
    [
        lambda tf: tf.keras.layers.LeakyReLU(),  # Keras 3's default slope 0.3
        lambda tf: tf.keras.layers.LeakyReLU(negative_slope=0.2),
        lambda tf: tf.keras.layers.ReLU(),
        lambda tf: tf.keras.layers.ReLU(max_value=6.0),
        lambda tf: tf.keras.layers.ReLU(max_value=1.0, negative_slope=0.1),
        lambda tf: tf.keras.layers.ReLU(negative_slope=0.1, threshold=0.5),
        lambda tf: tf.keras.layers.ReLU(threshold=0.5),
        lambda tf: tf.keras.layers.Softmax(),
        lambda tf: tf.keras.layers.Softmax(axis=(0, 1)),
    ],
)
def test_activation_layers_match_keras_at_their_kinks(make):
    def program(tf):
        x = tf.Variable(_KINKS)
        with tf.GradientTape() as tape:
            y = make(tf)(x)
            loss = tf.reduce_sum(y * tf.range(1.0, 8.0))
        return [y, tape.gradient(loss, x)]

    run_both(program)


def test_softmax_mask_matches_keras():
    def program(tf):
        x = tf.constant(_LOGITS)
        mask = tf.constant(np.array([[[True, False, True, True]], [[False, False, False, False]]]))
        return tf.keras.layers.Softmax()(x, mask=mask)

    run_both(program)


def test_leaky_relu_alpha_is_deprecated_as_in_keras():
    for tf in (tf_real, gtf):
        with pytest.warns(UserWarning, match="`alpha` is deprecated"):
            layer = tf.keras.layers.LeakyReLU(alpha=0.1)
        assert layer.negative_slope == pytest.approx(0.1)
    run_both(lambda tf: tf.keras.layers.LeakyReLU(negative_slope=-1.0))  # ValueError in both


@pytest.mark.filterwarnings("ignore:Do not pass an `input_shape`:UserWarning")
@pytest.mark.filterwarnings("ignore:Argument `input_shape` is deprecated:UserWarning")
@pytest.mark.parametrize(
    "first",
    [
        lambda tf: [tf.keras.Input(shape=(3,)), tf.keras.layers.Dense(2)],
        lambda tf: [tf.keras.layers.InputLayer(input_shape=(3,)), tf.keras.layers.Dense(2)],
        lambda tf: [tf.keras.layers.InputLayer(shape=(3,), batch_size=4), tf.keras.layers.Dense(2)],
        lambda tf: [tf.keras.layers.Dense(2, input_shape=(3,))],
        lambda tf: [tf.keras.layers.Dense(2, input_dim=3)],
        lambda tf: [tf.keras.layers.BatchNormalization(input_shape=(3,)), tf.keras.layers.Dense(2)],
    ],
)
def test_a_sequential_with_an_input_builds_at_once(first):
    def program(tf):
        model = tf.keras.Sequential([*first(tf), tf.keras.layers.Dense(1)])
        shapes = [tuple(v.shape) for v in model.weights]  # before any call
        return [str(shapes), len(model.layers), model(tf.ones([4, 3]))]

    out_tf = _np(program(tf_real))
    out_gk = _np(program(gtf))
    assert out_tf[:2] == out_gk[:2]
    assert out_tf[2].shape == out_gk[2].shape


def test_input_shape_warns_and_shape_arguments_keras_refuses_raise():
    for tf in (tf_real, gtf):
        with pytest.warns(UserWarning, match="Do not pass an `input_shape`"):
            tf.keras.layers.Conv2D(2, 3, input_shape=(4, 4, 1))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(ValueError):
                tf.keras.layers.Dense(2, batch_input_shape=(None, 3))
    symbolic = gtf.keras.layers.Dense(2)(gtf.keras.Input(shape=(3,)))  # Keras' functional API
    assert symbolic.shape == (None, 2)
