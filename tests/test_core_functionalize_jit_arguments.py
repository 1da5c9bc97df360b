"""``jax.jit`` around ``gk.functionalize``: it places ``donate_argnums``, ``static_argnums`` and
``static_argnames`` from the function's signature, which starts with the State. Oracle: the same
program written by hand as a pure function of its state."""

from __future__ import annotations

import inspect

import jax
import jax.numpy as jnp
import numpy as np

import gradkit as gk


def _pure(v, x, n):  # the hand-written rewrite of ``step`` below
    for _ in range(n):
        v = v * x
    return jnp.sum(v), v


def _setup():
    v = gk.Variable(jnp.array([1.0, 2.0]), name="v")

    def step(x, n):
        for _ in range(n):
            v.assign(v * x)
        return jnp.sum(v)

    return v, gk.functionalize(step)


def test_signature_starts_with_the_state():
    _, f = _setup()
    assert list(inspect.signature(f).parameters) == ["state", "x", "n"]


def test_static_argnums_and_argnames_count_the_state():
    want_out, want_v = _pure(jnp.array([1.0, 2.0]), 3.0, 2)
    for jit_args, call_kwargs in (
        ({"static_argnums": 2}, {}),
        ({"static_argnames": "n"}, {}),
        ({"static_argnames": "n"}, {"by_name": True}),
    ):
        v, f = _setup()
        jitted = jax.jit(f, **jit_args)
        state = gk.State.of([v])
        out, new = jitted(state, 3.0, n=2) if call_kwargs else jitted(state, 3.0, 2)
        np.testing.assert_allclose(out, want_out)
        np.testing.assert_allclose(new[v], want_v)


def test_donating_the_state_of_a_function_without_arguments():
    v = gk.Variable(jnp.array([1.0, 2.0]), name="v")

    def double():
        v.assign(v * 2)
        return jnp.sum(v)

    state = gk.State.of([v])
    out, new = jax.jit(gk.functionalize(double), donate_argnums=0)(state)
    np.testing.assert_allclose(out, 6.0)
    np.testing.assert_allclose(new[v], [2.0, 4.0])


def test_a_parameter_named_state_keeps_its_name():
    v = gk.Variable(1.0, name="v")

    def step(state):
        v.assign(v + state)
        return v * 1.0

    f = gk.functionalize(step)
    assert list(inspect.signature(f).parameters) == ["_state", "state"]
    out, new = jax.jit(f, static_argnames="state")(gk.State.of([v]), state=2.0)
    np.testing.assert_allclose([out, new[v]], [3.0, 3.0])
