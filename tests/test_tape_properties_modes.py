"""The random recorded programs of test_tape_properties.py, run in other modes.

Each mode runs the same steps (same generators) and checks values and gradients against the
same independent oracle: jax.grad / jax.jacrev of the program's pure rewrite, with None exactly
where the rewrite's structural dependence sets say the target does not depend on a Variable.

1. The whole tape step (tapes, program, loss, gradients) under ``gk.jit``: eager and compiled
   agree with the oracle; a second call with other Variable values and other float scales gives
   the new answer and compiles nothing.
2. The program split across two or three ``with tape:`` blocks of the same tapes, entered
   again. Steps run between the blocks are not recorded (README: "what ran in between is not
   recorded; a Variable assigned in between is, for later reads, a constant of that value", as
   under ``stop_recording``): in the pure rewrite every value they produce, including a
   Variable's new value, is a ``stop_gradient``'ed constant for every tape. With two tapes a
   block may enter only one of them (the other does not record it, as under its
   ``stop_recording``), and a tape first entered in a later block has as sources the
   Variables' values there (SEMANTICS.md: "when the tape first saw it").
3. Both: the re-entered blocks inside one ``gk.jit`` step.
4. ``tape.jacobian`` of a (3,) target with respect to the Variables, against jax.jacrev.
"""

from __future__ import annotations

import contextlib

import jax
import jax.numpy as jnp
import numpy as np
from _oracles import count_compiles
from hypothesis import given, settings
from hypothesis import strategies as st
from test_tape_properties import N_VARS, SCALE, _gk_operand, _gk_step, _p_step, programs, simple_step

import gradkit as gk

gnp = gk.numpy
SETTINGS = settings(max_examples=15, deadline=None, derandomize=True, database=None)

# Steps run between two blocks, while the tapes do not record (stop_recording needs a
# recording tape, so it is not among them).
between_step = st.one_of(simple_step, st.tuples(st.just("stop_gradient"), st.tuples(st.just("var"), st.integers(0, 7))))
# Which tapes the first block enters (bits), where the steps are cut into blocks, what runs
# between consecutive blocks, and which tapes the next block enters. A tape first entered
# in a later block watches the Variables there: its sources are their values at that point.
TAPE_BITS = st.sampled_from([3, 3, 1, 2])
splits = st.tuples(
    TAPE_BITS,
    st.lists(st.tuples(st.integers(0, 5), st.lists(between_step, max_size=2), TAPE_BITS), min_size=1, max_size=2),
)


def _segments(prog, split):
    """[("block", steps, tapes), ("between", steps, ()), ("block", steps, tapes), ...]: one
    block of all the tapes if split is None. Each tape is in some block (the last one if no
    other), and a tape entered for the first time is entered with one entered before, so
    that it joins their recording session (a tape entered again inside a session opened
    after it is an error by design, README: 'A tape entered again ...')."""
    steps, every = prog["steps"], tuple(range(prog["n_tapes"]))
    if not split:
        return [("block", list(steps), every)]
    first_bits, cuts = split
    blocks, start = [], 0
    entered = [t for t in every if first_bits >> t & 1] or list(every)
    for cut, between, bits in sorted(cuts, key=lambda c: c[0]):
        cut = max(start, min(cut, len(steps)))
        blocks.append((list(steps[start:cut]), entered, list(between)))
        start = cut
        entered = [t for t in every if bits >> t & 1] or list(every)
    blocks.append((list(steps[start:]), entered + [t for t in every if not any(t in b[1] for b in blocks)], None))
    out, seen = [], set()
    for steps_, entered, between in blocks:
        if not seen.intersection(entered):
            entered = sorted(set(entered) | seen)
        seen |= set(entered)
        out.append(("block", steps_, tuple(sorted(set(entered)))))
        if between is not None:
            out.append(("between", between, ()))
    return out


def _other_scales(scales):
    return [1.5 - 0.5 * c for c in scales]


def _other_entry(entry):
    return (0.5 - 0.75 * np.asarray(entry)).astype(np.float32)


# --- gradkit interpreter ---------------------------------------------------------------------------


def _gk_step_m(s, vs, regs, tapes, scales):
    """test_tape_properties._gk_step, with the scale taken as given (a Python float eagerly, a
    traced scalar inside gk.jit: a runtime value either way) and ``tapes=None`` between blocks."""
    kind = s[0]
    if kind == "scale":
        regs.append(SCALE[s[1]](gnp.tanh(_gk_operand(s[3], vs, regs)), scales[s[2]]))
    elif kind == "stop_recording":
        if tapes is None:  # between blocks nothing records: the steps simply run
            for sub in s[2]:
                _gk_step_m(sub, vs, regs, tapes, scales)
            return
        with tapes[s[1] % len(tapes)].stop_recording():
            for sub in s[2]:
                _gk_step_m(sub, vs, regs, tapes, scales)
    else:
        _gk_step(s, vs, regs, tapes, scales)


