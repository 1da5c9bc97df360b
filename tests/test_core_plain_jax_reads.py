"""A Variable read by a plain ``jax.jit`` (or a lax loop's body) with no gradkit transform around
the read becomes a constant of the compiled program, which jax reuses: gradkit warns. ``gk.jit``
reads the Variables at each call; ``jax.vmap``/``jax.grad`` alone trace afresh and do not warn.
Oracles: hand derivations (d(w^2)/dw = 2w) and the values assigned."""

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gradkit as gk


def test_a_plain_jax_jit_read_warns_and_gk_jit_reads_each_call():
    w = gk.Variable(2.0, name="w")
    with pytest.warns(gk.GradkitWarning, match="Variable 'w' was read inside jax.jit"):
        baked = jax.jit(lambda x: w * x)
        assert float(baked(1.0)) == 2.0
    fresh = gk.jit(lambda x: w * x)
    assert float(fresh(1.0)) == 2.0
    w.assign(5.0)
    assert float(fresh(1.0)) == 5.0  # read at each call
    assert float(baked(1.0)) == 2.0  # jax's cached program: the constant it was traced with


def test_jit_of_a_gradient_with_respect_to_a_variable():
    w = gk.Variable(2.0, name="w")
    with pytest.warns(gk.GradkitWarning, match="gradient with respect to it"):
        jax.jit(gk.grad(lambda: w**2, wrt=w))()
    compiled = gk.jit(gk.grad(lambda: w**2, wrt=w))
    assert float(compiled()) == 4.0
    w.assign(7.0)
    assert float(compiled()) == 14.0


def test_a_lax_loop_body_reading_a_variable_warns():
    w = gk.Variable(3.0, name="w")
    with pytest.warns(gk.GradkitWarning, match="lax loop"):
        out = jax.lax.fori_loop(0, 2, lambda i, c: c + w, 0.0)
    assert float(out) == 6.0


def test_a_tape_inside_a_plain_jax_jit_warns_that_its_reads_are_constants():
    # The tape's first read of w is a constant of jax's cached program, as a read without a
    # tape: later calls see neither the assignment nor a new value of w (gk.jit does).
    w = gk.Variable(jnp.array([1.0, 2.0]), name="w")

    def step():
        with gk.GradientTape() as tape:
            w.assign(w * 2.0)
            loss = gk.numpy.sum(w * w)
        return tape.gradient(loss, w)

    with pytest.warns(gk.GradkitWarning, match="Variable 'w' was read inside jax.jit") as caught:
        jax.jit(step)()
    assert caught[0].filename == __file__  # the user's line
    w.assign(jnp.array([1.0, 2.0]))
    compiled = gk.jit(step)
    for before in (1.0, 2.0, 4.0):  # w = before * w0 when the tape first sees it: d sum((2w)^2)/dw = 8w
        np.testing.assert_allclose(compiled(), 8 * before * np.array([1.0, 2.0]))
    np.testing.assert_allclose(w.value, [8.0, 16.0])


def test_vmap_and_grad_alone_do_not_warn():
    w = gk.Variable(jnp.array([1.0, -2.0]), name="w")
    batch = jnp.array([1.0, 2.0, 3.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error", gk.GradkitWarning)
        per_example = jax.vmap(gk.grad(lambda s: jnp.sum((w * s) ** 2), wrt=w))(batch)
        np.testing.assert_allclose(per_example, 2 * np.outer(batch**2, [1.0, -2.0]), rtol=1e-6)
        assert float(jax.grad(lambda x: jnp.sum(w * x))(1.0)) == -1.0
        # A State passed to jax.jit(gk.functionalize(f)) is an argument: read each call, no warning.
        pure = jax.jit(gk.functionalize(lambda: jnp.sum(w * w)))
        assert float(pure(gk.State.of([w]))[0]) == 5.0
        assert float(pure(gk.State({w: jnp.array([3.0, 0.0])}))[0]) == 9.0
