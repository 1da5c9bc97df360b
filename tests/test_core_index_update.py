"""Slice updates compiled into one program with what computes their operand and update.

XLA's CPU backend can miscompile ``x.at[1:].set(x[:-1] * c)`` where ``x`` comes from a slice
of another array (an in-place kernel reading what it already overwrote: openxla/xla#49176).
gradkit's slice updates (``v[idx].assign``, ``state.at[v][idx]``, ``t.at[idx]``) must give
NumPy's answer there, with jax's gradients. Oracle: NumPy on a copy, and ``check_grads``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jax.test_util import check_grads

import gradkit as gk
from gradkit._core.index_update import index_update

gnp = gk.numpy
W = np.array([[0.5, -0.8, 0.7, 0.2], [0.1, 0.2, 0.3, -0.4]], np.float32)

NUMPY_UPDATES = {
    "set": lambda old, u: u,
    "add": lambda old, u: old + u,
    "subtract": lambda old, u: old - u,
    "multiply": lambda old, u: old * u,
    "divide": lambda old, u: old / u,
    "min": np.minimum,
    "max": np.maximum,
}


def numpy_update(x, index, u, how):
    out = np.array(x, copy=True)
    with np.errstate(divide="ignore"):  # an update of 0 divides to inf, in NumPy as in XLA
        out[index] = NUMPY_UPDATES[how](out[index], u)
    return out


def shifted(how, index, source):
    """Row 0 of ``w`` times 1.5 (an operand made from a slice), updated at ``index`` from its ``source`` part."""

    def f(w):
        h = w[0] * 1.5
        return index_update(h, index, h[source] * 2.0 + 1.0, how)

    return f


@pytest.mark.parametrize("how", sorted(NUMPY_UPDATES))
@pytest.mark.parametrize(
    ("index", "source"), [(slice(1, None), slice(None, 3)), (slice(None, 3), slice(1, None)), (2, 0)]
)
def test_a_compiled_slice_update_reads_the_values_before_the_write(how, index, source):
    f = shifted(how, index, source)
    h = W[0] * 1.5
    want = numpy_update(h, index, h[source] * 2.0 + 1.0, how)
    np.testing.assert_allclose(np.asarray(jax.jit(f)(W)), want, rtol=1e-6)


def test_apply_and_integer_array_indices_keep_jax_s_meaning():
    h = jnp.arange(6.0)
    np.testing.assert_array_equal(
        jax.jit(lambda x: index_update(x, slice(1, 3), jnp.sin, "apply"))(h), h.at[1:3].apply(jnp.sin)
    )
    repeated = jnp.array([1, 1, 4])
    np.testing.assert_array_equal(
        jax.jit(lambda x: index_update(x, repeated, jnp.ones(3), "add"))(h), np.array([0, 3, 2, 3, 5, 5], np.float32)
    )


@pytest.mark.parametrize("how", ["set", "add", "multiply"])
def test_gradients_of_a_slice_update_by_finite_differences(how):
    def f(w, u):
        h = jnp.tanh(w[0])
        return index_update(h, slice(1, None), h[:3] * u, how)

    check_grads(f, (jnp.asarray(W), jnp.asarray([0.3, -0.2, 0.9])), order=2, modes=("fwd", "rev"), atol=1e-2, rtol=1e-2)


@settings(max_examples=25, deadline=None, derandomize=True, database=None)
@given(
    n=st.integers(3, 9),
    start=st.integers(0, 2),
    shift=st.integers(-2, 2),
    how=st.sampled_from(sorted(NUMPY_UPDATES)),
)
def test_random_shifted_slice_updates(n, start, shift, how):
    stop = n - 2
    start = min(start, stop)  # an empty slice at most, never a reversed one
    src_start = min(max(start + shift, 0), n - (stop - start))
    index, source = slice(start, stop), slice(src_start, src_start + stop - start)
    w = np.linspace(-1.0, 1.5, 2 * n, dtype=np.float32).reshape(2, n)
    h = w[0] * 1.5
    want = numpy_update(h, index, h[source] * 2.0 + 1.0, how)
    np.testing.assert_allclose(np.asarray(jax.jit(shifted(how, index, source))(w)), want, rtol=1e-5, atol=1e-6)


BASIC_INDICES = [
    (1, slice(None)),
    (-1, Ellipsis),
    (slice(None, None, -1), 2),
    (slice(3, 0, -1), slice(1, None)),
    (slice(0, 3, -1), 0),  # empty, reversed
    (slice(5, 1), slice(None)),  # empty
    (Ellipsis, slice(1, 3), None),
    (None, 2, slice(4, None, -1)),
    (slice(None, None, 2), slice(3, 0, -2)),  # strided
    (np.int64(2), slice(-2, None)),
]


@pytest.mark.parametrize("how", ["set", "add", "max"])
@pytest.mark.parametrize("index", BASIC_INDICES, ids=repr)
def test_every_basic_index_form_writes_where_numpy_does(how, index):
    x = np.linspace(-2.0, 3.0, 20, dtype=np.float32).reshape(4, 5)
    u = np.cos(np.arange(x[index].size, dtype=np.float32)).reshape(x[index].shape) * 3.0
    got = jax.jit(lambda a, b: index_update(a, index, b, how))(x, u)
    np.testing.assert_allclose(np.asarray(got), numpy_update(x, index, u, how), rtol=1e-6)


@pytest.mark.parametrize("index", [BASIC_INDICES[3], BASIC_INDICES[7], BASIC_INDICES[8]], ids=repr)
def test_gradients_of_reversed_nested_and_strided_writes_by_finite_differences(index):
    def f(w, u):
        h = jnp.tanh(w) * 1.5
        return index_update(h, index, u * h[index], "set")

    w = np.linspace(-1.0, 1.0, 20, dtype=np.float32).reshape(4, 5)
    u = np.linspace(0.5, 1.5, w[index].size, dtype=np.float32).reshape(w[index].shape)
    check_grads(f, (w, u), order=2, modes=("fwd", "rev"), atol=1e-2, rtol=1e-2)


# --- through gradkit's faces: the tape, gk.jit, a State, t.at[] ---------------------------------------


def expected_assignments():
    h = W[0] * 1.5
    out = h.copy()
    out[1:] = h[:3] * 2.0
    return out


def assign_shifted(v, x):
    v.assign(x[0] * 1.5)
    v[1:].assign(v[:3] * 2.0)


def test_a_slice_assignment_under_a_tape_and_in_gk_jit():
    x, v = gk.Variable(W), gk.Variable(np.zeros(4, np.float32))
    with gk.GradientTape() as tape:
        assign_shifted(v, x)
        loss = gnp.sum(v * gnp.asarray([1.0, 10.0, 100.0, 1000.0]))
    np.testing.assert_allclose(v.numpy(), expected_assignments(), rtol=1e-6)

    def pure(w):
        h = w[0] * 1.5
        return jnp.sum(jnp.concatenate([h[:1], h[:3] * 2.0]) * jnp.array([1.0, 10.0, 100.0, 1000.0]))

    np.testing.assert_allclose(np.asarray(tape.gradient(loss, x)), jax.grad(pure)(W), rtol=1e-6)
    v.assign(np.zeros(4, np.float32))
    gk.jit(lambda: assign_shifted(v, x))()
    np.testing.assert_allclose(v.numpy(), expected_assignments(), rtol=1e-6)


def test_a_state_slice_update_and_a_tensor_at_update_compiled():
    v = gk.Variable(np.zeros(4, np.float32))
    start = gk.State.of([v])  # read outside the compiled function, which takes its values as constants

    @jax.jit
    def through_state(w):
        state = start.assign(v, w[0] * 1.5)
        return state.at[v][1:].set(state[v][:3] * 2.0)[v]

    np.testing.assert_allclose(np.asarray(through_state(W)), expected_assignments(), rtol=1e-6)
    x = gk.Variable(W)
    with gk.GradientTape():
        h = x[0] * 1.5
        updated = h.at[1:].set(h[:3] * 2.0)
    np.testing.assert_allclose(updated.numpy(), expected_assignments(), rtol=1e-6)
