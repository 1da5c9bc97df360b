"""Random assigning programs: forward mode and second order equal those of the pure rewrite.

The other property tests check first-order gradients; these check what is computed through
the same assignments in forward mode and at second order. A program is a list of steps over
three Variables of shape (3,): elementwise ops, whole assignments (``assign``,
``assign_add``/``assign_sub``, also of a broadcasting scalar or (1,) delta) and slice
assignments with an integer, a negative integer, a slice, a strided slice, a boolean mask or
an integer array index. One interpreter runs it on gk.Variables; the oracle runs the same steps
as a pure function of the entry values (``x.at[idx].set(p)``), differentiated by jax.jvp /
jax.hessian. Checked: a ``ForwardAccumulator`` JVP of the loss and its Hessian-vector product
over a tape, the Hessian from nested tapes, ``gk.jvp``, ``gk.jacfwd`` and ``gk.hessian``, and
``gk.jit`` of these, with the Variables' final values.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import gradkit as gk

gnp = gk.numpy
N_VARS = 3
SETTINGS = settings(max_examples=10, deadline=None, derandomize=True, database=None)

INDEX = {
    "int": 1,
    "neg": -1,
    "slice": slice(0, 2),
    "step": slice(None, None, 2),
    "mask": np.array([True, False, True]),
    "adv": np.array([2, 0]),
}
UNARY = {"sin": (gnp.sin, jnp.sin), "tanh": (gnp.tanh, jnp.tanh), "square": (gnp.square, jnp.square)}
HOW = ["assign", "assign_add", "assign_sub"]

operand = st.integers(0, 7)
step = st.one_of(
    st.tuples(st.just("unary"), st.sampled_from(sorted(UNARY)), operand),
    st.tuples(st.just("mul"), operand, operand),
    st.tuples(st.just("assign"), st.sampled_from(HOW), st.integers(0, N_VARS - 1), operand),
    st.tuples(
        st.just("broadcast"),
        st.sampled_from(HOW[1:]),
        st.integers(0, N_VARS - 1),
        operand,
        st.sampled_from(["scalar", "one"]),
    ),
    st.tuples(
        st.just("slice"), st.sampled_from(HOW), st.integers(0, N_VARS - 1), st.sampled_from(sorted(INDEX)), operand
    ),
)
vectors = st.lists(
    st.lists(st.floats(-1.0, 1.0, width=32), min_size=3, max_size=3), min_size=N_VARS, max_size=N_VARS
).map(lambda v: tuple(jnp.asarray(x, jnp.float32) for x in v))
programs = st.fixed_dictionaries(
    {"steps": st.lists(step, min_size=1, max_size=6), "entry": vectors, "tangent": vectors}
)


def _run(steps, handles, read, write, unary, squash):
    """Run ``steps``; the two interpreters differ only in ``read``, ``write`` and the ops."""
    regs: list = []
    for s in steps:
        pool = [read(h) for h in handles] + regs
        kind = s[0]
        if kind == "unary":
            regs.append(unary[s[1]](pool[s[2] % len(pool)]))
        elif kind == "mul":
            regs.append(squash(pool[s[1] % len(pool)]) * pool[s[2] % len(pool)])
        elif kind == "assign":
            write(s[1], s[2], None, squash(pool[s[3] % len(pool)]))
        elif kind == "broadcast":
            x = squash(pool[s[3] % len(pool)])
            write(s[1], s[2], None, x[0] if s[4] == "scalar" else x[:1])
        elif kind == "slice":
            index = INDEX[s[3]]
            shape = np.zeros(3)[index].shape
            x = squash(pool[s[4] % len(pool)])
            write(s[1], s[2], index, x[: shape[0]] if shape else x[0])
    return regs


def _loss(values, regs, ops):
    total = ops.sum(ops.square(values[0])) + ops.sum(values[1] * values[2])
    for r in regs[-2:]:
        total = total + ops.sum(ops.tanh(r))
    return total


def gk_loss(steps, vs, ops=gnp):
    def write(how, i, index, x):
        getattr(vs[i] if index is None else vs[i][index], how)(x)

    unary = {k: (f if ops is gnp else j) for k, (f, j) in UNARY.items()}
    regs = _run(steps, vs, lambda v: v.value, write, unary, ops.sin)
    return _loss([v.value for v in vs], regs, ops)


def pure(steps, entry):
    """The oracle: the program as a function of the entry values, assignments threaded."""
    env = list(entry)

    def write(how, i, index, x):
        if index is None:
            new = {"assign": lambda: x, "assign_add": lambda: env[i] + x, "assign_sub": lambda: env[i] - x}[how]()
            env[i] = jnp.broadcast_to(new, (3,))
        else:
            ref = env[i].at[index]
            env[i] = {"assign": ref.set, "assign_add": ref.add, "assign_sub": lambda u: ref.add(-u)}[how](x)

    regs = _run(steps, range(N_VARS), lambda i: env[i], write, {k: j for k, (_, j) in UNARY.items()}, jnp.sin)
    return _loss(env, regs, jnp), tuple(env)


def assert_close(actual, expected):
    a, e = jax.tree_util.tree_leaves(actual), jax.tree_util.tree_leaves(expected)
    assert len(a) == len(e), (actual, expected)
    for x, y in zip(a, e):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=2e-4, atol=2e-4)


def _oracle(steps, entry, tangent):
    def loss(*e):
        return pure(steps, e)[0]

    grad = jax.grad(loss, argnums=tuple(range(N_VARS)))
    return {
        "final": pure(steps, entry)[1],
        "jvp": jax.jvp(loss, entry, tangent),
        "hvp": list(jax.jvp(grad, entry, tangent)[1]),
        "grad": list(grad(*entry)),
        "hessian": [list(row) for row in jax.hessian(loss, argnums=tuple(range(N_VARS)))(*entry)],
    }


@SETTINGS
@given(programs)
def test_forward_accumulator_and_nested_tapes_match_pure_rewrite(prog):
    steps, entry, tangent = prog["steps"], prog["entry"], prog["tangent"]
    want = _oracle(steps, entry, tangent)
    zero = gk.UnconnectedGradients.ZERO

    vs = [gk.Variable(e) for e in entry]
    with gk.ForwardAccumulator(vs, list(tangent)) as acc:
        with gk.GradientTape() as tape:
            loss = gk_loss(steps, vs)
        grads = tape.gradient(loss, vs, unconnected_gradients=zero)
    assert_close(acc.jvp(loss, unconnected_gradients=zero), want["jvp"][1])
    assert_close(acc.jvp(grads, unconnected_gradients=zero), want["hvp"])
    assert_close([v.value for v in vs], want["final"])

    vs = [gk.Variable(e) for e in entry]
    with gk.GradientTape(persistent=True) as outer:
        with gk.GradientTape() as inner:
            loss = gk_loss(steps, vs)
        grads = inner.gradient(loss, vs, unconnected_gradients=zero)
    hessian = [[outer.jacobian(g, v, unconnected_gradients=zero) for v in vs] for g in grads]
    assert_close(hessian, want["hessian"])

    vs = [gk.Variable(e) for e in entry]

    @gk.jit
    def step():
        with gk.ForwardAccumulator(vs, list(tangent)) as acc:
            with gk.GradientTape() as tape:
                loss = gk_loss(steps, vs)
            grads = tape.gradient(loss, vs, unconnected_gradients=zero)
        return acc.jvp(loss, unconnected_gradients=zero), acc.jvp(grads, unconnected_gradients=zero)

    jvp, hvp = step()
    assert_close(jvp, want["jvp"][1])
    assert_close(hvp, want["hvp"])
    assert_close([v.value for v in vs], want["final"])


@SETTINGS
@given(programs)
def test_functional_forward_mode_and_hessian_match_pure_rewrite(prog):
    steps, entry, tangent = prog["steps"], prog["entry"], prog["tangent"]
    want = _oracle(steps, entry, tangent)
    vs = [gk.Variable(e) for e in entry]

    def fn():
        return gk_loss(steps, vs, jnp)

    assert_close(gk.jvp(fn, (), (), wrt=vs, wrt_tangents=list(tangent)), want["jvp"])
    assert_close(gk.jacfwd(fn, wrt=vs)(), want["grad"])
    assert_close(gk.hessian(fn, wrt=vs)(), want["hessian"])
    assert_close(gk.jit(gk.hessian(fn, wrt=vs))(), want["hessian"])
    assert_close(gk.jit(lambda: gk.jvp(fn, (), (), wrt=vs, wrt_tangents=list(tangent)))(), want["jvp"])
    # No transform changes a Variable.
    assert_close([v.value for v in vs], entry)
