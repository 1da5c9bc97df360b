"""The program walks (``dependence``, ``batch_independence``) step into a call whatever name
the installed jax gives it: ``pjit`` (jax < 0.7) or ``jit``, ``closed_call`` or ``eval_jaxpr``
(jax 0.12), ``custom_vjp_call_jaxpr`` (jax 0.6.0) or ``custom_vjp_call``.

Only one jax is installed, so the other names are made by renaming the call equation of a
traced ``jax.jit`` (its body moved to the parameter that version uses); the walks read a
call's name and body only. Oracles: hand derivations of what each output reads.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.extend.core import Primitive

from gradkit._tape import dependence
from gradkit._tape.batch_independence import MIXED, function_rows_independent, walk

B, S = 5, 3

PLAIN_CALLS = [("pjit", "jaxpr"), ("jit", "jaxpr"), ("closed_call", "call_jaxpr"), ("eval_jaxpr", "call_jaxpr")]
CUSTOM_CALLS = [
    ("custom_vjp_call_jaxpr", "fun_jaxpr"),
    ("custom_vjp_call", "call_jaxpr"),
    ("custom_jvp_call", "call_jaxpr"),
]


def _with_call_named(fn, args, name, body_param):
    """The program of ``jax.jit(fn)(*args)``, its one call equation renamed ``name`` with its body
    under ``body_param``."""
    closed = jax.make_jaxpr(jax.jit(fn))(*args)
    (eqn,) = closed.jaxpr.eqns
    renamed = eqn.replace(primitive=Primitive(name), params={body_param: eqn.params["jaxpr"]})
    return closed.jaxpr.replace(eqns=[renamed])


@pytest.mark.parametrize("name, body_param", PLAIN_CALLS)
def test_dependence_reads_each_output_of_a_call_from_its_body(name, body_param):
    jaxpr = _with_call_named(lambda a, b: (jnp.sin(a), a * b), (1.0, 2.0), name, body_param)
    # sin(a) reads a alone; a * b reads a and b (bit i: input i).
    assert dependence._walk(jaxpr, [0b01, 0b10]) == [0b01, 0b11]


@pytest.mark.parametrize("name, body_param", PLAIN_CALLS + CUSTOM_CALLS)
def test_batch_independence_follows_the_examples_through_a_call(name, body_param):
    x = jax.ShapeDtypeStruct((B, S), jnp.float32)
    keep = _with_call_named(lambda h: jnp.tanh(h) * 2.0, (x,), name, body_param)
    mix = _with_call_named(lambda h: h - jnp.mean(h, axis=0, keepdims=True), (x,), name, body_param)
    # tanh(h) * 2 keeps example i in row i; subtracting the batch mean reads every example.
    assert walk(keep, [0], B) == [0]
    assert walk(mix, [0], B) == [MIXED]


@pytest.mark.skipif(not hasattr(jax.lax, "polynomial"), reason="jax.lax.polynomial is new in jax 0.12")
def test_a_polynomial_with_per_example_coefficients_keeps_examples_apart():
    coeffs = [1.0, np.linspace(-1.0, 1.0, B * S, dtype=np.float32).reshape(B, S), 0.5]

    def f(x):
        return jax.lax.polynomial(x, coeffs)

    x = np.linspace(-2.0, 2.0, B * S, dtype=np.float32).reshape(B, S)
    assert function_rows_independent(lambda _, h: f(h), [], jax.ShapeDtypeStruct((B, S), jnp.float32), True)
    # Oracle: the full Jacobian has no block between two different examples.
    full = np.asarray(jax.jacrev(f)(x))
    for i in range(B):
        for j in range(B):
            if i != j:
                assert not full[i, :, j, :].any()
