"""Scatter assignments on a tf.Variable keep gradients (gradkit's contract: assignment does
not cut), checked against pure-JAX rewrites with ``.at[].set`` / ``.at[].add``."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gradkit.tf as tf

V0 = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], np.float32)
U0 = np.array([0.5, -1.5], np.float32)


def pure_loss(v, u, how):
    """The rewrite: each scatter is a new array, then the loss reads it."""
    if how == "nd_update":
        v = v.at[(jnp.array([0, 2]), jnp.array([1, 0]))].set(u * u)
    elif how == "nd_add":
        v = v.at[jnp.array([1, 1])].add(jnp.stack([u, u * 2.0]))
    elif how == "nd_sub":
        v = v.at[(jnp.array([2]), jnp.array([1]))].add(-u[:1] * 3.0)
    elif how == "update":
        v = v.at[jnp.array([2])].set(u[None] * 4.0)
    return jnp.sum(jnp.sin(v) * v)


def gk_program(v, u, how):
    if how == "nd_update":
        v.scatter_nd_update([[0, 1], [2, 0]], u * u)
    elif how == "nd_add":
        v.scatter_nd_add([[1], [1]], tf.stack([u, u * 2.0]))
    elif how == "nd_sub":
        v.scatter_nd_sub([[2, 1]], u[:1] * 3.0)
    elif how == "update":
        v.scatter_update(tf.IndexedSlices(tf.expand_dims(u, 0) * 4.0, tf.constant([2])))
    return tf.reduce_sum(tf.sin(v) * v)


@pytest.mark.parametrize("how", ["nd_update", "nd_add", "nd_sub", "update"])
def test_scatter_gradients_are_exact(how):
    v, u = tf.Variable(V0), tf.Variable(U0)
    with tf.GradientTape() as t:
        loss = gk_program(v, u, how)
    gv, gu = t.gradient(loss, [v, u])
    want_loss = pure_loss(jnp.asarray(V0), jnp.asarray(U0), how)
    want_gv, want_gu = jax.grad(pure_loss, argnums=(0, 1))(jnp.asarray(V0), jnp.asarray(U0), how)
    np.testing.assert_allclose(loss.numpy(), want_loss, rtol=1e-5)
    np.testing.assert_allclose(gv.numpy(), want_gv, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gu.numpy(), want_gu, rtol=1e-5, atol=1e-6)


def test_assign_read_value_false_keeps_the_gradient():
    a, c = tf.Variable(2.0), tf.Variable(0.0)
    with tf.GradientTape() as t:
        assert c.assign(a * a, read_value=False) is None
        loss = c * 3.0
    np.testing.assert_allclose(t.gradient(loss, a).numpy(), jax.grad(lambda a: 3.0 * a * a)(2.0))


def test_scatter_update_needs_indexed_slices():
    v = tf.Variable([1.0, 2.0])
    with pytest.raises(TypeError, match=r"^\[gradkit\] Variable.scatter_update takes a tf.IndexedSlices"):
        v.scatter_update([[0], [1.0]])


@pytest.mark.parametrize("method", ["scatter_nd_update", "scatter_update"])
def test_a_repeated_index_gives_its_gradient_to_the_update_written(method):
    # v[0] is written twice; the second write (x1 * x2) is the value read, so by hand
    # d/dx sum(v * [1, 2, 3]) = d(x1 * x2)/dx = [0, x2, x1]: the overwritten update has none.
    x0 = np.array([0.7, -0.3, 1.2], np.float32)
    x = tf.constant(x0)
    v = tf.Variable(tf.zeros([3]))
    with tf.GradientTape() as tape:
        tape.watch(x)
        updates = tf.stack([x[0] * x[2], x[1] * x[2]])
        if method == "scatter_nd_update":
            v.scatter_nd_update([[0], [0]], updates)
        else:
            v.scatter_update(tf.IndexedSlices(updates, tf.constant([0, 0])))
        loss = tf.reduce_sum(v * tf.constant([1.0, 2.0, 3.0]))
    assert float(loss) == pytest.approx(x0[1] * x0[2])
    np.testing.assert_allclose(tape.gradient(loss, x), [0.0, x0[2], x0[1]], rtol=1e-6)
    # The same program rewritten in JAX (jax's scatter rule) agrees.
    pure = jax.grad(
        lambda x: jnp.sum(
            jnp.zeros(3).at[jnp.array([0, 0])].set(jnp.stack([x[0] * x[2], x[1] * x[2]])) * jnp.arange(1.0, 4.0)
        )
    )
    np.testing.assert_allclose(pure(x0), [0.0, x0[2], x0[1]], rtol=1e-6)
