"""A tape entered again, complex Jacobians, gk.jit's argument errors, Variable updates by
Python ints, and the one broadcast rule of updates and cotangents. Oracles: hand
derivations and pure JAX."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gradkit as gk
from gradkit._core.variable import broadcasts_to

gnp = gk.numpy


def close(a, b):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6, atol=1e-6)


# -- a tape entered again ------------------------------------------------------------------


def test_reentered_tape_connects_its_blocks_through_assignments():
    # z = c * x with c = 2x assigned in the first block: dz/dx = 4x = 12; c's entry value
    # was overwritten before any use, so dz/dc is None (SEMANTICS.md).
    x, c = gk.Variable(3.0), gk.Variable(1.0)
    tape = gk.GradientTape(persistent=True)
    with tape:
        c.assign(x * 2.0)
    with tape:
        z = c * x
    close(tape.gradient(z, x), 12.0)
    assert tape.gradient(z, c) is None
    close(tape.gradient(c, x), 2.0)  # a Variable target after 'with': its final value
    close(c.value, 6.0)


def test_reentered_tape_sees_an_assignment_made_between_blocks_as_a_constant():
    # Made while nothing recorded, as under stop_recording: b = v*v with v = 5 does not
    # depend on v's value when the tape first saw it.
    v = gk.Variable(2.0)
    tape = gk.GradientTape(persistent=True)
    with tape:
        a = v * 1.0
    v.assign(5.0)
    with tape:
        b = v * v
    assert tape.gradient(b, v) is None
    close(tape.gradient(a, v), 1.0)
    close(b, 25.0)


def test_reentered_tape_inside_gk_jit():
    w = gk.Variable(2.0)

    @gk.jit
    def step(k):
        tape = gk.GradientTape()
        with tape:
            y = w * k
        with tape:
            z = y * w  # k w^2
        g = tape.gradient(z, w)
        w.assign_sub(0.1 * g)
        return g

    close(step(1.0), 4.0)  # 2 k w at w = 2
    close(step(1.0), 3.2)  # at w = 1.6
    close(w.value, 1.28)


def test_reentered_inside_a_tape_opened_after_it_is_a_clear_error():
    x = gk.Variable(3.0)
    tape = gk.GradientTape(persistent=True)
    with tape:
        y = x * x
    with gk.GradientTape():
        with pytest.raises(RuntimeError, match=r"^\[gradkit\] this GradientTape is entered again, but where"):
            with tape:
                pass
    with tape:  # where it was first entered, it continues
        z = y * x
    close(tape.gradient(z, x), 27.0)


# -- complex Jacobians ---------------------------------------------------------------------


def _rows_oracle(f, z):
    """Row i: the vector-Jacobian product with the one-hot cotangent e_i (pure JAX)."""
    y, pull = jax.vjp(f, z)
    eye = jnp.eye(y.size, dtype=y.dtype)
    return jax.vmap(lambda e: pull(e.reshape(y.shape))[0])(eye).reshape(y.shape + z.shape)


@pytest.mark.parametrize(
    "f",
    [
        lambda z: (z * z).reshape(3, 1) * jnp.array([[1.0, 2j]], jnp.complex64),
        lambda z: z * jnp.conj(z) + jnp.sin(z),
        lambda z: jnp.real(z * jnp.conj(z)),
    ],
    ids=["holomorphic", "non_holomorphic", "real_target"],
)
def test_complex_jacobian_is_the_rows_of_vjps(f):
    z0 = jnp.array([1 + 2j, 3 - 1j, -0.5 + 0.25j], jnp.complex64)
    z = gk.Variable(z0)
    with gk.GradientTape() as tape:
        y = gk.lift(f)(z)
    close(tape.jacobian(y, z), _rows_oracle(f, z0))


def test_complex_jacobian_recorded_by_an_outer_tape():
    x0 = jnp.array([0.5, -1.0], jnp.float32)
    x = gk.Variable(x0)

    def jac_sum(x):
        return jnp.sum(jnp.real(_rows_oracle(lambda a: a.astype(jnp.complex64) * (1 + 2j) * a, x)))

    with gk.GradientTape() as outer:
        with gk.GradientTape() as inner:
            y = gnp.asarray(x, jnp.complex64) * (1 + 2j) * x
        j = inner.jacobian(y, x)
        total = gnp.sum(gnp.real(j))
    close(total, jac_sum(x0))
    close(outer.gradient(total, x), jax.grad(jac_sum)(x0))


# -- gk.jit arguments that cannot be arrays ------------------------------------------------


def test_jit_names_a_string_argument_and_how_to_pass_it():
    calls = []

    def scale(x, mode):
        calls.append(mode)
        return x * 2

    f = gk.jit(scale)
    with pytest.raises(
        TypeError, match=r"^\[gradkit\] gk.jit: argument mode of scale is .*'fast'.*static_argnums=\(1,\)"
    ):
        f(1.0, "fast")
    with pytest.raises(TypeError, match=r"^\[gradkit\] gk.jit: argument mode of scale .*static_argnames=\('mode',\)"):
        f(1.0, mode={"a": object()})
    close(gk.jit(scale, static_argnums=1)(1.0, "fast"), 2.0)
    close(gk.jit(functools.partial(scale, mode="fast"))(1.0), 2.0)

    class Model:
        @gk.jit
        def run(self, x, mode):
            return x

    with pytest.raises(TypeError, match=r"static_argnums=\(2,\)"):  # counting self, as jax.jit does
        Model().run(1.0, "fast")


def test_jit_keeps_a_type_error_of_the_function_itself():
    v = gk.Variable(1.0)

    @gk.jit
    def bad(x):
        return v + x + None

    with pytest.raises(TypeError) as info:
        bad(1.0)
    assert not str(info.value).startswith("[gradkit]")


# -- Variable updates by Python ints -------------------------------------------------------


def test_float_variable_takes_any_python_int_as_a_float():
    for op, want in (("assign", 2.0**40), ("assign_add", 1 + 2.0**40), ("assign_sub", 1 - 2.0**40)):
        v = gk.Variable(np.float32(1.0))
        getattr(v, op)(2**40)
        assert v.dtype == jnp.float32
        close(v.value, np.float32(want))


def test_int_variable_refuses_an_int_it_cannot_hold_and_stays_unchanged():
    v = gk.Variable(jnp.array([1, 2], jnp.int32))
    for call in (lambda: v.assign_add(2**40), lambda: v.assign(2**31), lambda: v[1].assign_sub(-(2**31) - 1)):
        with pytest.raises(ValueError, match=r"^\[gradkit\] cannot .* Python int .* int32 \(range -2147483648 to"):
            call()
        assert np.asarray(v.value).tolist() == [1, 2]
    with gk.GradientTape():
        with pytest.raises(ValueError, match=r"^\[gradkit\] cannot add the Python int"):
            v.assign_add(2**40)
    assert np.asarray(v.value).tolist() == [1, 2]


def test_int_variable_refuses_a_list_holding_an_int_it_cannot_hold_and_stays_unchanged():
    # NumPy raises its own OverflowError converting [300, 4] to int8; TensorFlow wraps it to [44, 4].
    v = gk.Variable(np.array([1, 2], np.int8))
    calls = (lambda: v.assign([300, 4]), lambda: v[:1].assign([-129]), lambda: gk.State.of([v]).assign(v, [4, 128]))
    for call in calls:
        with pytest.raises(
            ValueError,
            match=r"^\[gradkit\] cannot (assign|write) the Python int -?\d+ .* int8 \(range -128 to 127\)",
        ):
            call()
        assert np.asarray(v.value).tolist() == [1, 2]
    v.assign([127, -128])  # the extremes fit
    assert np.asarray(v.value).tolist() == [127, -128]


# -- one broadcast rule --------------------------------------------------------------------


def test_broadcasts_to_and_its_three_callers():
    assert broadcasts_to((), (2, 3)) and broadcasts_to((3,), (2, 3)) and broadcasts_to((2, 3), (2, 3))
    assert not broadcasts_to((2, 3), (3,)) and not broadcasts_to((2,), (2, 3)) and not broadcasts_to((1, 2, 3), (2, 3))
    x = gk.Variable(np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match=r"^\[gradkit\] cannot add a value of shape \(2,\) to Variable"):
        x.assign_add(np.ones(2, np.float32))
    with pytest.raises(ValueError, match=r"^\[gradkit\] cannot assign a value of shape \(3,\) to the slice"):
        x[0, :2].assign(np.ones(3, np.float32))
    with gk.GradientTape() as tape:
        y = x * 2.0
    with pytest.raises(ValueError, match=r"^\[gradkit\] output_gradients has an entry of shape \(2,\)"):
        tape.gradient(y, x, output_gradients=np.ones(2, np.float32))
    assert not np.asarray(x.value).any()


def test_an_assignment_inside_a_gk_jit_step_after_a_tape_is_seen_by_the_tape():
    # Inside gk.jit the step's frame holds the Variable's value, not the live Variable: a
    # re-entered tape and a Variable target must both see the assignment made in between.
    v = gk.Variable(2.0)

    def reentered():
        t = gk.GradientTape(persistent=True)
        with t:
            v * 2.0
        v.assign(5.0)  # a constant: what the tape records next no longer depends on its source
        with t:
            z = v * 3.0
        return z, t.gradient(z, v)

    def target_assigned_after():
        with gk.GradientTape() as t:
            v * v
        v.assign(3.0)
        return t.gradient(v, v)  # assigned after the tape stopped: not a recorded value

    for run in (reentered, gk.jit(reentered)):
        v.assign(2.0)
        z, g = run()
        assert float(z) == 15.0 and g is None
    for run in (target_assigned_after, gk.jit(target_assigned_after)):
        v.assign(2.0)
        assert run() is None
