"""gk.jit called as jax.jit is: arguments by keyword, static arguments either way, under
jax.vmap, and lowered before its first call. The oracle is jax.jit (or a pure-JAX rewrite)
of the same program."""

import jax
from _oracles import assert_close

import gradkit as gk


def test_a_parameter_named_state_can_be_passed_by_keyword():
    def scale(x, state):
        return x * state

    assert_close(gk.jit(scale)(2.0, state=3.0), jax.jit(scale)(2.0, state=3.0))
