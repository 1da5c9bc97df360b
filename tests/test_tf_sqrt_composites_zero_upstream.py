"""Norms and ``reduce_std`` are TensorFlow's ``sqrt`` of a sum, and TensorFlow's SqrtGrad gives 0
for a zero upstream: ``tf.norm(v) ** 2`` at v = 0, the squared std of a constant row and
``global_norm(...) ** 2`` at 0 have gradient 0 there, not 0 * inf = NaN. Oracles: the hand
derivation (d|v|^2/dv = 2v, d var/dx = 2(x - mean)/n, both 0 at these points; elsewhere the
squared forms' jax gradients), and TensorFlow. (``reduce_euclidean_norm`` is a kernel of its own
in TensorFlow, whose gradient is NaN there; gradkit's is too.)"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gradkit.tf as gtf

X = np.array([[2.0, 2.0, 2.0], [1.0, 2.0, 4.0]], np.float32)  # the first row is constant

PROGRAMS = {
    "reduce_std": lambda tf, x: tf.reduce_sum(tf.math.reduce_std(x, axis=1) ** 2),
    "norm": lambda tf, x: tf.reduce_sum(tf.norm(x - 2.0, axis=1) ** 2),
    "linalg_norm": lambda tf, x: tf.reduce_sum(tf.linalg.norm(x - 2.0, axis=1) ** 2),
    "global_norm": lambda tf, x: tf.linalg.global_norm([x[0] - 2.0, x[0] * 0.0]) ** 2,
}

# The same losses without a square root: their gradients are the exact ones everywhere.
SQUARED = {
    "reduce_std": lambda x: jnp.sum(jnp.var(x, axis=1)),
    "norm": lambda x: jnp.sum((x - 2.0) ** 2),
    "linalg_norm": lambda x: jnp.sum((x - 2.0) ** 2),
    "global_norm": lambda x: jnp.sum((x[0] - 2.0) ** 2),
}


def _gradient(tf, name):
    x = tf.constant(X)
    with tf.GradientTape() as tape:
        tape.watch(x)
        loss = PROGRAMS[name](tf, x)
    return np.asarray(tape.gradient(loss, x))


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_gradient_is_the_exact_one_where_the_norm_is_zero(name):
    got = _gradient(gtf, name)
    assert np.isfinite(got).all(), got
    np.testing.assert_allclose(got, jax.grad(SQUARED[name])(jnp.asarray(X)), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_matches_tensorflow(name):
    tf = pytest.importorskip("tensorflow")
    np.testing.assert_allclose(_gradient(gtf, name), _gradient(tf, name), rtol=1e-5, atol=1e-6)
