"""Property: any imperative program over Variables has gk.grad equal to jax.grad of its pure rewrite.

Hypothesis generates a program: a few Variables of shape (4,), a random sequence of steps
(an elementwise op making a new value from current ones, a whole assign / assign_add /
assign_sub, or a slice assignment ``v[i:j].assign(...)``) and a scalar loss over the final
values and the temporaries. One interpreter runs it against two stores: live gk.Variables
under gk.grad, and a dict of arrays threaded through a pure function under jax.grad. The
store is the only difference, so the two agree exactly when assignment is a pure state step.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from _oracles import assert_close
from hypothesis import given, settings
from hypothesis import strategies as st

import gradkit as gk

SIZE = 4
UNARY = {"sin": jnp.sin, "tanh": jnp.tanh, "square": jnp.square, "cos": jnp.cos}
BINARY = {"add": jnp.add, "sub": jnp.subtract, "mul": jnp.multiply}


@st.composite
def programs(draw):
    n_vars = draw(st.integers(2, 3))
    steps = []
    n_temps = 0
    for _ in range(draw(st.integers(1, 8))):
        # An operand: ("var", k) reads Variable k's current value, ("tmp", t) an earlier result.
        operand = st.one_of(
            st.tuples(st.just("var"), st.integers(0, n_vars - 1)),
            *([st.tuples(st.just("tmp"), st.integers(0, n_temps - 1))] if n_temps else []),
        )
        kind = draw(st.sampled_from(["unary", "binary", "assign", "slice"]))
        if kind == "unary":
            steps.append(("unary", draw(st.sampled_from(sorted(UNARY))), draw(operand)))
            n_temps += 1
        elif kind == "binary":
            steps.append(("binary", draw(st.sampled_from(sorted(BINARY))), draw(operand), draw(operand)))
            n_temps += 1
        elif kind == "assign":
            how = draw(st.sampled_from(["assign", "assign_add", "assign_sub"]))
            steps.append(("assign", how, draw(st.integers(0, n_vars - 1)), draw(operand)))
        else:
            start = draw(st.integers(0, SIZE - 1))
            stop = draw(st.integers(start + 1, SIZE))
            steps.append(("slice", draw(st.integers(0, n_vars - 1)), start, stop, draw(operand)))
    wrt_mask = draw(st.lists(st.booleans(), min_size=n_vars, max_size=n_vars).filter(any))
    seed = draw(st.integers(0, 2**16))
    return n_vars, steps, wrt_mask, seed


class VariableStore:
    """Reads and writes live gk.Variables (under gk.grad, they thread through its State)."""

    def __init__(self, variables):
        self.variables = variables

    def read(self, k):
        return self.variables[k].value

    def write(self, k, how, value):
        getattr(self.variables[k], how)(value)

    def write_slice(self, k, start, stop, value):
        self.variables[k][start:stop].assign(value)


class ArrayStore:
    """The pure rewrite: a dict of arrays, each write replacing an entry."""

    def __init__(self, values):
        self.values = dict(enumerate(values))

    def read(self, k):
        return self.values[k]

    def write(self, k, how, value):
        old = self.values[k]
        self.values[k] = {"assign": value, "assign_add": old + value, "assign_sub": old - value}[how]

    def write_slice(self, k, start, stop, value):
        self.values[k] = self.values[k].at[start:stop].set(value)


def interpret(steps, store, n_vars):
    temps = []

    def value_of(operand):
        kind, i = operand
        return store.read(i) if kind == "var" else temps[i]

    for step in steps:
        if step[0] == "unary":
            temps.append(UNARY[step[1]](value_of(step[2])))
        elif step[0] == "binary":
            temps.append(BINARY[step[1]](value_of(step[2]), value_of(step[3])))
        elif step[0] == "assign":
            store.write(step[2], step[1], value_of(step[3]))
        else:
            _, k, start, stop, operand = step
            store.write_slice(k, start, stop, value_of(operand)[start:stop])
    # Weight each final value differently so that swapping two Variables changes the loss.
    loss = sum(jnp.sum(jnp.sin(store.read(k)) * (k + 1.0)) for k in range(n_vars))
    return loss + sum(jnp.sum(jnp.tanh(t)) for t in temps)


@settings(max_examples=30, deadline=None)
@given(programs())
def test_random_programs_match_pure_rewrite(program):
    n_vars, steps, wrt_mask, seed = program
    entry = list(np.random.default_rng(seed).uniform(-1.5, 1.5, size=(n_vars, SIZE)).astype(np.float32))
    variables = [gk.Variable(x, name=f"v{k}") for k, x in enumerate(entry)]
    wrt = [v for v, use in zip(variables, wrt_mask) if use]

    got = gk.grad(lambda: interpret(steps, VariableStore(variables), n_vars), wrt=wrt)()

    want_all = jax.grad(lambda vals: interpret(steps, ArrayStore(vals), n_vars))([jnp.asarray(x) for x in entry])
    want = [g for g, use in zip(want_all, wrt_mask) if use]
    assert_close(got, want, rtol=1e-4, atol=1e-5)
    # Differentiating assigned nothing.
    for v, x in zip(variables, entry):
        np.testing.assert_array_equal(v.numpy(), x)
