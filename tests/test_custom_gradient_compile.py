"""custom_gradient under a recording tape: one compiled program for a loop of same-shaped
steps, while f and grad_fn still see each call's Python state, arrays and Variables.

Oracles: jax.custom_vjp written by hand, hand derivations, real TensorFlow (skipped when absent).
Compilations are counted with jax.monitoring events (count_compiles), never timed.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _oracles import assert_close, count_compiles

import gradkit as gk

gnp = gk.numpy

W0 = np.array([0.8, -1.3, 0.4], np.float32)
LR = 0.1


def clip_by_norm(t, clip_norm):
    norm = jnp.sqrt(jnp.sum(t**2))
    return jnp.where(norm > clip_norm, t * clip_norm / norm, t)


@gk.custom_gradient
def clipped_tanh(x):
    def backward(dy):
        return clip_by_norm(dy, 0.5) * (1.0 - jnp.tanh(x) ** 2)

    return jnp.tanh(x), backward


@jax.custom_vjp
def oracle_clipped_tanh(x):
    return jnp.tanh(x)


oracle_clipped_tanh.defvjp(
    lambda x: (jnp.tanh(x), x),
    lambda x, dy: (clip_by_norm(dy, 0.5) * (1.0 - jnp.tanh(x) ** 2),),
)


def _oracle_loss(w, x, target):
    return jnp.sum((oracle_clipped_tanh(w * x) - target) ** 2)


def _timed_step(step):
    """``step()``'s result and how many programs it compiled."""
    out = []
    n = count_compiles(lambda: out.append(step()))
    return out[0], n


def test_a_loop_of_tape_steps_compiles_once_and_matches_the_oracle():
    rng = np.random.default_rng(0)
    w = gk.Variable(W0.copy(), name="w")
    w_oracle = jnp.asarray(W0)
    compiles = []
    for _ in range(20):
        x = rng.normal(size=3).astype(np.float32)  # new values, same shapes, every step
        target = rng.normal(size=3).astype(np.float32)

        def step(x=x, target=target):
            with gk.GradientTape() as tape:
                loss = gnp.sum((clipped_tanh(w * x) - target) ** 2)
            grad = tape.gradient(loss, w)
            w.assign_sub(LR * grad)
            return np.asarray(grad)

        got, n = _timed_step(step)
        compiles.append(n)
        want = jax.grad(_oracle_loss)(w_oracle, x, target)
        assert_close(got, want)
        w_oracle = w_oracle - LR * want
        assert_close(w.numpy(), w_oracle)
    assert compiles[0] > 0
    assert sum(compiles[2:]) == 0, compiles


def test_grad_fn_sees_the_python_state_of_each_call():
    config = {"scale": 2.0}

    @gk.custom_gradient
    def scaled_grad(x):
        scale = config["scale"]
        return x * 3.0, lambda dy: dy * scale  # deliberately not the true gradient (3)

    w = gk.Variable(W0.copy(), name="w")
    for scale in (2.0, 5.0, 2.0, -0.25, 5.0):
        config["scale"] = scale
        with gk.GradientTape() as tape:
            y = gnp.sum(scaled_grad(w * 1.5))
        # Hand derivation: dy = 1 through the sum; the rule gives scale; d(1.5 w)/dw = 1.5.
        assert_close(np.asarray(tape.gradient(y, w)), np.full(3, 1.5 * scale, np.float32))
        assert_close(float(y), 3.0 * 1.5 * W0.sum())


def test_forward_sees_the_python_state_of_each_call():
    config = {"power": 2}

    @gk.custom_gradient
    def powered(x):
        p = config["power"]
        return x**p, lambda dy: dy * p * x ** (p - 1)

    w = gk.Variable(np.float32(1.7), name="w")
    for p in (2, 3, 2):
        config["power"] = p
        with gk.GradientTape() as tape:
            y = powered(w * 1.0)
        assert_close(float(y), 1.7**p)
        assert_close(float(tape.gradient(y, w)), p * 1.7 ** (p - 1))


def test_a_closed_over_array_is_used_with_its_value_at_each_call_without_recompiling():
    held = {"offset": jnp.array([0.5, -1.0, 2.0], jnp.float32), "weight": np.ones(3, np.float32)}
    weight = held["weight"]  # a NumPy array written in place between steps

    @gk.custom_gradient
    def shifted(x):
        offset = held["offset"]

        def backward(dy):
            return dy * offset * weight  # deliberately not the true gradient (1)

        return x + offset, backward

    w = gk.Variable(W0.copy(), name="w")
    compiles = []
    for step in range(6):
        held["offset"] = jnp.array([0.5, -1.0, 2.0], jnp.float32) * (step + 1)
        weight[:] = step - 2.5

        def run():
            with gk.GradientTape() as tape:
                y = gnp.sum(shifted(w * 2.0) * jnp.arange(1.0, 4.0))
            return np.asarray(y), np.asarray(tape.gradient(y, w))

        (y, grad), n = _timed_step(run)
        compiles.append(n)
        offset = np.array([0.5, -1.0, 2.0], np.float32) * (step + 1)
        # Hand derivation: y = sum((2w + offset) * [1, 2, 3]); the rule gives dy * offset * weight,
        # dy = [1, 2, 3], and d(2w)/dw = 2.
        assert_close(y, np.sum((2.0 * W0 + offset) * np.arange(1.0, 4.0)))
        assert_close(grad, 2.0 * np.arange(1.0, 4.0) * offset * (step - 2.5))
    assert sum(compiles[2:]) == 0, compiles


