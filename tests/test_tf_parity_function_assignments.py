"""A tf.function that assigns a Variable and reads it again, under a TensorFlow-parity tape
(``track_assignments=False``): inside the call, as outside it, the assignment ends the
derivative's path and a later read differentiates with respect to the Variable. Against real
TensorFlow, and against a pure-JAX rewrite (``stop_gradient`` where TensorFlow cuts)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
from test_tf_parity import _tape  # noqa: E402
from test_tf_parity import run_both_ok as _ok  # noqa: E402

import gradkit.tf as gtf  # noqa: E402

X = np.array([-1.38, 0.7, 0.25], np.float32)
V = np.array([-0.13, 0.5, 2.0], np.float32)
W = np.array([0.46, -0.3, 1.1], np.float32)

# Each: (the function's body, given tf, x and v; its pure-JAX rewrite under TensorFlow's
# semantics, where ``read(new)`` is a read of v after an assignment of ``new``).
BODIES = {
    "assign": (
        lambda tf, x, v: (v.assign(x * x), x + v * 0.25)[1],
        lambda x, v, read: x + read(x * x) * 0.25,
    ),
    "assign_add": (
        lambda tf, x, v: (v.assign_add(tf.sin(x)), v * x)[1],
        lambda x, v, read: read(v + jnp.sin(x)) * x,
    ),
    "assign_sub_twice": (
        lambda tf, x, v: (v.assign_sub(x), v.assign(v * v), tf.exp(v) + x)[2],
        lambda x, v, read: jnp.exp(read(read(v - x) ** 2)) + x,
    ),
    "slice_assign": (
        lambda tf, x, v: (v[:2].assign(x[1:] * 3.0), v * v)[1],
        lambda x, v, read: read(v.at[:2].set(x[1:] * 3.0)) ** 2,
    ),
    "read_before_and_after": (
        lambda tf, x, v: v * x + (v.assign(x), v * v)[1],
        lambda x, v, read: v * x + read(x) ** 2,
    ),
}


def _jax_gradients(rewrite):
    def loss(x, v):
        # TensorFlow's read of an assigned Variable: the new value, differentiated as the Variable.
        def read(new):
            return v + jax.lax.stop_gradient(new - v)

        return jnp.sum(rewrite(x, v, read) * W)

    return jax.grad(loss, argnums=(0, 1))(X, V)


def _program(body, wrap):
    def program(tf):
        x, v = tf.constant(X), tf.Variable(V)
        f = (lambda x: body(tf, x, v)) if wrap == "eager" else tf.function(lambda x: body(tf, x, v))
        with _tape(tf) as tape:
            tape.watch(x)
            y = f(x)
            loss = tf.reduce_sum(y * W)
        return [y, tape.gradient(loss, [x, v]), v.read_value()]

    return program


@pytest.mark.parametrize("wrap", ["eager", "function"])
@pytest.mark.parametrize("name", sorted(BODIES))
def test_a_parity_tape_cuts_assignments_inside_tf_function_as_tensorflow(name, wrap):
    body, rewrite = BODIES[name]
    _, (dx, dv), _ = _ok(_program(body, wrap))
    expected_dx, expected_dv = _jax_gradients(rewrite)
    # None where no path reaches x (TensorFlow's None, checked above); jax's gradient is zeros.
    dx = np.zeros_like(expected_dx) if dx is None else dx
    np.testing.assert_allclose(dx, expected_dx, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(dv, expected_dv, rtol=1e-5, atol=1e-6)


def test_a_parity_tape_gets_the_variables_gradient_from_a_second_order_tape_in_tf_function():
    def program(tf):
        x, v = tf.constant(X), tf.Variable(V)

        @tf.function
        def f(x):
            v.assign(x * x)
            return v * v * x

        with _tape(tf) as outer:
            outer.watch(x)
            with _tape(tf) as inner:
                inner.watch(x)
                y = f(x)
            g = inner.gradient(y, [x, v])
            s = tf.reduce_sum(g[0] * W) + tf.reduce_sum(g[1] * g[1])
        return [g, outer.gradient(s, [x, v])]

    _ok(program)


def test_a_tracking_tape_still_differentiates_through_the_assignment_in_tf_function():
    """gradkit's own tapes (the default) keep the path: d(x + (x*x)*0.25)/dx, as the functional
    rewrite in TensorFlow gives."""
    x, v = gtf.constant(X), gtf.Variable(V)

    @gtf.function
    def f(x):
        v.assign(x * x)
        return x + v * 0.25

    with gtf.GradientTape() as tape:
        tape.watch(x)
        loss = gtf.reduce_sum(f(x) * W)
    xr = tf_real.constant(X)
    with tf_real.GradientTape() as tape_real:
        tape_real.watch(xr)
        loss_real = tf_real.reduce_sum((xr + xr * xr * 0.25) * W)
    np.testing.assert_allclose(tape.gradient(loss, x), tape_real.gradient(loss_real, xr), rtol=1e-6)
