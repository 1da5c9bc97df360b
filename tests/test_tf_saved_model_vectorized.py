"""Jacobians and ``tf.vectorized_map`` through a function loaded by ``tf.saved_model.load``.

A loaded function is a compiled ``jax.export`` program that jax cannot vectorise itself;
``tape.jacobian`` (with or without pfor), ``batch_jacobian``, a Hessian of nested tapes and
``tf.vectorized_map`` must still compute what they compute for the original function.
Oracle: the pure-JAX rewrite of the saved program (``jax.jacrev`` / ``jax.vmap``)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gradkit.tf as gtf

W = np.array([[0.5, -1.0], [2.0, 0.3], [-0.7, 1.1]], np.float32)
X = np.array([[0.1, 0.2, -0.3], [0.4, -0.5, 0.6], [0.2, 0.1, 0.0], [-0.3, 0.3, 0.9]], np.float32)


def _f(w, x):
    return jnp.tanh(x @ w) ** 2


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    class M(gtf.Module):
        def __init__(self):
            super().__init__()
            self.w = gtf.Variable(W)

        @gtf.function(input_signature=[gtf.TensorSpec([None, 3], gtf.float32)])
        def f(self, x):
            return gtf.tanh(x @ self.w) ** 2

    path = str(tmp_path_factory.mktemp("vectorized"))
    gtf.saved_model.save(M(), path)
    return gtf.saved_model.load(path)


@pytest.mark.parametrize("pfor", [True, False])
def test_jacobians_through_a_loaded_function(loaded, pfor):
    x = gtf.constant(X)
    with gtf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = loaded.f(x)
    jac_x = tape.jacobian(y, x, experimental_use_pfor=pfor)
    jac_w = tape.jacobian(y, loaded.w, experimental_use_pfor=pfor)
    batch = tape.batch_jacobian(y, x, experimental_use_pfor=pfor)
    np.testing.assert_allclose(jac_x.numpy(), jax.jacrev(_f, 1)(W, X), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(jac_w.numpy(), jax.jacrev(_f, 0)(W, X), rtol=1e-5, atol=1e-6)
    per_example = jax.vmap(jax.jacrev(lambda row: _f(W, row[None])[0]))(X)
    np.testing.assert_allclose(batch.numpy(), per_example, rtol=1e-5, atol=1e-6)


def test_a_jacobian_through_a_loaded_function_inside_tf_function(loaded):
    @gtf.function
    def jacobian(x):
        with gtf.GradientTape() as tape:
            tape.watch(x)
            y = loaded.f(x)
        return tape.jacobian(y, x)

    np.testing.assert_allclose(jacobian(gtf.constant(X)).numpy(), jax.jacrev(_f, 1)(W, X), rtol=1e-5, atol=1e-6)


def test_a_hessian_through_a_loaded_function(loaded):
    x = gtf.constant(X[:2])
    with gtf.GradientTape() as outer:
        outer.watch(x)
        with gtf.GradientTape() as inner:
            inner.watch(x)
            y = gtf.reduce_sum(loaded.f(x))
        g = inner.gradient(y, x)
    hessian = outer.jacobian(g, x)
    want = jax.hessian(lambda x: jnp.sum(_f(W, x)))(X[:2])
    np.testing.assert_allclose(hessian.numpy(), want, rtol=1e-4, atol=1e-5)


def test_vectorized_map_of_a_loaded_function_and_its_gradient(loaded):
    x = gtf.constant(X)
    with gtf.GradientTape() as tape:
        tape.watch(x)
        rows = gtf.vectorized_map(lambda row: loaded.f(row[None])[0], x)
        total = gtf.reduce_sum(rows * np.array([[1.0, -2.0]], np.float32))
    np.testing.assert_allclose(rows.numpy(), _f(W, X), rtol=1e-6)
    want = jax.grad(lambda x: jnp.sum(_f(W, x) * jnp.array([[1.0, -2.0]])))(X)
    np.testing.assert_allclose(tape.gradient(total, x).numpy(), want, rtol=1e-5, atol=1e-6)
