"""``State.at[v][i].get()`` refuses an index outside its axis as ``.set`` does (jax's ``mode=`` on
request); ``gk.apply_updates`` on a State refuses a float update of an integer Variable as the live
path does; a gradkit transform under a plain ``jax.jit`` warns when it reads a Variable it does not
take (its value becomes a constant of jax's program). Oracles: NumPy indexing and jax's modes, the
live-Variable path, and jax.jit's reuse of a stale constant, shown by the second call."""

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

import gradkit as gk
from gradkit._errors import AssignmentError


def test_state_get_refuses_an_index_outside_its_axis():
    v = gk.Variable(jnp.arange(3.0))
    state = gk.State.of([v])
    np.testing.assert_array_equal(state.at[v][1:].get(), np.arange(3.0)[1:])
    with pytest.raises(IndexError, match=r"\[gradkit\] index 5 is out of bounds for axis 0 with size 3"):
        state.at[v][5].get()
    assert float(state.at[v][5].get(mode="fill", fill_value=-1.0)) == -1.0  # jax's mode, as asked
    assert float(jax.jit(lambda s: s.at[v][jnp.array(1)].get())(state)) == 1.0


def test_apply_updates_to_a_state_refuses_a_float_update_of_an_int_variable():
    count, w = gk.Variable(0, name="count"), gk.Variable(jnp.ones(2))
    params = gk.State.of([w, count])
    opt = optax.sgd(1.0)
    updates, _ = opt.update(jax.tree.map(lambda p: jnp.full(jnp.shape(p), -0.7), params), opt.init(params))
    with pytest.raises(AssignmentError, match=r"float32 to Variable 'count' of dtype int32"):
        gk.apply_updates(params, updates)
    with pytest.raises(AssignmentError, match=r"float32 to Variable 'count' of dtype int32"):
        gk.apply_updates([w, count], [updates[w], updates[count]])  # the live path, the oracle
    floats = gk.State.of([w])
    updates, _ = opt.update(gk.State({w: jnp.full(2, -0.7)}), opt.init(floats))
    np.testing.assert_allclose(gk.apply_updates(floats, updates)[w], [1.7, 1.7])


@pytest.mark.parametrize(
    "transform, x",
    [(gk.grad, jnp.float32(1.0)), (gk.vmap, jnp.ones(2)), (gk.jacrev, jnp.float32(1.0))],
    ids=["grad", "vmap", "jacrev"],
)
def test_a_transform_under_plain_jax_jit_warns_when_it_reads_a_variable_it_does_not_take(transform, x):
    u = gk.Variable(3.0, name="u")
    compiled = jax.jit(transform(lambda x: x * u))
    with pytest.warns(gk.GradkitWarning, match=r"Variable 'u' was read inside jax.jit .* by a gradkit transform"):
        first = compiled(x)
    u.assign(30.0)
    # The warning's reason: jax reuses the program with u's old value as a constant.
    np.testing.assert_allclose(compiled(x), first)


def test_no_warning_where_gradkit_passes_the_variable_in():
    u = gk.Variable(3.0, name="u")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert float(gk.grad(lambda x: x * u)(1.0)) == 3.0
        assert float(gk.jit(gk.grad(lambda x: x * u))(1.0)) == 3.0
        np.testing.assert_allclose(gk.jit(gk.vmap(lambda x: x * u))(jnp.ones(2)), [3.0, 3.0])


def test_a_functionalized_function_under_jax_jit_warns_for_a_variable_outside_its_state():
    u, w = gk.Variable(3.0, name="u"), gk.Variable(1.0, name="w")
    pure = gk.functionalize(lambda x: x * u * w)
    compiled = jax.jit(lambda state, x: pure(state, x))
    with pytest.warns(gk.GradkitWarning, match=r"Variable 'u' was read inside jax.jit .* by a gradkit transform"):
        first, _ = compiled(gk.State.of([w]), jnp.float32(2.0))
    u.assign(30.0)
    again, _ = compiled(gk.State.of([w]), jnp.float32(2.0))
    np.testing.assert_allclose(again, first)  # u's old value, a constant of jax's program