def _gk_target(prog, vs, regs, vector):
    f = gnp.square if vector else (lambda x: gnp.sum(gnp.square(x)))
    loss = f(vs[prog["loss_vars"][0]])
    for i in prog["loss_vars"][1:]:
        loss = loss + f(vs[i])
    if prog["loss_regs"] and regs:
        loss = loss + (gnp.tanh(regs[-1]) if vector else gnp.sum(gnp.tanh(regs[-1])))
    return loss


def gk_program(prog, vs, scales, split=None, jacobian=False):
    """Run ``prog`` on the Variables ``vs`` under ``n_tapes`` nested tapes (entered again for
    each block); returns (target, [each tape's gradient or Jacobian w.r.t. vs])."""
    tapes = [gk.GradientTape() for _ in range(prog["n_tapes"])]
    regs: list = []
    seen: set = set()
    segments = _segments(prog, split)
    for n, (kind, steps, entered) in enumerate(segments):
        if kind == "between":
            for s in steps:
                _gk_step_m(s, vs, regs, None, scales)
            continue
        with contextlib.ExitStack() as stack:
            # The tapes entered before first (in the order of tapes), then the new ones,
            # each watching the Variables as it is entered.
            for k in sorted(entered, key=lambda k: (k not in seen, k)):
                stack.enter_context(tapes[k])
                if k not in seen:
                    tapes[k].watch(vs)
                    seen.add(k)
            # A stop_recording step names one of the tapes recording this block.
            here = [tapes[k] for k in entered]
            for s in steps:
                _gk_step_m(s, vs, regs, here, scales)
            if n == len(segments) - 1:
                target = _gk_target(prog, vs, regs, jacobian)
    derive = (lambda t: t.jacobian(target, vs)) if jacobian else (lambda t: t.gradient(target, vs))
    return target, [derive(t) for t in tapes]


# --- pure rewrite ----------------------------------------------------------------------------------


def _first_block(segments, tape):
    return next(n for n, seg in enumerate(segments) if tape in seg[2])


def sources_of(prog, entry, tape, scales, split=None):
    """The Variables' values where ``tape`` first sees them (it watches them as it is first
    entered): the program run, unrecorded, up to that block."""
    segments = _segments(prog, split)
    env = {i: (jnp.asarray(entry[i]), frozenset()) for i in range(N_VARS)}
    regs: list = []
    for _, steps, _ in segments[: _first_block(segments, tape)]:
        for s in steps:
            _p_step(s, env, regs, -1, 1, True, scales)
    return [env[i][0] for i in range(N_VARS)]


def run_pure_segments(prog, src, tape, scales, split=None, vector=False, entry=None):
    """The pure rewrite for tape ``tape`` as a function of its sources ``src`` (the
    Variables' values where it first sees them; ``entry``: their entry values, to run what
    comes before): (target, deps, final values). Steps the tape does not record (between
    blocks, in a block it is not in) run with ``cut``: every value they make is a constant
    (stop_gradient, no dependence)."""
    segments = _segments(prog, split)
    first = _first_block(segments, tape)
    env = {i: (jnp.asarray(entry[i]), frozenset()) for i in range(N_VARS)}
    regs: list = []
    for n, (_, steps, entered) in enumerate(segments):
        if n == first:  # the tape sees the Variables: from here on they are its sources
            env = {i: (src[i], frozenset([i])) for i in range(N_VARS)}
        # Not recorded by this tape: the steps between blocks, and a block it is not in.
        # A stop_recording step names entered[s[1] % len(entered)].
        cut = tape not in entered
        mine = entered.index(tape) if not cut else -1
        for s in steps:
            _p_step(s, env, regs, mine, len(entered) or 1, cut, scales)
    target_cut = tape not in entered
    f = jnp.square if vector else (lambda x: jnp.sum(jnp.square(x)))
    loss = jnp.zeros((3,) if vector else (), jnp.float32)
    deps = frozenset()
    for i in prog["loss_vars"]:
        loss = loss + f(env[i][0])
        deps |= env[i][1]
    if prog["loss_regs"] and regs:
        loss = loss + (jnp.tanh(regs[-1][0]) if vector else jnp.sum(jnp.tanh(regs[-1][0])))
        deps |= regs[-1][1]
    if target_cut:  # the target is recorded in the last block, which this tape is not in
        loss, deps = jax.lax.stop_gradient(loss), frozenset()
    return loss, deps, [env[i][0] for i in range(N_VARS)]


def check(prog, entry, scales, target, derivs, finals, split=None, jacobian=False):
    """``target``, each tape's derivatives ``derivs`` and the Variables' ``finals`` against the
    pure rewrite at ``entry``/``scales``."""
    entry = [jnp.asarray(e) for e in entry]
    transform = jax.jacrev if jacobian else jax.grad
    for tape_index, got in enumerate(derivs):
        src = sources_of(prog, entry, tape_index, scales, split)
        value, deps, final_state = run_pure_segments(prog, src, tape_index, scales, split, jacobian, entry)

        def f(e, t=tape_index):
            return run_pure_segments(prog, e, t, scales, split, jacobian, entry)[0]

        expected = transform(f)(src)
        np.testing.assert_allclose(np.asarray(target), np.asarray(value), rtol=1e-5, atol=1e-5)
        for i in range(N_VARS):
            if i in deps:
                assert got[i] is not None, (tape_index, i)
                np.testing.assert_allclose(np.asarray(got[i]), np.asarray(expected[i]), rtol=1e-4, atol=1e-5)
            else:
                assert got[i] is None, (tape_index, i)
        for i in range(N_VARS):
            np.testing.assert_allclose(np.asarray(finals[i]), np.asarray(final_state[i]), rtol=1e-5, atol=1e-6)


