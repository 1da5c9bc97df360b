"""A tensor two nested tapes watch, the inner tape's watch first: the outer tape differentiates
the inner gradient, Jacobian or batch Jacobian of it, whichever tape watched first. The oracle: a
hand derivation (d/dx 3x^2 = 6x), jax.hessian, and real TensorFlow where it is installed."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gradkit as gk
import gradkit.tf as gtf

TFS = [pytest.param("gk", id="gradkit"), pytest.param("tf", id="tensorflow")]
ORDERS = ["inner first", "outer first"]
X = np.array([0.5, -1.5], np.float32)


def _tf(which):
    return gtf if which == "gk" else pytest.importorskip("tensorflow")


def _watch(order, inner, outer, x):
    for tape in (inner, outer) if order == "inner first" else (outer, inner):
        tape.watch(x)


def _second_derivative(tf, order):
    x = tf.constant(X)
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            _watch(order, inner, outer, x)
            y = tf.reduce_sum(x**3)
        g = inner.gradient(y, x)
    return g, outer.gradient(g, x)


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("which", TFS)
def test_the_outer_tape_differentiates_the_inner_gradient(which, order):
    g, gg = _second_derivative(_tf(which), order)
    np.testing.assert_allclose(g.numpy(), 3 * X**2, rtol=1e-6)
    np.testing.assert_allclose(gg.numpy(), 6 * X, rtol=1e-6)


@pytest.mark.parametrize("which", TFS)
def test_inside_a_function(which):
    tf = _tf(which)
    gg = tf.function(lambda: _second_derivative(tf, "inner first")[1])()
    np.testing.assert_allclose(gg.numpy(), 6 * X, rtol=1e-6)


def _f(x):
    return jnp.sum(jnp.sin(x) * x) + jnp.sum(x[:1] * x[1:]) ** 2


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("which", TFS)
def test_a_hessian_from_the_jacobian_of_the_inner_gradient(which, order):
    tf = _tf(which)
    x = tf.constant(X)
    with tf.GradientTape(persistent=True) as outer:
        with tf.GradientTape() as inner:
            _watch(order, inner, outer, x)
            y = tf.reduce_sum(tf.sin(x) * x) + tf.reduce_sum(x[:1] * x[1:]) ** 2
        g = inner.gradient(y, x)
        norm = tf.reduce_sum(g * g)
    hessian = jax.hessian(_f)(jnp.asarray(X))
    np.testing.assert_allclose(outer.jacobian(g, x).numpy(), hessian, rtol=1e-5, atol=1e-6)
    gradient = jax.grad(_f)(jnp.asarray(X))
    np.testing.assert_allclose(outer.gradient(norm, x).numpy(), 2 * hessian @ gradient, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("which", TFS)
def test_the_outer_tape_differentiates_an_inner_batch_jacobian(which):
    tf = _tf(which)
    x = tf.constant(X.reshape(2, 1))
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            _watch("inner first", inner, outer, x)
            y = x**3
        j = inner.batch_jacobian(y, x)  # 3x^2 per example, shape (2, 1, 1)
    np.testing.assert_allclose(outer.gradient(j, x).numpy(), 6 * X.reshape(2, 1), rtol=1e-6)


def test_native_tapes_in_either_order_agree_with_jax():
    def second(x):
        return jax.grad(lambda x: jnp.sum(jax.grad(lambda x: jnp.sum(x**3))(x)))(x)

    for order in ORDERS:
        x = gk.Tensor(jnp.asarray(X))
        with gk.GradientTape() as outer:
            with gk.GradientTape() as inner:
                _watch(order, inner, outer, x)
                y = (x**3).sum()
            total = inner.gradient(y, x).sum()
        np.testing.assert_allclose(outer.gradient(total, x).numpy(), second(jnp.asarray(X)), rtol=1e-6)
