"""An outer tape's derivative with respect to a tensor computed inside an inner tape's
recorded derivative (``y`` in ``y = x * x; z = sin(y); g = inner.gradient(z, x)``), and
values an outer tape did not record inside that part (its ``stop_recording``).

TensorFlow's gradient graph reads the forward values, so ``outer.gradient(g, y)`` is the
derivative with respect to a perturbation of ``y`` inside the inner computation. The JAX
oracle writes that perturbation out: ``jax.grad(lambda e: jax.grad(lambda x: z(x, x * x + e))(x))``.
The same programs run in real TensorFlow where it is installed.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradkit as gk
import gradkit.tf as gtf

gnp = gk.numpy
X = np.array([0.7, 1.3], np.float32)


def tensor(a):
    return gk.Tensor(jnp.asarray(a))


def close(got, want, rtol=1e-4):
    got, want = np.asarray(got), np.asarray(want)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * max(1.0, float(np.abs(want).max())))


# -- against JAX ------------------------------------------------------------------------


def z_of(x, y):
    return jnp.sum(jnp.sin(y) * y * x)


def inner_grad(x, e):
    """The inner gradient with ``y`` perturbed by ``e`` inside it."""
    return jax.grad(lambda x: z_of(x, x * x + e))(x)


def nested_program(x, then=lambda g, y: None):
    """``y = x * x; z = sum(sin(y) * y * x)`` on two tapes, ``g = inner.gradient(z, x)``, and
    ``then(g, y)`` recorded by the outer tape (persistent)."""
    with gk.GradientTape(persistent=True) as outer:
        outer.watch(x)
        with gk.GradientTape() as inner:
            inner.watch(x)
            y = x * x
            z = gnp.sum(gnp.sin(y) * y * x)
        g = inner.gradient(z, x)
        extra = then(g, y)
    return outer, y, g, extra


def test_outer_gradient_with_respect_to_an_intermediate_of_the_inner_part():
    x = tensor(X)
    outer, y, g, both = nested_program(x, lambda g, y: g + 3.0 * y)  # y also reaches the target directly
    zero = jnp.zeros(2)
    d_e = jax.jacrev(lambda e: jnp.sum(inner_grad(X, e)))(zero)
    close(outer.gradient(g, y), d_e)
    close(outer.gradient(both, y), d_e + 3.0)
    d_y, d_x = outer.gradient(both, [y, x])
    close(d_y, d_e + 3.0)
    # The gradient with respect to x is the total derivative, as without y among the sources.
    close(d_x, jax.grad(lambda x: jnp.sum(inner_grad(x, 0.0) + 3.0 * x * x))(X))
    close(outer.gradient(both, x), d_x)


def test_inside_gk_jit_and_in_a_loop_compiles_once():
    traces = []

    @gk.jit
    def step(x):
        traces.append(1)
        outer, y, _, loss = nested_program(tensor(x), lambda g, y: gnp.sum(g * g))
        return outer.gradient(loss, y)

    def oracle(x):
        return jax.grad(lambda e: jnp.sum(inner_grad(x, e) ** 2))(jnp.zeros_like(x))

    for k in range(3):
        xk = X + 0.1 * k
        close(step(jnp.asarray(xk)), oracle(xk))
    assert len(traces) == 1


def test_two_intermediates_and_third_order():
    x = tensor(np.float32(0.8))
    with gk.GradientTape() as t3:
        t3.watch(x)
        with gk.GradientTape() as t2:
            t2.watch(x)
            with gk.GradientTape() as t1:
                t1.watch(x)
                y = x * x * x
                u = gnp.sin(y)
                z = u * gnp.exp(-y)
            g1 = t1.gradient(z, x)
        g2 = t2.gradient(g1, x)
    d_y, d_u = t3.gradient(g2, [y, u])

    def g2_of(e_y, e_u):
        def g1(x):
            def z(x):
                y = x**3 + e_y
                return (jnp.sin(y) + e_u) * jnp.exp(-y)

            return jax.grad(z)(x)

        return jax.grad(g1)(jnp.float32(0.8))

    close(d_y, jax.grad(g2_of, 0)(0.0, 0.0))
    close(d_u, jax.grad(g2_of, 1)(0.0, 0.0))


def test_jacobian_and_forward_accumulator_inner_parts():
    x = tensor(X)
    t = tensor(np.array([1.0, 0.5], np.float32))
    with gk.GradientTape(persistent=True) as outer:
        outer.watch(x)
        with gk.GradientTape() as inner:
            inner.watch(x)
            y = x * x
            z = gnp.sin(y) * x
        jac = inner.jacobian(z, x)
        with gk.ForwardAccumulator(x, t) as acc:
            y2 = x * x
            z2 = gnp.sin(y2)
        jvp = acc.jvp(z2)
    close(
        outer.gradient(jac, y),
        jax.grad(lambda e: jnp.sum(jax.jacrev(lambda x: jnp.sin(x * x + e) * x)(X)))(jnp.zeros(2)),
    )
    close(
        outer.gradient(jvp, y2),
        jax.grad(lambda e: jnp.sum(jax.jvp(lambda x: jnp.sin(x * x + e), (X,), (np.asarray(t),))[1]))(jnp.zeros(2)),
    )


def test_a_value_the_outer_tape_did_not_record_is_a_constant_for_it():
    x = tensor(X)
    with gk.GradientTape() as outer:
        outer.watch(x)
        with gk.GradientTape() as inner:
            inner.watch(x)
            with outer.stop_recording():
                y = x * x
            z = gnp.sum(gnp.sin(y) * y * x)
        g = inner.gradient(z, x)
    d_x, d_y = outer.gradient(g, [x, y])
    assert d_y is None  # the outer tape never saw y

    def g_with_constant_y(x, y0):
        # y's chain inside the inner gradient stays; its value is y0 for the outer derivative.
        return jax.grad(lambda xp: z_of(xp, xp * xp - x * x + y0))(x)

    close(d_x, jax.grad(lambda x: jnp.sum(g_with_constant_y(x, jax.lax.stop_gradient(x * x))))(X))


def test_the_recorded_graph_is_left_as_it_was():
    x = tensor(X)
    outer, y, g, _ = nested_program(x)
    node = g._node
    outer.gradient(g, y)
    assert g._node is node
    close(outer.gradient(g, x), jax.jacrev(lambda x: jnp.sum(inner_grad(x, 0.0)))(X))
    close(g, inner_grad(X, 0.0))


UNARY = {
    "sin": (jnp.sin, gnp.sin),
    "tanh": (jnp.tanh, gnp.tanh),
    "exp_neg": (lambda a: jnp.exp(-a), lambda a: gnp.exp(-a)),
}
BINARY = {"mul": lambda a, b: a * b, "add": lambda a, b: a + b, "sub_half": lambda a, b: a - 0.5 * b}


def run_chain(chain, x, use_gk, perturb_at=None, e=None):
    """Values of a chain of ops on x; each step reads the previous value and x."""
    values = [x]
    for k, (kind, name) in enumerate(chain):
        prev = values[-1]
        if kind == "u":
            v = UNARY[name][1 if use_gk else 0](prev)
        else:
            v = BINARY[name](prev, x)
        if k == perturb_at:
            v = v + e
        values.append(v)
    return values


@settings(max_examples=12, deadline=None, derandomize=True, database=None)
@given(
    chain=st.lists(
        st.one_of(
            st.tuples(st.just("u"), st.sampled_from(sorted(UNARY))),
            st.tuples(st.just("b"), st.sampled_from(sorted(BINARY))),
        ),
        min_size=2,
        max_size=6,
    ),
    data=st.data(),
)
def test_random_chains_against_the_perturbation_oracle(chain, data):
    """For a random chain of ops inside the inner tape, the outer derivative of the inner
    gradient with respect to a random intermediate, alone and with x."""
    at = data.draw(st.integers(0, len(chain) - 1))
    x = tensor(X)
    with gk.GradientTape(persistent=True) as outer:
        outer.watch(x)
        with gk.GradientTape() as inner:
            inner.watch(x)
            values = run_chain(chain, x, True)
            z = gnp.sum(values[-1])
        g = inner.gradient(z, x)
        target = gnp.sum(g * g) + gnp.sum(values[at + 1])  # the intermediate used directly too
    d_y, d_x = outer.gradient(target, [values[at + 1], x])

    def target_of(x, e):
        gx = jax.grad(lambda x: jnp.sum(run_chain(chain, x, False, at, e)[-1]))(x)
        return jnp.sum(gx * gx) + jnp.sum(run_chain(chain, x, False, at, e)[at + 1])

    close(d_y, jax.grad(target_of, 1)(X, jnp.zeros(2)), rtol=2e-4)
    close(d_x, jax.grad(lambda x: target_of(x, 0.0))(X), rtol=2e-4)


# -- against TensorFlow -----------------------------------------------------------------


def program_variable(tf):
    x = tf.Variable(X)
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            y = tf.exp(x) * x
            z = tf.reduce_sum(tf.tanh(y) * y)
        g = inner.gradient(z, x)
        loss = tf.reduce_sum(g * g) + tf.reduce_sum(y)
    return outer.gradient(loss, [y, x])


def square_then(x, f):
    y = x * x
    return y, f(y)


def two_tapes(tf, x, body, derive, sources):
    """``body(tf, x, outer)`` on two tapes watching ``x`` (its values), the inner tape's
    ``derive(inner, values, x)`` recorded by the outer one, and the outer gradient of that
    with respect to ``sources(values, x)``."""
    x = tf.constant(x)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            values = body(tf, x, outer)
        target = derive(inner, values, x)
    return outer.gradient(target, sources(values, x))


def program_batch_jacobian(tf):
    return two_tapes(
        tf,
        np.array([[0.7, 1.3], [-0.4, 0.2]], np.float32),
        lambda tf, x, outer: square_then(x, lambda y: tf.sin(y) * x),
        lambda inner, v, x: inner.batch_jacobian(v[1], x),
        lambda v, x: [v[0], x],
    )


def program_intermediate_and_its_source(tf):
    def body(tf, x, outer):
        y = x * x
        w = tf.cos(y) * x
        return y, w, tf.reduce_sum(w * w)

    def derive(inner, v, x):
        g = inner.gradient(v[2], [x, v[0]])
        return g[0] * 2.0 + g[1]

    return two_tapes(tf, X, body, derive, lambda v, x: [v[0], v[1], x])


def program_output_gradients(tf):
    return two_tapes(
        tf,
        X,
        lambda tf, x, outer: square_then(x, tf.sin),
        lambda inner, v, x: inner.gradient(v[1], x, output_gradients=3.0 * v[0]),
        lambda v, x: [v[0], x],
    )


def program_stop_recording(tf):
    def body(tf, x, outer):
        with outer.stop_recording():
            y = x * x
        return y, tf.sin(y) * x

    return two_tapes(tf, X, body, lambda inner, v, x: inner.gradient(v[1], x), lambda v, x: [v[0], x])


def program_third_order(tf):
    x = tf.constant(0.8)
    with tf.GradientTape() as t3:
        t3.watch(x)
        with tf.GradientTape() as t2:
            t2.watch(x)
            with tf.GradientTape() as t1:
                t1.watch(x)
                y = x * x * x
                z = tf.sin(y)
            g1 = t1.gradient(z, x)
            h = g1 * y
        g2 = t2.gradient(h, x)
    return t3.gradient(g2, [h, y, g1, x])


PROGRAMS = [
    program_variable,
    program_batch_jacobian,
    program_intermediate_and_its_source,
    program_output_gradients,
    program_stop_recording,
    program_third_order,
]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_the_same_programs_in_tensorflow(program):
    tf = pytest.importorskip("tensorflow")
    want = program(tf)
    got = program(gtf)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert (g is None) == (w is None)
        if w is not None:
            close(g.numpy(), w.numpy(), rtol=3e-4)
