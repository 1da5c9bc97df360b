"""Random recorded programs: the tape gradient equals jax.grad of the program's pure rewrite.

A program is a list of steps over three Variables of shape (3,) and a list of registers
(temporaries). One interpreter runs it on gk.Variables under one or two tapes; another runs the
same steps as a pure function of the Variables' entry values, threading assignments through a
dict, with ``jax.lax.stop_gradient`` for ``gk.stop_gradient`` and for every value produced under
a ``stop_recording`` block of the tape being checked. The pure interpreter also carries, per
value, the set of entry variables it structurally depends on: a gradient must be None exactly
when the loss does not depend on that variable.
"""

from __future__ import annotations

import contextlib

import jax
import jax.numpy as jnp
import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import gradkit as gk

gnp = gk.numpy
N_VARS = 3
SETTINGS = settings(max_examples=20, deadline=None, derandomize=True, database=None)

UNARY = {
    "sin": (gnp.sin, jnp.sin),
    "tanh": (gnp.tanh, jnp.tanh),
    "square": (gnp.square, jnp.square),
    "exp": (lambda x: gnp.exp(0.3 * gnp.tanh(x)), lambda x: jnp.exp(0.3 * jnp.tanh(x))),
}
BINARY = {
    "add": lambda a, b: a + b,
    "mul": lambda a, b: a * b,
    "sub": lambda a, b: a - b,
}

# A Python float operand: the program's scales[k], a runtime value (the same program run
# with other scales must give their answer, not the first run's).
SCALE = {
    "mul": lambda x, c: x * c,
    "add": lambda x, c: x + c,
    "rsub": lambda x, c: c - x,
    "div": lambda x, c: x / c,
}

operand = st.tuples(st.sampled_from(["var", "reg"]), st.integers(0, 7))
simple_step = st.one_of(
    st.tuples(st.just("unary"), st.sampled_from(sorted(UNARY)), operand),
    st.tuples(st.just("scale"), st.sampled_from(sorted(SCALE)), st.integers(0, 2), operand),
    st.tuples(st.just("binary"), st.sampled_from(sorted(BINARY)), operand, operand),
    st.tuples(st.just("assign"), st.sampled_from(["assign", "assign_add", "assign_sub"]), st.integers(0, 2), operand),
    st.tuples(st.just("slice_assign"), st.integers(0, 2), operand),
)
step = st.one_of(
    simple_step,
    st.tuples(st.just("stop_gradient"), operand),
    st.tuples(st.just("stop_recording"), st.integers(0, 1), st.lists(simple_step, min_size=1, max_size=3)),
)
entries = st.lists(
    st.lists(st.floats(-1.0, 1.0, width=32), min_size=3, max_size=3), min_size=N_VARS, max_size=N_VARS
).map(lambda v: np.asarray(v, np.float32))
programs = st.fixed_dictionaries(
    {
        "steps": st.lists(step, min_size=1, max_size=5),
        "loss_vars": st.lists(st.integers(0, 2), min_size=1, max_size=3, unique=True),
        "loss_regs": st.booleans(),
        "n_tapes": st.integers(1, 2),
        "entry": entries,
        "scales": st.lists(st.floats(0.25, 2.0, width=32), min_size=3, max_size=3),
    }
)


# --- gradkit interpreter ----------------------------------------------------------------------------


def _gk_operand(op, vs, regs):
    kind, i = op
    if kind == "reg" and regs:
        return regs[i % len(regs)]
    return vs[i % N_VARS]


def _gk_step(s, vs, regs, tapes, scales):
    kind = s[0]
    if kind == "unary":
        regs.append(UNARY[s[1]][0](_gk_operand(s[2], vs, regs)))
    elif kind == "scale":
        regs.append(SCALE[s[1]](gnp.tanh(_gk_operand(s[3], vs, regs)), float(scales[s[2]])))
    elif kind == "binary":
        regs.append(BINARY[s[1]](gnp.tanh(_gk_operand(s[2], vs, regs)), _gk_operand(s[3], vs, regs)))
    elif kind == "assign":
        getattr(vs[s[2]], s[1])(gnp.tanh(_gk_operand(s[3], vs, regs)))
    elif kind == "slice_assign":
        vs[s[1]][:2].assign(gnp.sin(_gk_operand(s[2], vs, regs))[:2])
    elif kind == "stop_gradient":
        regs.append(gk.stop_gradient(gnp.sin(_gk_operand(s[1], vs, regs))))
    elif kind == "stop_recording":
        tape = tapes[s[1] % len(tapes)]
        with tape.stop_recording():
            for sub in s[2]:
                _gk_step(sub, vs, regs, tapes, scales)


