"""A gradkit.tf program made pure with gk.functionalize: reverse mode works with raw JAX; forward
mode through an op that carries TensorFlow's gradient as a reverse-mode rule gets a [gradkit] error
naming the op and the transforms that work (not a complaint about the inputs' shapes)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gradkit as gk
import gradkit.tf as tf


def _program():
    x = tf.Variable(np.array([0.3, 0.7, 1.2], np.float32))
    v = tf.Variable(np.zeros(3, np.float32))

    def prog():
        v.assign(tf.sqrt(x))
        return tf.reduce_sum(tf.sin(v) * x)

    pure = gk.functionalize(prog)
    state = gk.State.of([x, v])
    return prog, x, (lambda xx: pure(state.assign(x, xx))[0])


def _oracle(xx):
    return jnp.sum(jnp.sin(jnp.sqrt(xx)) * xx)


X0 = jnp.array([0.3, 0.7, 1.2])


def test_reverse_mode_and_gradkit_forward_mode_are_exact():
    prog, x, pure = _program()
    np.testing.assert_allclose(np.asarray(jax.grad(pure)(X0)), np.asarray(jax.grad(_oracle)(X0)), rtol=1e-5)
    np.testing.assert_allclose(
        np.asarray(gk.hessian(prog, wrt=x)()), np.asarray(jax.hessian(_oracle)(X0)), rtol=1e-4, atol=1e-5
    )


def test_raw_forward_mode_names_the_op_and_what_works():
    _, _, pure = _program()
    with pytest.raises(TypeError, match=r"^\[gradkit\] tf.sqrt has TensorFlow's gradient as a reverse-mode rule"):
        jax.jvp(pure, (X0,), (jnp.ones(3),))
