"""Forward-mode derivatives through a custom_gradient (a jax.custom_vjp, which has no forward rule):
tape.jacobian and batch_jacobian (forward mode where it is cheaper), the Jacobian of a recorded
gradient, and ForwardAccumulator, which take the transpose of the custom VJP instead.

Oracles: real TensorFlow for the Jacobians (skipped without it); jax.jacrev of the pure-JAX
rewrite with jax.custom_vjp for second order; a hand derivation for forward mode.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _oracles import assert_close

import gradkit.tf as gtf

A0 = np.array([0.3, -0.5, 1.1], np.float32)


def _program(tf):
    @tf.custom_gradient
    def f(x):
        def grad(dy):
            return dy * tf.cos(x) * 3.0  # deliberately not the true derivative, 2 cos x

        return tf.sin(x) * 2.0, grad

    return f


def test_jacobian_and_batch_jacobian_through_a_custom_gradient_match_tensorflow():
    tf_real = pytest.importorskip("tensorflow")
    results = []
    for tf in (tf_real, gtf):
        f = _program(tf)
        a = tf.Variable(A0)
        with tf.GradientTape(persistent=True) as tape:
            z = f(a) * a  # target size equals source size: forward mode would be chosen
            ab = tf.reshape(a, [3, 1])
            tape.watch(ab)
            zb = f(ab) * ab
        results.append([np.asarray(tape.jacobian(z, a)), np.asarray(tape.batch_jacobian(zb, ab))])
    assert_close(results[1][0], results[0][0])
    assert_close(results[1][1], results[0][1])


@jax.custom_vjp
def _f(x):
    return jnp.sin(x) * 2.0


_f.defvjp(lambda x: (jnp.sin(x) * 2.0, x), lambda x, dy: (dy * jnp.cos(x) * 3.0,))


def test_the_jacobian_of_a_gradient_through_a_custom_gradient_is_jaxs_second_derivative():
    f = _program(gtf)
    a = gtf.Variable(A0)
    with gtf.GradientTape() as outer:
        with gtf.GradientTape() as inner:
            s = gtf.reduce_sum(f(a) * a)
        g = inner.gradient(s, a)
    want = jax.jacrev(jax.grad(lambda x: jnp.sum(_f(x) * x)))(jnp.asarray(A0))
    assert_close(np.asarray(outer.jacobian(g, a)), want, rtol=1e-5)


def test_forward_accumulator_through_a_custom_gradient_transposes_its_gradient():
    f = _program(gtf)
    x = gtf.constant(A0)
    t = gtf.constant(np.array([1.0, 2.0, -1.0], np.float32))
    with gtf.autodiff.ForwardAccumulator(x, t) as acc:
        y = f(x)
    # The custom VJP is dy -> 3 cos(x) dy (diagonal), so its transpose sends t to 3 cos(x) t.
    assert_close(np.asarray(acc.jvp(y)), 3.0 * np.cos(A0) * np.asarray(t), rtol=1e-5)