def _variables(entry):
    return [gk.Variable(entry[i], name=f"v{i}") for i in range(N_VARS)]


def _set(vs, entry):
    for v, e in zip(vs, entry):
        v.assign(e)


def _as_arrays(derivs):
    return [[None if g is None else np.asarray(g) for g in d] for d in derivs]


# --- 1 and 3: the whole step under gk.jit -----------------------------------------------------------


def _check_jit(prog, split):
    vs = _variables(prog["entry"])

    def step(s0, s1, s2):
        target, derivs = gk_program(prog, vs, [s0, s1, s2], split)
        return target, derivs

    # Eager: the same function, called plainly.
    target, derivs = step(*prog["scales"])
    check(prog, prog["entry"], prog["scales"], target, _as_arrays(derivs), [v.value for v in vs], split)

    compiled = gk.jit(step)
    _set(vs, prog["entry"])
    target, derivs = compiled(*prog["scales"])
    check(prog, prog["entry"], prog["scales"], target, _as_arrays(derivs), [v.value for v in vs], split)

    # Other Variable values and other float scales: the new answer, from the same program.
    entry2, scales2 = _other_entry(prog["entry"]), _other_scales(prog["scales"])
    _set(vs, entry2)
    out = []
    assert count_compiles(lambda: out.append(compiled(*scales2))) == 0
    target, derivs = out[0]
    check(prog, entry2, scales2, target, _as_arrays(derivs), [v.value for v in vs], split)


@SETTINGS
@given(programs)
def test_whole_tape_step_under_jit_matches_pure_rewrite(prog):
    _check_jit(prog, None)


# --- 2: blocks of a tape entered again --------------------------------------------------------------


@SETTINGS
@given(programs, splits)
def test_reentered_blocks_match_pure_rewrite(prog, split):
    for entry, scales in (
        (prog["entry"], prog["scales"]),
        (_other_entry(prog["entry"]), _other_scales(prog["scales"])),
    ):
        vs = _variables(entry)
        target, derivs = gk_program(prog, vs, scales, split)
        check(prog, entry, scales, target, _as_arrays(derivs), [v.value for v in vs], split)


@SETTINGS
@given(programs, splits)
def test_reentered_blocks_inside_jit_match_pure_rewrite(prog, split):
    _check_jit(prog, split)


# --- 4: Jacobians ------------------------------------------------------------------------------------


@settings(max_examples=12, deadline=None, derandomize=True, database=None)
@given(programs, st.one_of(st.none(), splits))
def test_jacobian_matches_jacrev_of_pure_rewrite(prog, split):
    vs = _variables(prog["entry"])
    target, derivs = gk_program(prog, vs, prog["scales"], split, jacobian=True)
    check(prog, prog["entry"], prog["scales"], target, _as_arrays(derivs), [v.value for v in vs], split, True)


# --- regressions found by the properties above ----------------------------------------------------


def test_tape_left_out_of_a_block_does_not_cut_an_assignment_another_tape_recorded():
    # Block 2 is recorded by t1 only: c = 3x. For t1, z = c*c = 9x^2, so dz/dx = 18x = 9;
    # for t0 the assignment was not recorded (a constant), so dz/dx and dz/dc are None.
    # gradkit gave t1 None: t0, entered first in block 3, reopened the session from the
    # bindings of block 1 (t0's own, stale) and rebound c to a constant for every tape.
    for order in ((0, 1), (1,), (0,)):
        x, c = gk.Variable(0.5), gk.Variable(0.0)
        tapes = [gk.GradientTape(persistent=True), gk.GradientTape(persistent=True)]
        with tapes[0], tapes[1]:
            tapes[0].watch([x, c])
            tapes[1].watch([x, c])
        with tapes[1]:
            c.assign(x * 3.0)
        with contextlib.ExitStack() as stack:
            for k in order:
                stack.enter_context(tapes[k])
            z = c * c
        np.testing.assert_allclose(np.asarray(z), 2.25)
        if 1 in order:
            np.testing.assert_allclose(np.asarray(tapes[1].gradient(z, x)), 9.0, rtol=1e-6)
            assert tapes[1].gradient(z, c) is None  # c's entry value was overwritten
        assert tapes[0].gradient(z, x) is None and tapes[0].gradient(z, c) is None
        # A Variable target after 'with': its final value, 3x for t1, a constant for t0.
        np.testing.assert_allclose(np.asarray(tapes[1].gradient(c, x)), 3.0)
        assert tapes[0].gradient(c, x) is None
