"""``tf.Variable``'s remaining scatter and read methods: ``scatter_max / _min / _mul / _div``,
``scatter_nd_max / _min``, ``batch_scatter_update``, ``sparse_read`` and ``gather_nd``.

Values against real TensorFlow (skipped without it). Gradients, which TensorFlow does not give
through a Variable's scatter, against ``jax.grad`` of a pure-JAX rewrite of the same update,
with repeated rows (TensorFlow applies a repeated row's values one after another)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gradkit.tf as gtf

try:
    import tensorflow as tf_real
except ImportError:
    tf_real = None

X = np.array([[1.0, -2.0], [3.0, 4.0], [0.5, -1.0], [2.0, 2.5]], np.float32)
ROWS = np.array([0, 2, 0])
VALUES = np.array([[2.0, 3.0], [-1.5, 5.0], [0.5, -4.0]], np.float32)
WEIGHTS = np.array([[1.0, -2.0], [0.5, 3.0], [2.0, 1.5], [-1.0, 0.25]], np.float32)

# Row 0 takes VALUES[0] and then VALUES[2]; row 2 takes VALUES[1].
REWRITES = {
    "scatter_max": lambda x, u: (
        x.at[0].set(jnp.maximum(jnp.maximum(x[0], u[0]), u[2])).at[2].set(jnp.maximum(x[2], u[1]))
    ),
    "scatter_min": lambda x, u: (
        x.at[0].set(jnp.minimum(jnp.minimum(x[0], u[0]), u[2])).at[2].set(jnp.minimum(x[2], u[1]))
    ),
    "scatter_mul": lambda x, u: x.at[0].set(x[0] * u[0] * u[2]).at[2].set(x[2] * u[1]),
    "scatter_div": lambda x, u: x.at[0].set(x[0] / u[0] / u[2]).at[2].set(x[2] / u[1]),
}


def _update(tf, method, x, values):
    v = tf.Variable(np.zeros_like(X))
    v.assign(x * 1.0)
    getattr(v, method)(tf.IndexedSlices(values * 1.0, tf.constant(ROWS)))
    return v


@pytest.mark.parametrize("method", sorted(REWRITES))
def test_scatter_methods_values_and_gradients_match_the_rewrite(method):
    x, values = gtf.Variable(X), gtf.Variable(VALUES)
    with gtf.GradientTape() as tape:
        v = _update(gtf, method, x, values)
        loss = gtf.reduce_sum(v * WEIGHTS)
    grads = tape.gradient(loss, [x, values])

    def pure(x, u):
        return jnp.sum(REWRITES[method](x, u) * WEIGHTS)

    expected = jax.grad(pure, (0, 1))(jnp.asarray(X), jnp.asarray(VALUES))
    np.testing.assert_allclose(v.numpy(), REWRITES[method](jnp.asarray(X), jnp.asarray(VALUES)), rtol=1e-6)
    for got, want in zip(grads, expected):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6)


def test_scatter_mul_with_a_zero_value_keeps_the_exact_gradient():
    values = VALUES.copy()
    values[0, 1] = 0.0  # row 0, column 1: x * 0 * u2
    x, u = gtf.Variable(X), gtf.Variable(values)
    with gtf.GradientTape() as tape:
        loss = gtf.reduce_sum(_update(gtf, "scatter_mul", x, u) * WEIGHTS)
    expected = jax.grad(lambda x, u: jnp.sum(REWRITES["scatter_mul"](x, u) * WEIGHTS), (0, 1))(X, values)
    for got, want in zip(tape.gradient(loss, [x, u]), expected):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6)


def test_scatter_nd_max_min_and_batch_scatter_update_gradients_match_the_rewrite():
    x, u = gtf.Variable(X), gtf.Variable([5.0, -7.0, 9.0])
    with gtf.GradientTape() as tape:
        v = gtf.Variable(np.zeros_like(X))
        v.assign(x * 1.0)
        v.scatter_nd_max([[0, 1], [3, 0], [1, 1]], u * 1.0)
        v.scatter_nd_min([[3, 0], [2, 1]], u[:2] * 1.0)
        v.batch_scatter_update(gtf.IndexedSlices(gtf.stack([u[1:], u[1:]], axis=1), [1, 2]))
        loss = gtf.reduce_sum(v * WEIGHTS)

    def pure(x, u):
        y = x.at[0, 1].max(u[0]).at[3, 0].max(u[1]).at[1, 1].max(u[2])
        y = y.at[3, 0].min(u[0]).at[2, 1].min(u[1])
        return y.at[1].set(u[1]).at[2].set(u[2])

    expected_value = pure(jnp.asarray(X), jnp.array([5.0, -7.0, 9.0]))
    np.testing.assert_allclose(v.numpy(), expected_value)
    expected = jax.grad(lambda x, u: jnp.sum(pure(x, u) * WEIGHTS), (0, 1))(jnp.asarray(X), jnp.array([5.0, -7.0, 9.0]))
    for got, want in zip(tape.gradient(loss, [x, u]), expected):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)


def test_sparse_read_and_gather_nd_read_rows_and_carry_gradients():
    v = gtf.Variable(X)
    with gtf.GradientTape() as tape:
        loss = gtf.reduce_sum(v.sparse_read([3, 0, 3]) ** 2) + gtf.reduce_sum(v.gather_nd([[1, 1], [2, 0]]))
    expected = np.zeros_like(X)
    expected[3] = 4 * X[3]
    expected[0] = 2 * X[0]
    expected[1, 1] += 1.0
    expected[2, 0] += 1.0
    np.testing.assert_allclose(tape.gradient(loss, v).numpy(), expected)


@pytest.mark.skipif(tf_real is None, reason="TensorFlow is not installed")
@pytest.mark.parametrize("method", [*sorted(REWRITES), "scatter_nd_max", "scatter_nd_min", "batch_scatter_update"])
def test_values_match_tensorflow(method):
    out = []
    for tf in (tf_real, gtf):
        if method.startswith("scatter_nd"):
            v = tf.Variable(X)
            getattr(v, method)(tf.constant([[0, 1], [3, 0], [0, 1]]), tf.constant([5.0, -7.0, 9.0]))
        elif method == "batch_scatter_update":
            v = tf.Variable(np.arange(12.0, dtype=np.float32).reshape(3, 4))
            updates = tf.constant([[-1.0, -2.0], [-3.0, -4.0], [9.0, 9.0]])
            v.batch_scatter_update(tf.IndexedSlices(updates, tf.constant([[2, 0], [1, 3], [0, 0]])))
        else:
            v = _update(tf, method, tf.constant(X), tf.constant(VALUES))
        out.append(v.numpy())
    np.testing.assert_allclose(out[1], out[0], rtol=1e-6)
    for tf in (tf_real, gtf):
        v = tf.Variable(X)
        out.append((v.sparse_read([3, 0]).numpy(), v.gather_nd([[1, 1], [2, 0]]).numpy()))
    for got, want in zip(out[-1], out[-2]):
        np.testing.assert_array_equal(got, want)
