"""``tf.math.igamma`` / ``igammac`` at the edges of their domain take TensorFlow's values: at
``a = +inf`` igamma is 0 and igammac 1 (0 at ``x = +inf`` too), with a zero gradient with respect
to ``a`` there and at ``a = x = 0``; ``acosh`` and ``softsign`` differentiate as TensorFlow's
kernels (NaN outside acosh's domain, 0 for softsign at infinity). Expected values by hand, checked against TensorFlow where
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


def test_acosh_and_softsign_differentiate_as_tensorflows_kernels():
    import jax.numpy as jnp
    from jax.test_util import check_grads

    from gradkit.tf._arithmetic import _acosh
    from gradkit.tf._nn import _softsign

    check_grads(_acosh, (jnp.array([1.5, 2.0, 7.0]),), order=2, modes=["fwd", "rev"])
    check_grads(_softsign, (jnp.array([-3.0, -0.5, 0.7, 4.0]),), order=2, modes=["fwd", "rev"])

    def program(tf):
        x = tf.constant([-2.5, -1.0, 0.5, 2.0])  # acosh: NaN gradient outside x >= 1
        s = tf.constant([np.inf, -np.inf, 1.0])  # softsign: gradient 0 at +-inf
        with tf.GradientTape(persistent=True) as tape:
            tape.watch([x, s])
            y, z = tf.math.acosh(x), tf.math.softsign(s)
        return tape.gradient(y, x).numpy(), tape.gradient(z, s).numpy()

    dy, dz = program(gtf)
    assert np.isnan(dy[:3]).all()
    np.testing.assert_allclose(dy[3], 1 / np.sqrt(3.0), rtol=1e-6)  # 1 / sqrt(x^2 - 1)
    np.testing.assert_array_equal(dz, [0.0, 0.0, 0.25])  # 1 / (1 + |x|)^2
    tf_real = pytest.importorskip("tensorflow")
    for got, want in zip((dy, dz), program(tf_real)):
        np.testing.assert_allclose(got, want, rtol=1e-6)
