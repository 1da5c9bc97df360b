"""Gradients through a reciprocal square root in float16 (``tf.math.rsqrt``, ``tf.nn.l2_normalize``,
``tf.nn.batch_normalization``'s variance) as TensorFlow's RsqrtGrad computes them,
``-0.5 * (upstream * y) * y**2``: finite where the derivative alone (``x ** -1.5``, past float16's
65504) would overflow; 0 for a zero upstream. Oracles: the float64 derivative by hand, and TensorFlow
where installed."""

import numpy as np
import pytest

import gradkit.tf as gtf


def _rsqrt_gradient(tf, x, upstream):
    x = tf.Variable(np.array(x, np.float16))
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.math.rsqrt(x) * tf.constant(upstream, tf.float16))
    return np.asarray(tape.gradient(y, x), np.float64)


def test_rsqrt_gradient_of_a_small_float16_is_finite():
    x = np.float16([1e-4, 4e-4])
    got = _rsqrt_gradient(gtf, x, 0.01)
    want = 0.01 * -0.5 * x.astype(np.float64) ** -1.5  # -5000 and -625: in float16's range
    np.testing.assert_allclose(got, want, rtol=2e-3)
    tf = pytest.importorskip("tensorflow")
    np.testing.assert_allclose(got, _rsqrt_gradient(tf, x, 0.01), rtol=2e-3)


def _normalized(tf):
    x = tf.Variable(np.array([0.01, -0.01], np.float16))
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.nn.l2_normalize(x) * tf.constant([1.0, 2.0], tf.float16))
    variance = tf.Variable(np.array([1e-4, 1e-4], np.float16))
    with tf.GradientTape() as tape2:
        z = tf.nn.batch_normalization(
            tf.constant([0.01, 0.02], tf.float16), tf.constant(0.0, tf.float16), variance, None, None, 1e-5
        )
        z = tf.reduce_sum(z * tf.constant(0.01, tf.float16))
    zero = tf.Variable([0.0, 1.0])
    with tf.GradientTape() as tape3:
        w = tf.reduce_sum(tf.nn.batch_normalization(tf.zeros([2]), 0.0, zero, None, None, 0.0))
    return [
        np.asarray(g, np.float64) for g in (tape.gradient(y, x), tape2.gradient(z, variance), tape3.gradient(w, zero))
    ]


def test_l2_normalize_and_batch_normalization_in_float16():
    normalize, variance, zero_upstream = _normalized(gtf)
    # l2_normalize: the Jacobian of x / |x| is (I - x x^T / |x|^2) / |x|; the upstream is (1, 2).
    x = np.array([0.01, -0.01], np.float64)
    x = np.float16(x).astype(np.float64)
    norm = np.linalg.norm(x)
    want = (np.eye(2) - np.outer(x, x) / norm**2) @ np.array([1.0, 2.0]) / norm
    np.testing.assert_allclose(normalize, want, rtol=2e-3)
    # batch_normalization: d/dv of 0.01 * x * (v + eps) ** -0.5 = -0.005 * x * (v + eps) ** -1.5.
    v = np.float16(1e-4).astype(np.float64) + np.float16(1e-5).astype(np.float64)
    np.testing.assert_allclose(variance, -0.005 * np.array([0.01, 0.02]) * v**-1.5, rtol=2e-2)
    # x = mean = 0: the upstream of the reciprocal square root is 0, so its gradient is 0 (not 0 * inf).
    np.testing.assert_array_equal(zero_upstream, [0.0, 0.0])
    tf = pytest.importorskip("tensorflow")
    for got, expected in zip((normalize, variance, zero_upstream), _normalized(tf)):
        np.testing.assert_allclose(got, expected, rtol=2e-3)


def test_rsqrt_second_order_and_forward_mode():
    y = gtf.Variable([0.5, 2.0])
    with gtf.GradientTape() as outer:
        with gtf.GradientTape() as inner:
            r = gtf.reduce_sum(gtf.math.rsqrt(y))
        first = inner.gradient(r, y)
    second = outer.gradient(first, y)
    values = np.array([0.5, 2.0])
    np.testing.assert_allclose(second, 0.75 * values**-2.5, rtol=1e-6)
    with gtf.autodiff.ForwardAccumulator(y, gtf.constant([1.0, 1.0])) as accumulator:
        r = gtf.math.rsqrt(y)
    np.testing.assert_allclose(accumulator.jvp(r), -0.5 * values**-1.5, rtol=1e-6)


def test_dropout_of_rate_zero_returns_a_tensor():
    y = gtf.nn.dropout(np.ones(3, np.float32), rate=0.0)
    np.testing.assert_array_equal(y.numpy(), [1.0, 1.0, 1.0])
