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


def test_functional_forward_mode_through_a_custom_gradient_transposes_its_vjp():
    """gk.jvp, gk.jacfwd and gk.hessian of a function holding a custom_gradient (no forward
    rule in jax) push tangents through grad_fn's rule, as TensorFlow's forward mode does.
    Oracle: the hand derivation d f = grad_fn's factor (3 cos x) times the tangent, and for
    the Hessian of sum(f(x) * x): d/dx (3 cos x * x + 2 sin x) by reverse mode of that."""
    import gradkit as gk

    f = _program(gtf)
    x = gk.Variable(A0)
    tangent = jnp.asarray([1.0, -2.0, 0.5], jnp.float32)
    _, pushed = gk.jvp(lambda: f(x.read_value()), (), (), wrt=x, wrt_tangents=tangent)
    assert_close(np.asarray(pushed), 3.0 * np.cos(A0) * np.asarray(tangent))
    assert_close(np.asarray(gk.jacfwd(lambda: f(x.read_value()), wrt=x)()), np.diag(3.0 * np.cos(A0)))
    expected = jax.jacrev(lambda a: 3.0 * jnp.cos(a) * a + 2.0 * jnp.sin(a))(jnp.asarray(A0))
    got = gk.hessian(lambda: jnp.sum(f(x.read_value()) * x.read_value()), wrt=x)()
    assert_close(np.asarray(got), np.asarray(expected))


def test_functional_jvp_through_a_custom_gradient_inside_a_trace():
    """Inside jax.jit, gk.jit and an outer gk.grad, jax would refuse forward mode through the
    custom_vjp only when compiling: gk.jvp must still take the transposed VJP. Oracle: grad_fn's
    factor 3 cos(w x) times the tangent (w x)' = x dw + w dx; the outer gradient by jax.grad of
    that hand-written JVP."""
    import gradkit as gk

    f = _program(gtf)
    w = gk.Variable(A0)
    x = jnp.float32(1.3)
    dw = jnp.asarray([1.0, -2.0, 0.5], jnp.float32)

    def pushed(x):
        return gk.jvp(lambda x: f(w * x), (x,), (jnp.float32(1.0),), wrt=w, wrt_tangents=dw)[1]

    def hand(x):
        return 3.0 * jnp.cos(A0 * x) * (x * dw + A0)

    for run in (pushed, gk.jit(pushed)):
        assert_close(np.asarray(run(x)), np.asarray(hand(x)))
    with pytest.warns(gk.GradkitWarning, match="constant"):  # w read by a plain jax.jit: a constant there
        assert_close(np.asarray(jax.jit(pushed)(x)), np.asarray(hand(x)))
    grad_of_jvp = gk.grad(lambda x: jnp.sum(pushed(x)))(x)
    assert_close(float(grad_of_jvp), float(jax.grad(lambda x: jnp.sum(hand(x)))(x)))


def test_functional_forward_mode_through_tf_sqrt_matches_jax():
    """gradkit.tf's sqrt, rsqrt and reciprocal carry TensorFlow's gradient kernel (a custom VJP);
    gk.jvp and gk.jacfwd through them still give the derivative. Oracle: jax.jvp of jnp's."""
    import gradkit as gk

    v = gk.Variable(np.array([4.0, 0.25, 9.0], np.float32))
    tangent = jnp.asarray([1.0, -1.0, 2.0], jnp.float32)
    for tf_fn, jnp_fn in (
        (gtf.sqrt, jnp.sqrt),
        (gtf.math.rsqrt, jax.lax.rsqrt),
        (gtf.math.reciprocal, lambda a: 1 / a),
    ):
        _, pushed = gk.jvp(lambda fn=tf_fn: fn(v.read_value()), (), (), wrt=v, wrt_tangents=tangent)
        _, expected = jax.jvp(jnp_fn, (jnp.asarray(v.numpy()),), (tangent,))
        assert_close(np.asarray(pushed), np.asarray(expected))
        jac = gk.jacfwd(lambda fn=tf_fn: fn(v.read_value()), wrt=v)()
        assert_close(np.asarray(jac), np.asarray(jax.jacfwd(jnp_fn)(jnp.asarray(v.numpy()))))