def run_gradkit(prog, scales):
    vs = [gk.Variable(prog["entry"][i], name=f"v{i}") for i in range(N_VARS)]
    tapes = [gk.GradientTape() for _ in range(prog["n_tapes"])]
    regs: list = []
    with contextlib.ExitStack() as stack:
        for t in tapes:  # tapes[0] is the outermost
            stack.enter_context(t)
            t.watch(vs)
        for s in prog["steps"]:
            _gk_step(s, vs, regs, tapes, scales)
        loss = gnp.sum(gnp.square(vs[prog["loss_vars"][0]]))
        for i in prog["loss_vars"][1:]:
            loss = loss + gnp.sum(gnp.square(vs[i]))
        if prog["loss_regs"] and regs:
            loss = loss + gnp.sum(gnp.tanh(regs[-1]))
    grads = [t.gradient(loss, vs) for t in tapes]
    finals = [np.asarray(v.value) for v in vs]
    return grads, finals, float(loss)


# --- pure interpreter -------------------------------------------------------------------------------


def _p_operand(op, env, regs):
    kind, i = op
    if kind == "reg" and regs:
        return regs[i % len(regs)]
    return env[i % N_VARS]


def _cut(val):
    return (jax.lax.stop_gradient(val[0]), frozenset())


def _p_step(s, env, regs, tape, n_tapes, cut, scales):
    """``cut``: this step runs under a stop_recording block of the tape being checked."""
    kind = s[0]
    out = _cut if cut else (lambda v: v)
    if kind == "unary":
        x = _p_operand(s[2], env, regs)
        regs.append(out((UNARY[s[1]][1](x[0]), x[1])))
    elif kind == "scale":
        x = _p_operand(s[3], env, regs)
        regs.append(out((SCALE[s[1]](jnp.tanh(x[0]), jnp.float32(scales[s[2]])), x[1])))
    elif kind == "binary":
        a, b = _p_operand(s[2], env, regs), _p_operand(s[3], env, regs)
        regs.append(out((BINARY[s[1]](jnp.tanh(a[0]), b[0]), a[1] | b[1])))
    elif kind == "assign":
        i, x = s[2], _p_operand(s[3], env, regs)
        new = jnp.tanh(x[0])
        if s[1] == "assign":
            env[i] = out((new, x[1]))
        elif s[1] == "assign_add":
            env[i] = out((env[i][0] + new, env[i][1] | x[1]))
        else:
            env[i] = out((env[i][0] - new, env[i][1] | x[1]))
    elif kind == "slice_assign":
        i, x = s[1], _p_operand(s[2], env, regs)
        # Under stop_recording the scatter itself is unrecorded: the whole new value is a constant.
        env[i] = out((env[i][0].at[:2].set(jnp.sin(x[0])[:2]), env[i][1] | x[1]))
    elif kind == "stop_gradient":
        x = _p_operand(s[1], env, regs)
        regs.append(_cut((jnp.sin(x[0]), x[1])))
    elif kind == "stop_recording":
        mine = (s[1] % n_tapes) == tape
        for sub in s[2]:
            _p_step(sub, env, regs, tape, n_tapes, cut or mine, scales)


def run_pure(prog, entry, tape, scales):
    env = {i: (entry[i], frozenset([i])) for i in range(N_VARS)}
    regs: list = []
    for s in prog["steps"]:
        _p_step(s, env, regs, tape, prog["n_tapes"], False, scales)
    loss = jnp.zeros((), jnp.float32)
    deps = frozenset()
    for i in prog["loss_vars"]:
        loss = loss + jnp.sum(jnp.square(env[i][0]))
        deps |= env[i][1]
    if prog["loss_regs"] and regs:
        loss = loss + jnp.sum(jnp.tanh(regs[-1][0]))
        deps |= regs[-1][1]
    return loss, deps, [env[i][0] for i in range(N_VARS)]


@SETTINGS
@given(programs)
def test_random_program_gradient_matches_pure_rewrite(prog):
    # Twice: the second run, with other float operands, reuses the first run's programs.
    for scales in (prog["scales"], [1.5 - 0.5 * c for c in prog["scales"]]):
        _check_against_pure_rewrite(prog, scales)


def _check_against_pure_rewrite(prog, scales):
    grads, finals, loss = run_gradkit(prog, scales)
    entry = [jnp.asarray(e) for e in prog["entry"]]
    for tape_index, got in enumerate(grads):
        value, deps, final_state = run_pure(prog, entry, tape_index, scales)
        expected = jax.grad(lambda e, t=tape_index: run_pure(prog, e, t, scales)[0])(entry)
        np.testing.assert_allclose(loss, float(value), rtol=1e-5, atol=1e-5)
        for i in range(N_VARS):
            if i in deps:
                assert got[i] is not None, (tape_index, i)
                np.testing.assert_allclose(got[i].numpy(), np.asarray(expected[i]), rtol=1e-4, atol=1e-5)
            else:
                assert got[i] is None, (tape_index, i)
        # The live Variables hold the program's final state once the tapes stop.
        for i in range(N_VARS):
            np.testing.assert_allclose(finals[i], np.asarray(final_state[i]), rtol=1e-5, atol=1e-6)


