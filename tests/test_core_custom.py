"""custom_gradient (TensorFlow's decorator, seed 001) and stop_gradient."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _oracles import WITH_AND_WITHOUT_JIT, assert_close, maybe_jit

import gradkit as gk


def clip_by_norm(t, clip_norm):
    """tf.clip_by_norm, in jnp."""
    norm = jnp.sqrt(jnp.sum(t**2))
    return jnp.where(norm > clip_norm, t * clip_norm / norm, t)


@gk.custom_gradient
def clip_gradients(y):
    def backward(dy):
        return clip_by_norm(dy, 0.5)

    return y, backward


@WITH_AND_WITHOUT_JIT
def test_seed001_clip_gradients(jit):
    v = gk.Variable(2.0, name="v")
    # Seed 001: the upstream gradient 1 is clipped to norm 0.5, times d(v*v)/dv = 4 -> 2.0.
    assert float(maybe_jit(gk.grad(lambda: clip_gradients(v * v), wrt=v), jit)()) == 2.0
    # The forward value is untouched.
    assert float(clip_gradients(v * v)) == 4.0


def test_clip_gradients_vector_against_jax_custom_vjp():
    @jax.custom_vjp
    def oracle(y):
        return y

    oracle.defvjp(lambda y: (y, None), lambda _, dy: (clip_by_norm(dy, 0.5),))
    w = gk.Variable(np.array([1.0, -2.0, 0.5], np.float32), name="w")
    got = gk.grad(lambda: jnp.sum(clip_gradients(w * w) * jnp.arange(1.0, 4.0)), wrt=w)()
    want = jax.grad(lambda wv: jnp.sum(oracle(wv * wv) * jnp.arange(1.0, 4.0)))(w.numpy())
    assert_close(got, want)


def test_custom_gradient_with_variables_form():
    w = gk.Variable(np.array([1.0, 2.0, 3.0], np.float32), name="w")

    @gk.custom_gradient
    def scaled_dot(x):
        def grad_fn(dy, variables=None):
            # A deliberately non-true gradient, so only the custom rule can produce it.
            assert variables == [w]
            return dy * w.value, [dy * x * 10.0]

        return jnp.sum(w * x), grad_fn

    x = jnp.array([0.5, -1.0, 2.0])
    d_x, (d_w,) = gk.grad(scaled_dot, argnums=0, wrt=[w])(x)
    assert_close(d_x, w.numpy())
    assert_close(d_w, np.asarray(x) * 10.0)
    assert float(scaled_dot(x)) == pytest.approx(float(np.dot(w.numpy(), x)))


def test_custom_gradient_reading_variables_needs_variables_argument():
    w = gk.Variable(2.0, name="w")

    @gk.custom_gradient
    def f(x):
        return x * w, lambda dy: dy

    with pytest.raises(TypeError, match=r"^\[gradkit\] the function decorated with custom_gradient reads Variables"):
        gk.grad(f, argnums=0, wrt=[w])(1.0)


def test_custom_gradient_inside_an_assignment_chain():
    """The custom rule composes with the state threading around it."""
    c = gk.Variable(3.0, name="c")

    def loss():
        c.assign(clip_gradients(c * 2.0))
        return c**2

    # loss = (2c)^2 with the upstream 2(2c) = 12 clipped to 0.5, then times d(2c)/dc = 2.
    assert float(gk.grad(loss, wrt=c)()) == 1.0


@WITH_AND_WITHOUT_JIT
def test_stop_gradient(jit):
    a, b = gk.Variable(1.5, name="a"), gk.Variable(-0.5, name="b")

    def loss():
        b.assign(gk.stop_gradient(a) * b)
        return a * b + gk.stop_gradient(b) * a

    def pure(av, bv):
        bv = jax.lax.stop_gradient(av) * bv
        return av * bv + jax.lax.stop_gradient(bv) * av

    got = maybe_jit(gk.grad(loss, wrt=[a, b]), jit)()
    assert_close(got, list(jax.grad(pure, argnums=(0, 1))(1.5, -0.5)))
