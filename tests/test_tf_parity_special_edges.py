"""``tf.math.igamma`` / ``igammac`` at the edges of their domain take TensorFlow's values: at
``a = +inf`` igamma is 0 and igammac 1 (0 at ``x = +inf`` too), with a zero gradient with respect
to ``a`` there and at ``a = x = 0``. Expected values by hand, checked against TensorFlow where
installed."""

import numpy as np
import pytest

import gradkit.tf as gtf

A = np.array([np.inf, np.inf, 0.0, 2.0], np.float32)
X = np.array([2.0, np.inf, 0.0, 2.0], np.float32)


def _program(tf):
    a, x = tf.constant(A), tf.constant(X)
    with tf.GradientTape() as tape:
        tape.watch(a)
        p = tf.math.igamma(a, x)
    return p.numpy(), tf.math.igammac(a, x).numpy(), tape.gradient(p, a).numpy()


def test_igamma_and_igammac_at_an_infinite_or_zero_shape():
    p, q, dp_da = _program(gtf)
    np.testing.assert_array_equal(p[:3], [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(q[:2], [1.0, 0.0])
    assert np.isnan(q[2])  # igammac(0, 0)
    np.testing.assert_allclose(p[3] + q[3], 1.0, rtol=1e-6)  # P + Q = 1 inside the domain
    np.testing.assert_array_equal(dp_da[:3], [0.0, 0.0, 0.0])
    tf_real = pytest.importorskip("tensorflow")
    for got, want in zip((p, q, dp_da), _program(tf_real)):
        np.testing.assert_allclose(got, want, rtol=1e-5)