# --- second order ----------------------------------------------------------------------------------

scalar_step = st.one_of(
    st.tuples(st.just("unary"), st.sampled_from(sorted(UNARY))),
    st.tuples(
        st.just("assign"), st.sampled_from(["assign", "assign_add", "assign_sub"]), st.sampled_from(sorted(UNARY))
    ),
    st.tuples(st.just("mul_x")),
)


def _second_order_program(kind, steps):
    """Returns (gradkit body, pure function) for a scalar chain over Variables x and y."""

    def body(x, y):
        h = x * 1.0
        for s in steps:
            if s[0] == "unary":
                h = UNARY[s[1]][0](h)
            elif s[0] == "assign":
                getattr(y, s[1])(UNARY[s[2]][0](h))
                h = h + y
            else:
                h = h * x
        return h * x

    def pure(xv, yv):
        h = xv * 1.0
        for s in steps:
            if s[0] == "unary":
                h = UNARY[s[1]][1](h)
            elif s[0] == "assign":
                new = UNARY[s[2]][1](h)
                yv = new if s[1] == "assign" else (yv + new if s[1] == "assign_add" else yv - new)
                h = h + yv
            else:
                h = h * xv
        return h * xv

    return body, pure


@SETTINGS
@given(
    st.lists(scalar_step, min_size=1, max_size=5),
    st.floats(-1.0, 1.0, width=32),
    st.floats(-1.0, 1.0, width=32),
)
def test_nested_tapes_second_derivative_is_hessian(steps, x0, y0):
    body, pure = _second_order_program("scalar", steps)
    x, y = gk.Variable(np.float32(x0), name="x"), gk.Variable(np.float32(y0), name="y")
    with gk.GradientTape() as outer:
        with gk.GradientTape() as inner:
            out = body(x, y)
        g = inner.gradient(out, x)
    h = outer.gradient(g, x, unconnected_gradients="zero")
    xs, ys = jnp.float32(x0), jnp.float32(y0)
    np.testing.assert_allclose(g.numpy(), jax.grad(pure)(xs, ys), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(h.numpy(), jax.hessian(pure)(xs, ys), rtol=1e-4, atol=1e-4)


@SETTINGS
@given(
    st.lists(scalar_step, min_size=1, max_size=4),
    st.integers(1, 3),
    st.floats(-1.0, 1.0, width=32),
    st.floats(0.0625, 0.5, width=32),
)
def test_unrolled_inner_steps_meta_gradient_matches_jax(steps, n_inner, w0, lr0):
    """An inner tape per step and ``w.assign_sub(lr * g)``, as a TensorFlow training loop is
    written; the meta-gradient d loss / d lr equals jax.grad of the unrolled pure loop. Run
    twice: the second run finds each recorded inner gradient's inputs by remembered paths."""
    body, pure = _second_order_program("scalar", steps)
    y0 = np.float32(0.3)

    def meta_pure(lr):
        w = jnp.asarray(w0, lr.dtype)
        for _ in range(n_inner):
            w = w - lr * jax.grad(lambda v: pure(v, jnp.asarray(y0, lr.dtype)))(w)
        return pure(w, jnp.asarray(y0, lr.dtype))

    expected = jax.grad(meta_pure)(jnp.float32(lr0))
    with jax.enable_x64(True):
        exact = float(jax.grad(meta_pure)(jnp.float64(lr0)))
    # An unrolled loop can be so ill-conditioned that float32 itself misses the float64 answer
    # by more than the tolerance (jax's own float32 oracle included): nothing to compare there.
    assume(np.isfinite(exact) and abs(float(expected) - exact) <= 1e-4 * abs(exact) + 1e-6)
    for _ in range(2):
        w, y, lr = gk.Variable(np.float32(w0)), gk.Variable(y0), gk.Variable(np.float32(lr0))
        with gk.GradientTape() as outer:
            for _ in range(n_inner):
                y.assign(y0)  # each inner loss starts from the same y, as the pure loop does
                with gk.GradientTape() as inner:
                    loss = body(w, y)
                w.assign_sub(lr * inner.gradient(loss, w))
            y.assign(y0)
            meta = body(w, y)
        np.testing.assert_allclose(outer.gradient(meta, lr).numpy(), expected, rtol=2e-4, atol=1e-5)
