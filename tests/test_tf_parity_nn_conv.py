"""tf.nn.conv3d, convolution, atrous_conv2d, depthwise_conv2d, separable_conv2d, conv3d_transpose,
conv_transpose (3-D) and atrous_conv2d_transpose against real TensorFlow: values, gradients
with respect to the input and the filters through Variables, data formats, TensorFlow's
with_space_to_batch result for a strided dilated depthwise convolution, tf.function and errors."""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
from test_tf_parity import run_both  # noqa: E402

import gradkit.tf as gtf  # noqa: E402
from gradkit import GradkitError  # noqa: E402

RNG = np.random.default_rng(1)
X = RNG.normal(size=(2, 7, 6, 3)).astype(np.float32)
XC = np.ascontiguousarray(np.moveaxis(X, -1, 1))
F = RNG.normal(size=(3, 2, 3, 4)).astype(np.float32)
X1 = RNG.normal(size=(2, 9, 3)).astype(np.float32)
F1 = RNG.normal(size=(3, 3, 2)).astype(np.float32)
X5 = RNG.normal(size=(2, 5, 6, 4, 2)).astype(np.float32)
F5 = RNG.normal(size=(2, 3, 2, 2, 3)).astype(np.float32)
DW = RNG.normal(size=(3, 2, 3, 2)).astype(np.float32)
PW = RNG.normal(size=(1, 1, 6, 4)).astype(np.float32)
DW6 = RNG.normal(size=(2, 2, 6, 1)).astype(np.float32)


def _weights(shape):
    return np.cos(np.arange(int(np.prod(shape)), dtype=np.float32)).reshape(tuple(shape))


def _program(f, *arrays):
    def program(tf):
        variables = [tf.Variable(a) for a in arrays]
        with tf.GradientTape() as tape:
            y = f(tf, *variables)
            loss = tf.reduce_sum(y * tf.constant(_weights(y.shape)))
        return [y, *tape.gradient(loss, variables)]

    return program


def _close(f, *arrays):
    """gradkit against TensorFlow, to float32 summation-order differences."""
    want = _program(f, *arrays)(tf_real)
    got = _program(f, *arrays)(gtf)
    for a, b in zip(want, got):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-4, atol=2e-5)


