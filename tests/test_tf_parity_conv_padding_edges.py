"""Convolutions with explicit padding differentiate right at every order (computed as a pad
and a VALID convolution: XLA's strided transpose with uneven explicit padding aborted the
process, and gave wrong second derivatives without strides); average pooling whose VALID
window exceeds the input is empty, as in TensorFlow; integer ``tf.constant`` shapes inside
``tf.function`` are known; 1-D explicit padding is refused as TensorFlow refuses it.
``check_grads`` (finite differences, both modes, order 2) and real TensorFlow are the oracles."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

import gradkit.tf as gtf

RNG = np.random.default_rng(1)
X = RNG.standard_normal((2, 6, 6, 1)).astype(np.float32)
W = RNG.standard_normal((3, 2, 1, 2)).astype(np.float32)
CASES = {
    "strided": ([1, 3, 2, 1], [[0, 0], [0, 1], [1, 2], [0, 0]]),
    "unit_strides": (1, [[0, 0], [2, 0], [1, 2], [0, 0]]),
}


def _conv(strides, padding):
    return lambda x, w: jnp.sum(jnp.sin(jnp.asarray(gtf.nn.conv2d(x, w, strides, padding))))


@pytest.mark.parametrize("name", sorted(CASES))
def test_explicit_padding_derivatives_by_finite_differences(name):
    strides, padding = CASES[name]
    with jax.default_matmul_precision("highest"):
        check_grads(
            _conv(strides, padding), (jnp.asarray(X[:1, :5, :5]), jnp.asarray(W)), order=2, atol=5e-2, rtol=5e-2
        )


def _tape_program(tf, strides, padding):
    x, w = tf.Variable(X), tf.Variable(W)
    probe = np.cos(np.arange(X.size, dtype=np.float32)).reshape(X.shape)
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            loss = tf.reduce_sum(tf.sin(tf.nn.conv2d(x, w, strides, padding)))
        gx, gw = inner.gradient(loss, [x, w])
        s = tf.reduce_sum(gx * probe)
    return [loss, gx, gw, outer.gradient(s, w)]


@pytest.mark.parametrize("name", sorted(CASES))
def test_explicit_padding_matches_tensorflow_to_second_order(name):
    tf_real = pytest.importorskip("tensorflow")
    got = [np.asarray(v.numpy()) for v in _tape_program(gtf, *CASES[name])]
    want = [np.asarray(v.numpy()) for v in _tape_program(tf_real, *CASES[name])]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=2e-4, atol=2e-4)


def test_average_pooling_with_a_window_larger_than_the_input_is_empty():
    x = gtf.Variable(np.ones((1, 2, 2, 1), np.float32))
    with gtf.GradientTape() as tape:
        y = gtf.nn.avg_pool2d(x, 3, 3, "VALID")
        z = gtf.nn.avg_pool1d(gtf.reshape(x, [1, 4, 1]), 5, 1, "VALID")
        loss = gtf.reduce_sum(y) + gtf.reduce_sum(z)
    assert tuple(y.shape) == (1, 0, 0, 1) and tuple(z.shape) == (1, 0, 1)
    np.testing.assert_array_equal(tape.gradient(loss, x).numpy(), np.zeros((1, 2, 2, 1), np.float32))
    with pytest.raises(ValueError, match="larger than the input"):
        gtf.nn.max_pool2d(x, 4, 1, "VALID")  # TensorFlow's output size (2 - 4 + 1) // 1 is negative


def test_an_integer_constant_shape_inside_tf_function_is_known():
    @gtf.function
    def f(x):
        return gtf.nn.conv2d_transpose(x, gtf.ones([2, 2, 1, 1]), gtf.constant([1, 4, 4, 1]), 2)

    y = f(gtf.ones([1, 2, 2, 1]))
    assert tuple(y.shape) == (1, 4, 4, 1)
    np.testing.assert_allclose(float(gtf.reduce_sum(y)), 16.0)


@pytest.mark.parametrize(
    "call",
    [
        lambda tf: tf.nn.conv1d(tf.ones([1, 4, 1]), tf.ones([2, 1, 1]), 1, [[0, 0], [1, 1], [0, 0]]),
        lambda tf: tf.nn.convolution(tf.ones([1, 4, 1]), tf.ones([2, 1, 1]), padding=[[0, 0], [1, 1], [0, 0]]),
    ],
)
def test_one_dimensional_explicit_padding_is_refused(call):
    with pytest.raises(TypeError, match=r"^\[gradkit\] tf\.nn\.(conv1d|convolution)"):
        call(gtf)
    tf_real = pytest.importorskip("tensorflow")
    with pytest.raises(TypeError):
        call(tf_real)


@pytest.mark.parametrize(
    "make, shape",
    [
        (lambda tf: tf.keras.layers.Conv2D(2, 8), (2, 7, 9, 4)),
        (lambda tf: tf.keras.layers.Conv1D(2, 6), (2, 5, 4)),
        (lambda tf: tf.keras.layers.Conv1D(2, 3, dilation_rate=3), (2, 5, 4)),  # spans 7
    ],
)
def test_a_valid_convolution_window_larger_than_its_input_is_refused(make, shape):
    # Keras: "Computed output size would be zero or negative" (an empty output trains on nothing).
    with pytest.raises(ValueError, match=r"\[gradkit\].*padding='same'"):
        make(gtf)(gtf.zeros(shape))
    with pytest.raises(ValueError, match=r"\[gradkit\]"):
        make(gtf)(gtf.keras.Input(shape[1:]))


def test_an_unknown_length_is_not_refused_before_it_is_known():
    inputs = gtf.keras.Input((None, 4))
    model = gtf.keras.Model(inputs, gtf.keras.layers.Conv1D(2, 20)(inputs))
    assert model(np.zeros((1, 25, 4), "float32")).shape == (1, 6, 2)  # 25 - 20 + 1
