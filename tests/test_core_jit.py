"""gk.jit: same results as the eager program, writes assignments back, and compiles once."""

import logging

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _oracles import ENTRY, Program, X, assert_close, pure_program

import gradkit as gk

N_CALLS = 1_000


@pytest.fixture
def compile_log(caplog):
    """The names of the functions XLA compiled while the test ran (jax_log_compiles)."""
    caplog.set_level(logging.WARNING)

    def compiled(name):
        # jax 0.10 logs "Compiling jit(f) ...", jax 0.6 "Compiling f ...".
        prefixes = (f"Compiling jit({name})", f"Compiling {name} ")
        return [r for r in caplog.records if r.getMessage().startswith(prefixes)]

    with jax.log_compiles(True):
        yield compiled


def test_jit_matches_pure_program_and_writes_back():
    prog = Program()
    out = gk.jit(prog.imperative)(X)
    want_out, final = pure_program(ENTRY, X)
    assert_close(out, want_out)
    assert_close([v.value for v in prog.variables], [final["u"], final["m"], final["s"]])


def test_jit_step_compiles_once_over_many_calls(compile_log):
    w = gk.Variable(np.zeros(3, np.float32), name="w")
    total = gk.Variable(0.0, name="total")
    lr = 0.1

    @gk.jit
    def step(x, y):
        loss_grad = gk.grad(lambda: jnp.mean((w @ x - y) ** 2), wrt=w)()
        w.assign_sub(lr * loss_grad)
        total.assign_add(jnp.mean((w @ x - y) ** 2))
        return total

    # The same loop, written as a pure function of (w, total): the oracle.
    def pure_step(wv, tv, x, y):
        wv = wv - lr * jax.grad(lambda wv: jnp.mean((wv @ x - y) ** 2))(wv)
        return wv, tv + jnp.mean((wv @ x - y) ** 2)

    rng = np.random.default_rng(0)
    xs = rng.normal(size=(N_CALLS, 3, 4)).astype(np.float32)
    ys = rng.normal(size=(N_CALLS, 4)).astype(np.float32)
    step(xs[0], ys[0])
    traces_after_first_call = step.trace_count
    for i in range(1, N_CALLS):
        step(xs[i], ys[i])

    # Nothing traces again after the first call, and XLA compiled the step exactly once.
    assert step.trace_count == traces_after_first_call
    assert len(compile_log("_pure")) == 1

    wv, tv = jnp.zeros(3), jnp.float32(0.0)
    jitted_pure = jax.jit(pure_step)
    for i in range(N_CALLS):
        wv, tv = jitted_pure(wv, tv, xs[i], ys[i])
    assert_close((w.value, total.value), (wv, tv), rtol=1e-4, atol=1e-4)


def test_jax_jit_over_functionalize_traces_once():
    w = gk.Variable(np.zeros(3, np.float32), name="w")
    traces = []

    def step(x):
        traces.append(1)
        w.assign(w * 0.5 + x)
        return jnp.sum(w)

    pure = jax.jit(gk.functionalize(step))
    state = gk.State.of([w])
    want = np.zeros(3, np.float32)
    for i in range(N_CALLS):
        x = np.full(3, i % 7, np.float32)
        _, state = pure(state, x)
        want = want * 0.5 + x
    assert len(traces) == 1
    assert_close(state[w], want)
    assert_close(w.value, np.zeros(3, np.float32))  # no commit, no change


def test_jit_learns_variables_read_in_a_new_branch():
    a, b = gk.Variable(1.0, name="a"), gk.Variable(10.0, name="b")

    @gk.jit(static_argnums=0)
    def read(which):
        return a * 2.0 if which == "a" else b * 2.0

    assert float(read("a")) == 2.0
    assert float(read("b")) == 20.0
    # Both Variables are now inputs of the program, not baked-in constants.
    a.assign(3.0)
    b.assign(30.0)
    assert (float(read("a")), float(read("b"))) == (6.0, 60.0)


def test_jit_failure_mid_function_changes_nothing():
    a, b = gk.Variable(1.0, name="a"), gk.Variable(jnp.ones(2), name="b")

    @gk.jit
    def step(x):
        a.assign_add(x)
        b.assign(jnp.ones(3))  # wrong shape: raises while tracing, after a's assignment
        return a

    with pytest.raises(gk.AssignmentError, match=r"^\[gradkit\] cannot assign a value of shape \(3,\)"):
        step(1.0)
    assert float(a.value) == 1.0
    np.testing.assert_array_equal(b.numpy(), np.ones(2))


def test_jit_method():
    class Counter:
        def __init__(self):
            self.n = gk.Variable(0.0, name="n")

        @gk.jit
        def add(self, x):
            self.n.assign_add(x)
            return self.n * 1.0

    c = Counter()
    c.add(2.0)
    assert float(c.add(3.0)) == 5.0
    assert float(c.n.value) == 5.0


def test_a_result_jax_cannot_return_is_refused_naming_the_function():
    def labelled(x):
        return {"value": x * 2.0, "label": "double"}

    with pytest.raises(TypeError, match=r"^\[gradkit\] gk.jit\(labelled\) returned a str at output\['label'\]"):
        gk.jit(labelled)(1.0)
    out = gk.jit(lambda x: {"value": x * 2.0, "n": 3, "none": None})(1.0)
    assert float(out["value"]) == 2.0 and int(out["n"]) == 3 and out["none"] is None
