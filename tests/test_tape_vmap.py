"""gk.vmap (and gradkit.tf's vectorized_map) of a function that reads Variables, called while a
tape records: the mapped call is one recorded op whose inputs include the Variables' values, so
the tape differentiates through it.

Oracles: jax.grad / jax.hessian of the pure-JAX rewrite; compilations counted, never timed.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _oracles import assert_close, count_compiles

import gradkit as gk
from gradkit import GradkitError

gnp = gk.numpy

XS = np.array([[1.0, 2.0], [0.5, -1.0], [-2.0, 0.3]], np.float32)
W0 = np.array([0.7, -1.2], np.float32)


def _pure_loss(w, xs):
    return jnp.sum(jax.vmap(lambda x: jnp.tanh(jnp.sum(x * w)))(xs) ** 2)


def test_gradient_through_a_mapped_call_reading_a_variable():
    w = gk.Variable(W0, name="w")
    with gk.GradientTape() as tape:
        y = gk.vmap(lambda x: jnp.tanh(jnp.sum(x * w.value)))(XS)
        loss = gnp.sum(y**2)
    assert_close(np.asarray(tape.gradient(loss, w)), jax.grad(_pure_loss)(jnp.asarray(W0), XS))


def test_mapped_over_a_recorded_tensor_and_a_local_accumulator():
    # The mapped argument is itself recorded (a function of w), and the mapped function
    # accumulates into a Variable it creates.
    w = gk.Variable(W0, name="w")

    def per_example(x):
        acc = gk.Variable(0.0, name="acc")
        for i in range(2):
            acc.assign_add(x[i] * w[i])
        return jnp.tanh(acc.value)

    with gk.GradientTape() as tape:
        xs = gnp.sin(XS * w[None, :])
        loss = gnp.sum(gk.vmap(per_example)(xs) ** 2)

    def pure(wv):
        xs = jnp.sin(XS * wv[None, :])
        return _pure_loss(wv, xs)

    assert_close(np.asarray(tape.gradient(loss, w)), jax.grad(pure)(jnp.asarray(W0)))


def test_second_order_through_a_mapped_call_under_nested_tapes():
    w = gk.Variable(W0, name="w")
    with gk.GradientTape() as outer:
        with gk.GradientTape() as inner:
            loss = gnp.sum(gk.vmap(lambda x: jnp.tanh(jnp.sum(x * w.value)))(XS) ** 2)
        g = inner.gradient(loss, w)
    hessian = outer.jacobian(g, w)
    assert_close(np.asarray(hessian), jax.hessian(_pure_loss)(jnp.asarray(W0), XS), rtol=1e-5)


def test_a_loop_of_tape_steps_through_gk_vmap_compiles_once():
    w = gk.Variable(W0, name="w")
    mapped = gk.vmap(lambda x: jnp.tanh(jnp.sum(x * w.value)))
    w_oracle = jnp.asarray(W0)
    rng = np.random.default_rng(0)
    compiles = []
    for _ in range(5):
        xs = rng.normal(size=XS.shape).astype(np.float32)

        def step(xs=xs):
            with gk.GradientTape() as tape:
                loss = gnp.sum(mapped(xs) ** 2)
            w.assign_sub(0.1 * tape.gradient(loss, w))

        compiles.append(count_compiles(step))
        w_oracle = w_oracle - 0.1 * jax.grad(_pure_loss)(w_oracle, xs)
    assert_close(w.numpy(), w_oracle, rtol=1e-5)
    assert compiles[2:] == [0, 0, 0], compiles


def test_assigning_an_outer_variable_in_a_mapped_call_under_a_tape_is_refused():
    w = gk.Variable(W0, name="w")

    def per_example(x):
        w.assign(x)
        return jnp.sum(x)

    with pytest.raises(GradkitError, match=r"^\[gradkit\] gk.vmap cannot vectorise"):
        with gk.GradientTape():
            gk.vmap(per_example)(XS)
    np.testing.assert_array_equal(w.numpy(), W0)


def test_a_new_mapped_function_each_step_compiles_once():
    # Eager code often builds the mapped function inside the step (a lambda closing over this
    # step's arrays): equal programs are one op, the closed-over arrays runtime inputs.
    w = gk.Variable(W0, name="w")
    w_oracle = jnp.asarray(W0)
    rng = np.random.default_rng(1)
    compiles = []
    for _ in range(5):
        xs = rng.normal(size=XS.shape).astype(np.float32)
        shift = jnp.asarray(rng.normal(size=2).astype(np.float32))  # closed over, new each step

        def step(xs=xs, shift=shift):
            with gk.GradientTape() as tape:
                loss = gnp.sum(gk.vmap(lambda x: jnp.tanh(jnp.sum((x + shift) * w.value)))(xs) ** 2)
            w.assign_sub(0.1 * tape.gradient(loss, w))

        compiles.append(count_compiles(step))
        w_oracle = w_oracle - 0.1 * jax.grad(_pure_loss)(w_oracle, xs + shift[None, :])
    assert_close(w.numpy(), w_oracle, rtol=1e-5)
    assert compiles[2:] == [0, 0, 0], compiles


def test_a_non_array_argument_under_a_tape_is_a_clear_error():
    w = gk.Variable(W0, name="w")
    with pytest.raises(GradkitError, match=r"^\[gradkit\] gk.vmap was called while a GradientTape records"):
        with gk.GradientTape():
            gk.vmap(lambda x, name: jnp.sum(x * w.value), in_axes=(0, None))(XS, "label")


def test_a_gk_vmap_function_called_again_under_a_tape_sees_its_current_python_state_and_variables():
    """Eagerly, gk.vmap runs its function at every call; under a tape it must too: a second
    call that reads another Python value and another Variable (through a dict) is not the
    first call's program. Oracle: jax.grad of the pure rewrite."""
    xs = jnp.asarray([1.0, 2.0], jnp.float32)
    w1, w2 = gk.Variable(jnp.float32(10.0), name="w1"), gk.Variable(jnp.float32(100.0), name="w2")
    cfg = {"scale": 1.0, "w": w1}
    mapped = gk.vmap(lambda x: x * cfg["scale"] * cfg["w"])
    for scale, w, w0 in ((1.0, w1, 10.0), (2.0, w2, 100.0)):
        cfg["scale"], cfg["w"] = scale, w
        x = gk.Variable(xs)
        with gk.GradientTape() as tape:
            y = mapped(x * 1.0)
            loss = gnp.sum(y**2)
        grads = tape.gradient(loss, [x, w])
        assert_close(y.numpy(), np.asarray(xs * scale * w0))
        expected = jax.grad(lambda x, w, s=scale: jnp.sum((x * s * w) ** 2), argnums=(0, 1))(xs, jnp.float32(w0))
        assert_close([g.numpy() for g in grads], [np.asarray(e) for e in expected], rtol=1e-5)
