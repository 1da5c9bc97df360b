"""tf.math.digamma, tf.linalg.cholesky_solve, tf.nn.batch_normalization and tf.nn.crelu:
values, gradients and errors against real TensorFlow; inside tf.function; and through a
Variable assignment against a pure-JAX rewrite (where real TensorFlow gives None)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
from test_tf_parity import run_both  # noqa: E402
from test_tf_parity import run_both_ok as _ok  # noqa: E402

import gradkit.tf as gtf  # noqa: E402

X = np.array([[0.3, -1.2, 0.8], [1.5, 0.1, -0.4]], np.float32)
SPD = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.3], [0.5, 0.3, 2.0]], np.float32)
RHS = np.array([[1.0, -2.0], [0.5, 3.0], [-1.0, 0.25]], np.float32)


def _weighted_sum(tf, y):
    w = np.cos(np.arange(int(np.prod(y.shape)), dtype=np.float32)).reshape(tuple(y.shape))
    return tf.reduce_sum(y * tf.constant(w))


CASES = {
    "digamma": lambda tf, x, m: tf.math.digamma(tf.abs(x) + 0.5),
    "digamma_negative": lambda tf, x, m: tf.math.digamma(x - 0.5),
    "crelu": lambda tf, x, m: tf.nn.crelu(x),
    "crelu_axis0": lambda tf, x, m: tf.nn.crelu(x * tf.constant([[1.0, 0.0, 1.0], [1.0, 1.0, 1.0]]), axis=0),
    "batch_normalization": lambda tf, x, m: tf.nn.batch_normalization(
        x, tf.reduce_mean(x, 0), tf.math.reduce_variance(x, 0), m[0], m[1] * 2.0, 1e-3
    ),
    "batch_normalization_no_offset_scale": lambda tf, x, m: tf.nn.batch_normalization(
        x, m[0], tf.abs(m[1]) + 0.5, None, None, 0.01
    ),
    "batch_normalization_moments": lambda tf, x, m: tf.nn.batch_normalization(
        tf.reshape(x, [1, 2, 3]), *tf.nn.moments(tf.reshape(x, [1, 2, 3]), axes=[0, 1]), m[0], None, 1e-5
    ),
    "cholesky_solve": lambda tf, x, m: tf.linalg.cholesky_solve(
        tf.linalg.cholesky(tf.constant(SPD) + tf.matmul(x, x, transpose_a=True)), tf.transpose(m)
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients_match_tensorflow(name):
    def program(tf):
        x, m = tf.Variable(X), tf.Variable(X[::-1] * 0.5)
        with tf.GradientTape() as tape:
            y = CASES[name](tf, x, m)
            loss = _weighted_sum(tf, y)
        return [y, tape.gradient(loss, [x, m])]

    _ok(program)


def test_batched_cholesky_solve_matches_tensorflow():
    def program(tf):
        a = tf.Variable(np.stack([SPD, SPD * 2.0 + np.eye(3, dtype=np.float32)]))
        b = tf.Variable(np.stack([RHS, -RHS]))
        with tf.GradientTape() as tape:
            y = tf.linalg.cholesky_solve(tf.linalg.cholesky(a), b)
            loss = _weighted_sum(tf, y)
        return [y, tape.gradient(loss, [a, b])]

    _ok(program)


def test_inside_tf_function_match_tensorflow():
    def program(tf):
        x = tf.Variable(X)

        @tf.function
        def forward():
            mean, var = tf.nn.moments(x, axes=[0])
            h = tf.nn.crelu(tf.nn.batch_normalization(x, mean, var, None, None, 1e-3))
            return tf.math.digamma(tf.abs(h) + 1.0)

        with tf.GradientTape() as tape:
            y = forward()
            loss = _weighted_sum(tf, y)
        return [y, tape.gradient(loss, x)]

    _ok(program)


def test_the_gradient_through_an_assigned_variable_is_exact():
    def pure(source):
        v = jnp.tanh(source)
        h = jnp.concatenate([jax.nn.relu(v), jax.nn.relu(-v)], -1)
        h = (h - 0.1) * jax.lax.rsqrt(jnp.float32(2.0) + 1e-3)
        chol = jnp.linalg.cholesky(jnp.asarray(SPD))
        sol = jax.scipy.linalg.cho_solve((chol, True), v.T)
        return jnp.sum(jax.scipy.special.digamma(jnp.abs(h) + 1.0)) + jnp.sum(sol * sol)

    source, v = gtf.Variable(X), gtf.Variable(np.zeros_like(X))
    with gtf.GradientTape() as tape:
        v.assign(gtf.tanh(source))
        h = gtf.nn.batch_normalization(gtf.nn.crelu(v), 0.1, 2.0, None, None, 1e-3)
        sol = gtf.linalg.cholesky_solve(gtf.linalg.cholesky(SPD), gtf.transpose(v))
        loss = gtf.reduce_sum(gtf.math.digamma(gtf.abs(h) + 1.0)) + gtf.reduce_sum(sol * sol)
    np.testing.assert_allclose(loss.numpy(), pure(jnp.asarray(X)), rtol=1e-5)
    np.testing.assert_allclose(tape.gradient(loss, source).numpy(), jax.grad(pure)(jnp.asarray(X)), rtol=1e-4)


def test_cholesky_solve_of_mismatched_shapes_raises_as_in_tensorflow():
    bad = lambda tf: tf.linalg.cholesky_solve(tf.constant(SPD), tf.constant(RHS[:2]))  # noqa: E731
    assert isinstance(run_both(bad), Exception)
    with pytest.raises(ValueError, match=r"^\[gradkit\] tf.linalg.cholesky_solve"):
        bad(gtf)
