"""gk.jit called as jax.jit is: arguments by keyword, static arguments either way, under
jax.vmap, and lowered before its first call. The oracle is jax.jit (or a pure-JAX rewrite)
of the same program."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _oracles import assert_close, assert_unchanged, snapshot

import gradkit as gk


def test_a_parameter_named_state_can_be_passed_by_keyword():
    def scale(x, state):
        return x * state

    assert_close(gk.jit(scale)(2.0, state=3.0), jax.jit(scale)(2.0, state=3.0))


def power(x, n):
    y = x
    for _ in range(n - 1):  # needs n as a Python int
        y = y * x
    return y


@pytest.mark.parametrize(
    "static, call",
    [
        ({"static_argnums": 1}, lambda f: f(2.0, n=3)),  # static by position, passed by keyword
        ({"static_argnames": "n"}, lambda f: f(2.0, 3)),  # static by name, passed by position
    ],
    ids=["argnums-by-keyword", "argnames-by-position"],
)
def test_static_arguments_are_static_however_they_are_passed(static, call):
    assert_close(call(gk.jit(power, **static)), call(jax.jit(power, **static)))


def test_static_argument_of_a_method_passed_by_keyword():
    class Model:
        def __init__(self):
            self.k = gk.Variable(2.0, name="k")

        @gk.jit(static_argnums=2)  # self is argument 0
        def power(self, x, n):
            return self.k * power(x, n)

    assert_close(Model().power(2.0, n=3), jnp.float32(2.0 * 8.0))


def test_a_refused_write_back_under_jax_vmap_changes_no_variable():
    # a's new value does not depend on the mapped argument, w's does: jax.vmap hands a's back
    # as a plain array and w's as a tracer, which no live Variable may keep.
    a, w = gk.Variable(0.0, name="a"), gk.Variable(jnp.zeros(3), name="w")

    @gk.jit
    def step(x):
        a.assign(a + 1.0)
        w.assign(w + x)
        return jnp.sum(w)

    before = snapshot([a, w])
    with pytest.raises(gk.AssignmentError, match=r"^\[gradkit\]"):
        jax.vmap(step)(jnp.ones((2, 3)))
    assert_unchanged([a, w], before)


def test_lowering_before_the_first_call_bakes_in_no_variable():
    v, w = gk.Variable(1.0, name="v"), gk.Variable(jnp.ones(2), name="w")
    f = gk.jit(lambda x: v * x + jnp.sum(w))

    def oracle(x):
        return v.numpy() * x + np.sum(w.numpy())

    f.lower(1.0)
    assert_close(f(1.0), jnp.float32(oracle(1.0)))
    v.assign(5.0)
    w.assign(jnp.full(2, 10.0))
    assert_close(f(1.0), jnp.float32(oracle(1.0)))


def test_reads_a_value_a_tape_left_pending_and_writes_back_per_branch():
    a, b = gk.Variable(1.0, name="a"), gk.Variable(2.0, name="b")

    @gk.jit(static_argnums=0)
    def step(which, x):
        target = a if which == "a" else b
        target.assign(target * x + a)
        return a + b

    def oracle(av, bv, which, x):  # the pure rewrite: (a, b) -> (a', b')
        return (av * x + av, bv) if which == "a" else (av, bv * x + av)

    want = (1.0, 2.0)
    for which, x in [("a", 3.0), ("b", 2.0), ("a", 0.5), ("b", 4.0)]:
        with gk.GradientTape():
            a.assign(a * 2.0)  # a's live value is left pending when the tape stops
        want = oracle(want[0] * 2.0, want[1], which, x)
        out = step(which, x)
        assert_close((a.numpy(), b.numpy()), tuple(np.float32(w) for w in want))
        assert_close(out, jnp.float32(want[0] + want[1]))