def test_variables_read_by_f_reach_grad_fn_with_each_calls_value():
    w = gk.Variable(W0.copy(), name="w")

    @gk.custom_gradient
    def scaled(x):
        def grad_fn(dy, variables=None):
            assert variables == [w]
            return dy * w.value * 2.0, [dy * x * 10.0]  # deliberately not the true gradient

        return x * w, grad_fn

    @jax.custom_vjp
    def oracle(wv, x):
        return x * wv

    oracle.defvjp(lambda wv, x: (x * wv, (wv, x)), lambda r, dy: (dy * r[1] * 10.0, dy * r[0] * 2.0))

    x = np.array([0.3, -0.7, 1.1], np.float32)
    w_oracle = jnp.asarray(W0)
    compiles = []
    for _ in range(5):

        def run():
            with gk.GradientTape() as tape:
                s = gk.Tensor(jnp.asarray(x))
                tape.watch(s)
                y = gnp.sum(scaled(s * 1.0) ** 2)
            d_w, d_s = tape.gradient(y, [w, s])
            w.assign_sub(LR * d_w)
            return np.asarray(d_w), np.asarray(d_s)

        (d_w, d_s), n = _timed_step(run)
        compiles.append(n)
        want_w, want_s = jax.grad(lambda wv, xv: jnp.sum(oracle(wv, xv) ** 2), argnums=(0, 1))(w_oracle, x)
        assert_close((d_w, d_s), (want_w, want_s))
        w_oracle = w_oracle - LR * want_w
    assert sum(compiles[2:]) == 0, compiles


def test_second_derivative_through_a_custom_gradient_compiles_once():
    @gk.custom_gradient
    def cube(x):
        return x**3, lambda dy: dy * 3.0 * x**2  # differentiable: the second derivative is 6x

    w = gk.Variable(np.float32(1.2), name="w")
    compiles = []
    for step in range(6):
        w.assign(np.float32(1.2 + 0.1 * step))

        def run():
            with gk.GradientTape() as outer:
                with gk.GradientTape() as inner:
                    y = cube(w * 1.0)
                g = inner.gradient(y, w)
            return float(g), float(outer.gradient(g, w))

        (g, gg), n = _timed_step(run)
        compiles.append(n)
        v = 1.2 + 0.1 * step
        assert_close(g, 3.0 * v**2)
        assert_close(gg, 6.0 * v)
    assert sum(compiles[2:]) == 0, compiles


def test_a_custom_gradient_called_by_grad_fn_is_told_apart_by_its_python_state():
    # The outer rule's program calls the inner custom_gradient; a second derivative runs the
    # inner rule from that program, so the inner rule's Python state must be part of it.
    config = {"s": 2.0}

    @gk.custom_gradient
    def inner(x):
        s = config["s"]
        return x, lambda dy: dy * s

    @gk.custom_gradient
    def square(x):
        return x**2, lambda dy: inner(dy * 2.0 * x)

    w = gk.Variable(np.float32(1.5), name="w")
    for s in (2.0, 7.0, 2.0):
        config["s"] = s
        with gk.GradientTape() as outer:
            with gk.GradientTape() as tape:
                y = square(w * 1.0)
            g = tape.gradient(y, w)
        # g = inner(2x) with dy = 1: its value is 2x, its derivative s * 2 (hand derivation).
        assert_close(float(g), 2.0 * 1.5)
        assert_close(float(outer.gradient(g, w)), 2.0 * s)


def test_transforms_around_a_custom_gradient():
    bias = jnp.array([0.1, -0.2, 0.3], jnp.float32)

    @gk.custom_gradient
    def f(x):
        return jnp.sin(x) + bias, lambda dy: dy * jnp.cos(x) * 2.0 + bias

    @jax.custom_vjp
    def oracle(x):
        return jnp.sin(x) + bias

    oracle.defvjp(lambda x: (jnp.sin(x) + bias, x), lambda x, dy: (dy * jnp.cos(x) * 2.0 + bias,))

    x = np.array([0.4, -0.9, 1.3], np.float32)
    want = jax.grad(lambda v: jnp.sum(oracle(v) ** 2))(x)
    assert_close(jax.grad(lambda v: jnp.sum(f(v) ** 2))(x), want)
    assert_close(jax.jit(jax.grad(lambda v: jnp.sum(f(v) ** 2)))(x), want)
    w = gk.Variable(x, name="w")
    assert_close(gk.value_and_grad(lambda: jnp.sum(f(w.value) ** 2), wrt=w)()[1], want)
    assert_close(gk.jit(gk.grad(lambda: jnp.sum(f(w.value) ** 2), wrt=w))(), want)


