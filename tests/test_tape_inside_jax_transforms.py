"""A GradientTape used inside a plain jax transform (``jax.jit``, ``jax.grad``), which no gradkit
transform wraps: assigning a Variable a value traced there is refused when the tape ends, before
any Variable changes, as a plain assignment there is (the tracer would outlive the trace); a tape
that only reads Variables works there (jax.jit keeps the values it read as constants, and gradkit
warns, as for a read without a tape). A tape recording outside such a transform refuses the same
assignment made inside it at once, and the Variable stays readable. ``gk.jit`` runs the same step and keeps the assignments."""

import contextlib
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gradkit as gk

gnp = gk.numpy


@contextlib.contextmanager
def _no_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


def _step(v, u):
    def step(x):
        with gk.GradientTape() as tape:
            u.assign(u + 1.0)  # a constant: assigned before the traced one below
            v.assign(v * x)
            y = gnp.sum(v**2) + u
        return tape.gradient(y, v)

    return step


@pytest.mark.parametrize("transform", ["jit", "grad"])
def test_a_traced_assignment_is_refused_and_no_variable_changes(transform):
    v, u = gk.Variable(jnp.array([1.0, 2.0]), name="v"), gk.Variable(0.0, name="u")
    step = _step(v, u)
    run = jax.jit(step) if transform == "jit" else jax.grad(lambda x: jnp.sum(step(x)))
    # Inside jax.jit the tape's reads of u and v are constants of jax's program: a warning, as
    # without a tape (jax.grad traces afresh at each call: no warning).
    reads = pytest.warns(gk.GradkitWarning, match="read inside jax.jit") if transform == "jit" else _no_warning()
    with reads, pytest.raises(gk.AssignmentError, match=r"\[gradkit\] Variable 'v' was assigned a traced value"):
        run(2.0)
    np.testing.assert_array_equal(v.numpy(), [1.0, 2.0])  # readable, and unchanged
    assert float(u.numpy()) == 0.0


def test_gk_jit_runs_the_same_step():
    v, u = gk.Variable(jnp.array([1.0, 2.0]), name="v"), gk.Variable(0.0, name="u")
    grad = gk.jit(_step(v, u))(2.0)
    # y = sum((x v0)^2) + u: dy/dv0 = 2 x^2 v0, v0 the value the tape started from (a hand
    # derivation).
    np.testing.assert_allclose(grad, [8.0, 16.0])
    np.testing.assert_allclose(v.numpy(), [2.0, 4.0])
    assert float(u.numpy()) == 1.0


def test_a_tape_that_only_reads_variables_works_inside_jax_jit():
    v = gk.Variable(jnp.array([1.0, 2.0]), name="v")

    def read_only(x):
        x = gk.Tensor(x)  # a raw traced array, wrapped so that its operators are recorded
        with gk.GradientTape() as tape:
            tape.watch(x)
            y = gnp.sum(v * x**2)
        return tape.gradient(y, x)

    with pytest.warns(gk.GradkitWarning, match="Variable 'v' was read inside jax.jit"):  # v: a constant of the program
        np.testing.assert_allclose(jax.jit(read_only)(jnp.array([3.0, 4.0])), [6.0, 16.0])  # 2 v x


@pytest.mark.parametrize("transform", ["jit", "vmap", "scan"])
def test_a_tape_outside_a_jax_transform_refuses_an_assignment_traced_inside_it(transform):
    b = gk.Variable(2.0, name="b")

    def assign(x):
        b.assign(x * 3.0)
        return x

    runs = {
        "jit": lambda: jax.jit(assign)(1.0),
        "vmap": lambda: jax.vmap(assign)(jnp.ones(2)),
        "scan": lambda: jax.lax.scan(lambda c, x: (c, assign(x)), 0.0, jnp.ones(2)),
    }
    with gk.GradientTape() as tape:
        tape.watch(b)
        with pytest.raises(gk.AssignmentError, match=r"\[gradkit\] Variable 'b' was assigned a traced value"):
            runs[transform]()
        y = b * b
    assert float(tape.gradient(y, b)) == 4.0  # 2 b, b unchanged (a hand derivation)
    assert float(b.numpy()) == 2.0
