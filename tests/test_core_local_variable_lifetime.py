"""A Variable a call creates and drops (a helper's accumulator) does not pass its value on to the
next one created in that call, which Python may give the same id: every transform and gk.jit
computes what the pure rewrite computes under jax."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gradkit as gk

XS = (1.0, 2.0, -0.5)


def _program():
    w = gk.Variable(2.0, name="w")

    def accumulate(scale):
        acc = gk.Variable(0.0, name="acc")  # starts at 0 at every call of the helper
        for x in XS:
            acc.assign_add(scale * w * x)
        return acc.value

    def loss(scale):
        return accumulate(scale) + accumulate(scale) ** 2 + accumulate(scale)

    return w, loss


def _pure(w, scale):
    a = scale * w * sum(XS)
    return a + a**2 + a


@pytest.mark.parametrize(
    "transform",
    ["value_and_grad", "jacfwd", "jacrev", "hessian", "jit", "vmap"],
)
def test_each_local_accumulator_starts_from_its_own_initial_value(transform):
    w, loss = _program()
    scale = 1.5
    if transform == "value_and_grad":
        got, want = gk.value_and_grad(loss, wrt=w)(scale), jax.value_and_grad(_pure)(2.0, scale)
    elif transform == "jacfwd":
        got, want = gk.jacfwd(loss, wrt=w)(scale), jax.grad(_pure)(2.0, scale)
    elif transform == "jacrev":
        got, want = gk.jacrev(loss, wrt=w)(scale), jax.grad(_pure)(2.0, scale)
    elif transform == "hessian":
        got, want = gk.hessian(loss, wrt=w)(scale), jax.hessian(_pure)(2.0, scale)
    elif transform == "jit":
        got, want = gk.jit(loss)(scale), _pure(2.0, scale)
    else:
        scales = jnp.array([0.5, 1.0, 1.5])
        got, want = gk.vmap(loss)(scales), jax.vmap(lambda s: _pure(2.0, s))(scales)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
    assert float(w.value) == 2.0