def test_a_grad_fn_that_branches_on_dy_still_runs_at_the_gradient():
    @gk.custom_gradient
    def branchy(x):
        def backward(dy):
            return dy * 2.0 if float(dy) > 0 else dy

        return x * 1.0, backward

    # Eagerly, jax runs the backward on concrete values, as TensorFlow would.
    assert float(jax.grad(branchy)(1.5)) == 2.0
    assert float(jax.grad(lambda x: -branchy(x))(1.5)) == -1.0


def test_tf_facade_with_a_variable_compiles_once():
    import gradkit.tf as gtf

    w = gtf.Variable(W0.copy())
    config = {"scale": 10.0}

    @gtf.custom_gradient
    def f(x):
        scale = config["scale"]

        def grad(dy, variables=None):
            return dy * w * 2.0, [dy * x * scale]  # deliberately not the true gradient

        return x * w, grad

    x = np.array([0.3, -0.7, 1.1], np.float32)

    @jax.custom_vjp
    def oracle(wv, xv, scale):
        return xv * wv

    oracle.defvjp(
        lambda wv, xv, scale: (xv * wv, (wv, xv, scale)),
        lambda r, dy: (dy * r[1] * r[2], dy * r[0] * 2.0, None),
    )

    w_oracle = jnp.asarray(W0)
    compiles = []
    for step in range(6):
        config["scale"] = 10.0 if step < 4 else 3.0  # a new Python number: a new program, used at once

        def run():
            with gtf.GradientTape() as tape:
                y = gtf.reduce_sum(f(gtf.constant(x)) ** 2)
            g = tape.gradient(y, w)
            w.assign_sub(LR * g)
            return np.asarray(g)

        got, n = _timed_step(run)
        compiles.append(n)
        want = jax.grad(lambda wv: jnp.sum(oracle(wv, x, config["scale"]) ** 2))(w_oracle)
        assert_close(got, want)
        w_oracle = w_oracle - LR * want
    assert sum(compiles[2:4]) == 0, compiles


def test_tf_facade_with_a_variable_matches_tensorflow():
    tf = pytest.importorskip("tensorflow")
    import gradkit.tf as gtf

    def program(tfm, steps=3):
        w = tfm.Variable(W0.copy())
        config = {"scale": 10.0}

        @tfm.custom_gradient
        def f(x):
            scale = config["scale"]

            def grad(dy, variables=None):
                return dy * w * 2.0, [dy * x * scale]

            return x * w, grad

        grads = []
        for step in range(steps):
            config["scale"] = 10.0 + step
            with tfm.GradientTape() as tape:
                y = tfm.reduce_sum(f(tfm.constant(np.array([0.3, -0.7, 1.1], np.float32))) ** 2)
            g = tape.gradient(y, w)
            w.assign_sub(LR * g)
            grads.append(np.asarray(g))
        return grads

    for got, want in zip(program(gtf), program(tf)):
        assert_close(got, want)


@gk.custom_gradient
def scaled_softsign(x, scale):
    def backward(dy):
        # d/dx scale * x / (1 + |x|) = scale / (1 + |x|)^2; the scale gets no gradient here.
        return dy * scale / (1.0 + jnp.abs(x)) ** 2, jnp.zeros_like(scale)

    return scale * x / (1.0 + jnp.abs(x)), backward


def test_a_python_float_argument_that_changes_every_step_compiles_once():
    # A schedule passed positionally, as a Python float, is a runtime value of the program,
    # as a Python float operand of an operator is: no step after the first compiles.
    w = gk.Variable(W0.copy(), name="w")
    x = np.array([0.5, 1.5, -2.0], np.float32)
    compiles = []
    for step in range(6):
        scale = 1.0 + 0.25 * step

        def one_step(scale=scale):
            with gk.GradientTape() as tape:
                loss = gnp.sum(scaled_softsign(w * x, scale) ** 2)
            return loss, tape.gradient(loss, w)

        (loss, g), n = _timed_step(one_step)
        compiles.append(n)
        # Hand derivation: y = s u / (1 + |u|), u = w x, dL/dw = 2 y * s / (1 + |u|)^2 * x.
        u = jnp.asarray(W0) * x
        y = scale * u / (1.0 + jnp.abs(u))
        assert_close(np.asarray(loss), jnp.sum(y**2))
        assert_close(np.asarray(g), 2 * y * scale / (1.0 + jnp.abs(u)) ** 2 * x)
    assert compiles[2:] == [0] * 4, compiles
