"""``state.at[v][idx]``'s ``subtract``, ``divide``, ``power`` and ``apply``, against jax's own
``.at`` updates of the same array, values and gradients (``check_grads``, both modes, order 2)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

import gradkit as gk

_INDICES = [1, slice(0, 2), (Ellipsis,), np.array([0, 2])]
_HOW = {
    "subtract": 0.5,
    "divide": 4.0,
    "power": 2.0,
}


@pytest.mark.parametrize("how", sorted(_HOW))
@pytest.mark.parametrize("index", range(len(_INDICES)))
def test_state_at_arithmetic_matches_jax(how, index):
    idx = _INDICES[index]
    v = gk.Variable(jnp.array([1.0, 2.0, 3.0]))
    state = gk.State({v: v.value})
    got = getattr(state.at[v][idx], how)(_HOW[how])[v]
    want = getattr(jnp.array([1.0, 2.0, 3.0]).at[idx], how)(_HOW[how])
    np.testing.assert_allclose(got, want, rtol=1e-6)

    def through_state(x, u):
        return jnp.sum(getattr(gk.State({v: x}).at[v][idx], how)(u)[v] ** 2)

    def through_jax(x, u):
        return jnp.sum(getattr(x.at[idx], how)(u) ** 2)

    if how != "subtract" and isinstance(idx, np.ndarray):
        return  # jax differentiates a multiplying scatter only with unique_indices=True
    x, u = jnp.array([1.0, 2.0, 3.0]), jnp.asarray(_HOW[how])
    for a, b in zip(jax.grad(through_state, (0, 1))(x, u), jax.grad(through_jax, (0, 1))(x, u)):
        np.testing.assert_allclose(a, b, rtol=1e-5)
    check_grads(through_state, (x, u), order=2, modes=("fwd", "rev"), atol=5e-2, rtol=5e-2, eps=1e-2)


def test_state_at_apply_matches_jax():
    v = gk.Variable(jnp.array([1.0, 2.0, 3.0]))
    got = gk.State({v: v.value}).at[v][1:].apply(jnp.sin)[v]
    np.testing.assert_allclose(got, jnp.array([1.0, 2.0, 3.0]).at[1:].apply(jnp.sin), rtol=1e-6)
    assert float(v.value[1]) == 2.0  # a State update leaves the Variable alone


def test_state_at_divide_refuses_an_integer_variable():
    v = gk.Variable(jnp.arange(4))
    with pytest.raises(gk.AssignmentError, match="floor-divide"):
        gk.State({v: v.value}).at[v][1:].divide(2)
    got = gk.State({v: v.value}).at[v][1:].apply(lambda x: x // 2)[v]
    np.testing.assert_array_equal(got, [0, 0, 1, 1])  # the floor division it suggests, by hand
