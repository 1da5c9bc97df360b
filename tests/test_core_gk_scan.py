"""``gk.scan``: ``jax.lax.scan`` for a step that reads Variables. Oracles: ``jax.lax.scan`` of
the same step written over explicit arrays, its ``jax.grad``, and ``check_grads``."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

import gradkit as gk

XS = jnp.array([[1.0, -0.5], [2.0, 0.25], [0.5, 1.5], [-1.0, 0.75]])
W0 = jnp.array([[0.9, 0.1], [-0.2, 0.8]])


def _pure(w, init, xs, reverse=False):
    def step(carry, x):
        carry = jnp.tanh(carry @ w + x)
        return carry, carry.sum()

    return jax.lax.scan(step, init, xs, reverse=reverse)


def _imperative(w):
    def step(carry, x):
        carry = jnp.tanh(carry @ w.value + x)
        return carry, carry.sum()

    return step


@pytest.mark.parametrize("reverse", [False, True])
def test_values_are_jax_lax_scan(reverse):
    w = gk.Variable(W0)
    final, ys = gk.scan(_imperative(w), jnp.zeros(2), XS, reverse=reverse)
    expected_final, expected_ys = _pure(W0, jnp.zeros(2), XS, reverse)
    np.testing.assert_allclose(final, expected_final, rtol=1e-6)
    np.testing.assert_allclose(ys, expected_ys, rtol=1e-6)


def test_gradients_with_respect_to_a_variable_read_in_the_step():
    w = gk.Variable(W0)

    def loss():
        final, ys = gk.scan(_imperative(w), jnp.zeros(2), XS)
        return (final**2).sum() + ys.sum()

    def pure_loss(w_value):
        final, ys = _pure(w_value, jnp.zeros(2), XS)
        return (final**2).sum() + ys.sum()

    np.testing.assert_allclose(gk.grad(loss, wrt=w)(), jax.grad(pure_loss)(W0), rtol=1e-5)
    with gk.GradientTape() as tape:
        final, ys = gk.scan(_imperative(w), jnp.zeros(2), XS)
        value = (final**2).sum() + ys.sum()
    np.testing.assert_allclose(tape.gradient(value, w), jax.grad(pure_loss)(W0), rtol=1e-5)
    check_grads(pure_loss, (W0,), order=2, modes=("fwd", "rev"))


def test_under_a_tape_the_scan_is_one_op_over_recorded_inputs():
    w = gk.Variable(W0)
    init = gk.Variable(jnp.array([0.3, -0.2]))
    with gk.GradientTape() as tape:
        start = init * 2.0  # a recorded tensor passed as the initial carry
        final, _ = gk.scan(_imperative(w), start, XS)
        value = (final**3).sum()
    got = tape.gradient(value, [w, init])

    def pure(w_value, init_value):
        return (_pure(w_value, init_value * 2.0, XS)[0] ** 3).sum()

    expected = jax.grad(pure, argnums=(0, 1))(W0, init.value)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-5)


def test_a_variable_created_in_the_step_is_local_to_it():
    def step(carry, x):
        acc = gk.Variable(jnp.zeros(()))
        acc.assign_add(x.sum())
        acc.assign(acc * 2.0)
        return carry + acc.value, acc.value

    final, ys = gk.scan(step, jnp.float32(0.0), XS)
    np.testing.assert_allclose(ys, 2 * XS.sum(axis=1))
    np.testing.assert_allclose(final, 2 * XS.sum())


def test_assigning_an_outer_variable_is_refused_and_leaves_it_unchanged():
    counter = gk.Variable(0.0)

    def step(carry, x):
        counter.assign_add(1.0)
        return carry, x

    with pytest.raises(TypeError, match=r"\[gradkit\] gk.scan's step assigns Variable .* The Variable is unchanged"):
        gk.scan(step, jnp.float32(0.0), XS)
    assert float(counter.value) == 0.0


def test_a_step_must_return_a_pair():
    with pytest.raises(TypeError, match=r"\[gradkit\] gk.scan's step must return a pair"):
        gk.scan(lambda c, x: c + x, jnp.zeros(2), XS)
    with pytest.raises(TypeError, match=r"\[gradkit\] gk.scan takes the function"):
        gk.scan(3, jnp.zeros(2), XS)


def test_inside_gk_jit_a_later_assignment_is_seen():
    w = gk.Variable(W0)
    run = gk.jit(lambda xs: gk.scan(_imperative(w), jnp.zeros(2), xs)[0])
    np.testing.assert_allclose(run(XS), _pure(W0, jnp.zeros(2), XS)[0], rtol=1e-6)
    w.assign(W0 * 0.5)
    np.testing.assert_allclose(run(XS), _pure(W0 * 0.5, jnp.zeros(2), XS)[0], rtol=1e-6)