CASES = {
    "conv3d_same_strided": (lambda tf, x, w: tf.nn.conv3d(x, w, [1, 1, 2, 1, 1], "SAME"), X5, F5),
    "conv3d_valid_dilated": (lambda tf, x, w: tf.nn.conv3d(x, w, [1] * 5, "VALID", dilations=[1, 2, 1, 2, 1]), X5, F5),
    "conv3d_batch_shape": (lambda tf, x, w: tf.nn.conv3d(x, w, [1] * 5, "SAME"), X5[None, :1], F5),
    "convolution_3d_dilated": (lambda tf, x, w: tf.nn.convolution(x, w, padding="SAME", dilations=2), X5, F5),
    "convolution_2d_strided": (lambda tf, x, w: tf.nn.convolution(x, w, strides=[2, 1], padding="SAME"), X, F),
    "convolution_2d_dilated_explicit": (
        lambda tf, x, w: tf.nn.convolution(x, w, padding=[[0, 0], [1, 2], [0, 1], [0, 0]], dilations=[2, 1]),
        X,
        F,
    ),
    "convolution_2d_nchw_dilated": (
        lambda tf, x, w: tf.nn.convolution(x, w, padding="SAME", data_format="NCHW", dilations=2),
        XC,
        F,
    ),
    "convolution_1d_dilated": (lambda tf, x, w: tf.nn.convolution(x, w, padding="SAME", dilations=2), X1, F1),
    "convolution_batch_shape_dilated": (
        lambda tf, x, w: tf.nn.convolution(x, w, padding="SAME", dilations=2),
        X[None],
        F,
    ),
    "atrous_same": (lambda tf, x, w: tf.nn.atrous_conv2d(x, w, 2, "SAME"), X, F),
    "atrous_valid_per_axis": (lambda tf, x, w: tf.nn.atrous_conv2d(x, w, [2, 1], "VALID"), X, F),
    "depthwise_same": (lambda tf, x, w: tf.nn.depthwise_conv2d(x, w, [1, 1, 1, 1], "SAME"), X, DW),
    "depthwise_strided": (lambda tf, x, w: tf.nn.depthwise_conv2d(x, w, [1, 2, 3, 1], "SAME"), X, DW),
    "depthwise_valid_strided": (lambda tf, x, w: tf.nn.depthwise_conv2d(x, w, [1, 2, 2, 1], "VALID"), X, DW),
    "depthwise_explicit": (
        lambda tf, x, w: tf.nn.depthwise_conv2d(x, w, [1, 2, 2, 1], [[0, 0], [2, 0], [1, 1], [0, 0]]),
        X,
        DW,
    ),
    "depthwise_dilated": (lambda tf, x, w: tf.nn.depthwise_conv2d(x, w, [1, 1, 1, 1], "SAME", dilations=[2, 2]), X, DW),
    "depthwise_dilated_valid": (
        lambda tf, x, w: tf.nn.depthwise_conv2d(x, w, [1, 1, 1, 1], "VALID", dilations=[2, 1]),
        X,
        DW,
    ),
    "depthwise_dilated_explicit": (
        lambda tf, x, w: tf.nn.depthwise_conv2d(x, w, [1] * 4, [[0, 0], [2, 0], [1, 1], [0, 0]], dilations=[2, 2]),
        X,
        DW,
    ),
    "depthwise_nchw": (
        lambda tf, x, w: tf.nn.depthwise_conv2d(x, w, [1, 1, 2, 2], "SAME", data_format="NCHW", dilations=[1, 1]),
        XC,
        DW,
    ),
    "depthwise_nchw_dilated": (
        lambda tf, x, w: tf.nn.depthwise_conv2d(x, w, [1, 1, 1, 1], "SAME", data_format="NCHW", dilations=[2, 2]),
        XC,
        DW,
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients_match_tensorflow(name):
    _close(*CASES[name])


# TensorFlow warns that strides and a dilation rate above 1 are not meant to be combined, but
# computes its space-to-batch result; gradkit reproduces that result.
STRIDED_DILATED = {
    "same": (lambda tf, x, w: tf.nn.depthwise_conv2d(x, w, [1, 2, 2, 1], "SAME", dilations=[2, 2])),
    "valid": (lambda tf, x, w: tf.nn.depthwise_conv2d(x, w, [1, 3, 2, 1], "VALID", dilations=[2, 3])),
    "explicit": (
        lambda tf, x, w: tf.nn.depthwise_conv2d(x, w, [1, 2, 2, 1], [[0, 0], [1, 2], [0, 1], [0, 0]], dilations=[3, 2])
    ),
}


@pytest.mark.filterwarnings("ignore:When dilation rate is greater than 1")
@pytest.mark.parametrize("name", sorted(STRIDED_DILATED))
def test_strided_dilated_depthwise_is_tensorflows_space_to_batch_result(name):
    _close(STRIDED_DILATED[name], X, DW)


SEPARABLE = {
    "same": lambda tf, x, d, p: tf.nn.separable_conv2d(x, d, p, [1, 1, 1, 1], "SAME"),
    "strided_valid": lambda tf, x, d, p: tf.nn.separable_conv2d(x, d, p, [1, 2, 2, 1], "VALID"),
    "dilated": lambda tf, x, d, p: tf.nn.separable_conv2d(x, d, p, [1, 1, 1, 1], "SAME", dilations=[2, 2]),
}


@pytest.mark.parametrize("name", sorted(SEPARABLE))
def test_separable_conv2d_matches_tensorflow(name):
    _close(SEPARABLE[name], X, DW, PW)


TRANSPOSE = {
    "conv3d_transpose": (
        lambda tf, x, w: tf.nn.conv3d_transpose(x, w, [2, 6, 6, 6, 3], 2),
        RNG.normal(size=(2, 3, 3, 3, 2)).astype(np.float32),
        RNG.normal(size=(2, 2, 2, 3, 2)).astype(np.float32),
    ),
    "conv_transpose_3d_valid": (
        lambda tf, x, w: tf.nn.conv_transpose(x, w, [1, 5, 4, 5, 2], [1, 2, 1, 2, 1], "VALID"),
        RNG.normal(size=(1, 2, 3, 2, 3)).astype(np.float32),
        RNG.normal(size=(3, 2, 3, 2, 3)).astype(np.float32),
    ),
    "atrous_transpose_same": (
        lambda tf, x, w: tf.nn.atrous_conv2d_transpose(x, w, [2, 7, 6, 2], 2, "SAME"),
        X,
        RNG.normal(size=(3, 3, 2, 3)).astype(np.float32),
    ),
    "atrous_transpose_valid": (
        lambda tf, x, w: tf.nn.atrous_conv2d_transpose(x, w, [2, 11, 8, 2], 2, "VALID"),
        X,
        RNG.normal(size=(3, 2, 2, 3)).astype(np.float32),
    ),
}


@pytest.mark.parametrize("name", sorted(TRANSPOSE))
def test_transposed_convolutions_match_tensorflow(name):
    _close(*TRANSPOSE[name])


def test_a_depthwise_separable_block_inside_tf_function_matches_tensorflow():
    def f(tf, x, d, p):
        @tf.function
        def block(inputs):
            h = tf.nn.relu(tf.nn.depthwise_conv2d(inputs, d, [1, 1, 1, 1], "SAME"))  # 6 channels
            return tf.nn.separable_conv2d(h, tf.constant(DW6), p, [1, 2, 2, 1], "SAME")

        return block(x)

    _close(f, X, DW, PW)


BAD = {
    "conv3d_int_strides": lambda tf: tf.nn.conv3d(tf.constant(X5), tf.constant(F5), 1, "SAME"),
    "conv3d_three_strides": lambda tf: tf.nn.conv3d(tf.constant(X5), tf.constant(F5), [1, 2, 1], "SAME"),
    "conv3d_explicit": lambda tf: tf.nn.conv3d(
        tf.constant(X5), tf.constant(F5), [1] * 5, [[0, 0]] + [[1, 1]] * 3 + [[0, 0]]
    ),
    "convolution_lower_case": lambda tf: tf.nn.convolution(tf.constant(X), tf.constant(F), padding="same"),
    "convolution_strided_dilated": lambda tf: tf.nn.convolution(tf.constant(X), tf.constant(F), 2, "SAME", dilations=2),
    "atrous_rate_0": lambda tf: tf.nn.atrous_conv2d(tf.constant(X), tf.constant(F), 0, "SAME"),
    "atrous_explicit": lambda tf: tf.nn.atrous_conv2d(
        tf.constant(X), tf.constant(F), 1, [[0, 0]] + [[1, 1]] * 2 + [[0, 0]]
    ),
    "depthwise_int_strides": lambda tf: tf.nn.depthwise_conv2d(tf.constant(X), tf.constant(DW), 1, "SAME"),
    "depthwise_two_strides": lambda tf: tf.nn.depthwise_conv2d(tf.constant(X), tf.constant(DW), [2, 2], "SAME"),
    "depthwise_int_dilations": lambda tf: tf.nn.depthwise_conv2d(
        tf.constant(X), tf.constant(DW), [1] * 4, "SAME", dilations=2
    ),
    "depthwise_four_dilations": lambda tf: tf.nn.depthwise_conv2d(
        tf.constant(X), tf.constant(DW), [1] * 4, "SAME", dilations=[1, 2, 2, 1]
    ),
    "depthwise_channels": lambda tf: tf.nn.depthwise_conv2d(tf.constant(X), tf.constant(DW[:, :, :2]), [1] * 4, "SAME"),
    "separable_pointwise_2x1": lambda tf: tf.nn.separable_conv2d(
        tf.constant(X), tf.constant(DW), tf.constant(np.ones((2, 1, 6, 4), np.float32)), [1] * 4, "SAME"
    ),
    "separable_pointwise_channels": lambda tf: tf.nn.separable_conv2d(
        tf.constant(X), tf.constant(DW), tf.constant(np.ones((1, 1, 5, 4), np.float32)), [1] * 4, "SAME"
    ),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_arguments_raise_as_in_tensorflow_with_a_gradkit_message(name):
    assert isinstance(run_both(BAD[name]), Exception)
    with pytest.raises(GradkitError, match=r"^\[gradkit\] tf\.nn\.\w+"):
        BAD[name](gtf)
