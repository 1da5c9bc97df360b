"""Compiled programs are cached by graph structure; equal computations that are different
node objects must never share a program where that changes a gradient.

A gradient with respect to an intermediate value depends on which uses are that very
value: ``d(t * t)/dt = 2t`` but ``d(t * u)/dt = u`` even when ``u`` is computed exactly as
``t`` was. Expected values are hand derivations. Each case runs in both orders and twice,
so every program is looked up in a cache that already holds its look-alike.
"""

from __future__ import annotations

import jax.numpy as jnp
import pytest

import gradkit as gk

X0 = 3.0


def _intermediate_source(shared: bool) -> float:
    x = gk.Variable(jnp.float32(X0))
    with gk.GradientTape() as tape:
        p = x * 2.0
        t = p + 1.0
        u = p + 1.0  # computed as t was, but a different value for the tape
        y = (t if shared else u) * t
    return float(tape.gradient(y, t))


def _watched_source(shared: bool) -> float:
    x = gk.Variable(jnp.float32(X0))
    with gk.GradientTape() as tape:
        p = x * 2.0
        t, u = p + 1.0, p + 1.0
        tape.watch(t)
        tape.watch(u)
        y = (t if shared else u) * t
    return float(tape.gradient(y, t))


def _recorded_gradient_through_assigned_variables(shared: bool) -> float:
    """Two Variables assigned the same value; an inner gradient with respect to one of them."""
    x = gk.Variable(jnp.float32(X0))
    a, b = gk.Variable(jnp.float32(0.0)), gk.Variable(jnp.float32(0.0))
    with gk.GradientTape() as outer:
        z = x * 3.0
        a.assign(z)
        b.assign(z)
        with gk.GradientTape() as inner:
            y = (a if shared else b) * a
        g = inner.gradient(y, a)  # shared: 2a = 6x; otherwise b = 3x
    return float(outer.gradient(g, x))


# t = 2x + 1 = 7: d(t*t)/dt = 2t = 14 and d(t*u)/dt = u = 7; d(6x)/dx = 6 and d(3x)/dx = 3.
CASES = [
    (_intermediate_source, 14.0, 7.0),
    (_watched_source, 14.0, 7.0),
    (_recorded_gradient_through_assigned_variables, 6.0, 3.0),
]


@pytest.mark.parametrize("program, shared, separate", CASES, ids=lambda c: getattr(c, "__name__", ""))
@pytest.mark.parametrize("order", [(True, False), (False, True)])
def test_equal_computations_that_are_different_values_get_different_gradients(program, shared, separate, order):
    expected = {True: shared, False: separate}
    for _ in range(2):
        for is_shared in order:
            assert program(is_shared) == pytest.approx(expected[is_shared])


def test_meta_gradient_loop_reuses_located_inputs_and_matches_jax():
    """Repeated unrolled inner steps (the W6 shape) take the located-inputs path after the
    first call; every call must still equal the pure-JAX meta-gradient."""
    import jax

    xs = jnp.linspace(-1.0, 1.0, 12, dtype=jnp.float32).reshape(4, 3)
    ys = jnp.sin(xs.sum(axis=1))
    w0 = jnp.asarray([0.3, -0.2, 0.5], jnp.float32)

    def loss(xp, w):
        return xp.mean((xp.tanh(xs @ w) - ys) ** 2)

    def meta_jax(lr):
        w = w0
        for _ in range(3):
            w = w - lr * jax.grad(lambda v: loss(jnp, v))(w)
        return loss(jnp, w)

    w, lr = gk.Variable(w0), gk.Variable(jnp.float32(0.2))
    for step in range(3):
        lr.assign(jnp.float32(0.2 + 0.1 * step))
        w.assign(w0)
        with gk.GradientTape() as outer:
            for _ in range(3):
                with gk.GradientTape() as inner:
                    ell = loss(gk.numpy, w)
                w.assign_sub(lr * inner.gradient(ell, w))
            meta = loss(gk.numpy, w)
        expected = jax.grad(meta_jax)(jnp.float32(0.2 + 0.1 * step))
        assert float(outer.gradient(meta, lr)) == pytest.approx(float(expected), rel=1e-5)
