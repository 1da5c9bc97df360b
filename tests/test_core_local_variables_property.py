"""Property: a random program over Variables it creates itself (local Variables) computes, under
gk.vmap, gk.jit and jax.grad, what its pure rewrite computes under jax.vmap and jax.grad.

The programs are those of test_core_property.py. Here the Variables are created inside the
function, from the function's (batched, traced) input or from constants that then take it in by
assign_add; the pure rewrite threads a dict of arrays instead.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from _oracles import assert_close
from hypothesis import given, settings
from test_core_property import SIZE, ArrayStore, VariableStore, interpret, programs

import gradkit as gk

BATCH = 3


def _entries(n_vars, seed):
    return list(np.random.default_rng(seed).uniform(-1.5, 1.5, size=(n_vars, SIZE)).astype(np.float32))


def _with_locals(steps, n_vars, entry):
    def per_example(x):  # x: (n_vars, SIZE), one example
        # Even ones start from the traced input itself, odd ones from a constant and take it in.
        variables = [gk.Variable(e + x[k] if k % 2 == 0 else e, name=f"local{k}") for k, e in enumerate(entry)]
        for k, v in enumerate(variables):
            if k % 2:
                v.assign_add(x[k])
        return interpret(steps, VariableStore(variables), n_vars)

    return per_example


def _pure(steps, n_vars, entry):
    def per_example(x):
        return interpret(steps, ArrayStore([jnp.asarray(e) + x[k] for k, e in enumerate(entry)]), n_vars)

    return per_example


@settings(max_examples=15, deadline=None)
@given(programs())
def test_local_variables_under_vmap_jit_and_grad_match_the_pure_rewrite(program):
    n_vars, steps, _, seed = program
    entry = _entries(n_vars, seed)
    xs = jnp.asarray(np.random.default_rng(seed + 1).normal(size=(BATCH, n_vars, SIZE)).astype(np.float32))
    mine, pure = _with_locals(steps, n_vars, entry), _pure(steps, n_vars, entry)

    want = jax.vmap(pure)(xs)
    assert_close(gk.vmap(mine)(xs), want, rtol=1e-4, atol=1e-5)
    assert_close(jax.jit(gk.vmap(mine))(xs), want, rtol=1e-4, atol=1e-5)

    want_grad = jax.grad(lambda z: jnp.sum(jax.vmap(pure)(z)))(xs)
    got_grad = jax.grad(lambda z: jnp.sum(gk.vmap(mine)(z)))(xs)
    assert_close(got_grad, want_grad, rtol=1e-4, atol=1e-5)

    # One example through gk.jit (the Variables are created while it traces) and gk.grad.
    step = gk.jit(mine)
    assert_close(step(xs[0]), pure(xs[0]), rtol=1e-4, atol=1e-5)
    assert_close(gk.grad(mine)(xs[0]), jax.grad(pure)(xs[0]), rtol=1e-4, atol=1e-5)
