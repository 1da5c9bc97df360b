"""Random TensorFlow programs: real TensorFlow and gradkit.tf's parity mode agree.

Hypothesis writes small programs over a few Variables: elementwise ops, whole and
accumulating assignments, reads, sliced assignments and ``stop_recording`` blocks, under a
GradientTape. The same program runs under real TensorFlow and under ``gradkit.tf`` with
``track_assignments=False``; the gradients with respect to every Variable must agree in value
and in None-ness. (With ``track_assignments=True`` the gradients are exact instead; other
tests check those against pure-JAX rewrites.)
"""

import contextlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

tf_real = pytest.importorskip("tensorflow")
import gradkit.tf as gtf  # noqa: E402

N_VARS = 3
UNARY = ["sin", "tanh", "square", "exp_small"]
STEP = st.one_of(
    st.tuples(st.just("unary"), st.sampled_from(UNARY), st.integers(0, N_VARS - 1)),
    st.tuples(
        st.just("binary"),
        st.sampled_from(["add", "mul", "sub"]),
        st.integers(0, N_VARS - 1),
        st.integers(0, N_VARS - 1),
    ),
    st.tuples(st.just("assign"), st.integers(0, N_VARS - 1)),
    st.tuples(st.just("assign_add"), st.integers(0, N_VARS - 1)),
    st.tuples(st.just("assign_sub"), st.integers(0, N_VARS - 1)),
    st.tuples(st.just("slice_assign"), st.integers(0, N_VARS - 1)),
    st.tuples(st.just("paused"), st.sampled_from(UNARY), st.integers(0, N_VARS - 1)),
)


def _unary(tf, name, x):
    if name == "exp_small":
        return tf.exp(x * 0.1)
    return {"sin": tf.sin, "tanh": tf.tanh, "square": tf.square}[name](x)


def run(tf, steps, init, loss_slots, companion=None):
    """Interpret ``steps``; returns the gradient of the final loss w.r.t. every Variable.

    ``companion`` (gradkit only): a second tape recording alongside, "parity" or "tracking";
    then returns ``(gradients, the companion's gradients)``.
    """
    vs = [tf.Variable(np.asarray(v, np.float32)) for v in init]
    kwargs = {"track_assignments": False} if tf is gtf else {}
    other = contextlib.nullcontext()
    if companion is not None:
        other = gtf.GradientTape(persistent=True, track_assignments=companion == "tracking")
    with tf.GradientTape(persistent=True, **kwargs) as tape, other:
        # One intermediate tensor per slot, read from its Variable when first used, so that
        # some Variables are read only after an assignment, or never (a None gradient).
        read = [None] * N_VARS

        class Slots:
            def __getitem__(self, i):
                if read[i] is None:
                    read[i] = vs[i] * 1.0
                return read[i]

            def __setitem__(self, i, value):
                read[i] = value

        values = Slots()
        for step in steps:
            kind = step[0]
            if kind == "unary":
                values[step[2]] = _unary(tf, step[1], values[step[2]])
            elif kind == "binary":
                a, b = values[step[2]], values[step[3]]
                values[step[2]] = {"add": a + b, "mul": a * b, "sub": a - b}[step[1]]
            elif kind == "assign":
                vs[step[1]].assign(values[step[1]] * 0.5)
                values[step[1]] = vs[step[1]] * 1.0  # a read after the assignment
            elif kind == "assign_add":
                vs[step[1]].assign_add(values[step[1]] * 0.1)
            elif kind == "assign_sub":
                vs[step[1]].assign_sub(tf.sin(values[step[1]]))
            elif kind == "slice_assign":
                vs[step[1]][:1].assign(values[step[1]][1:2])
                values[step[1]] = values[step[1]] + vs[step[1]]
            elif kind == "paused":
                with tape.stop_recording():
                    values[step[2]] = _unary(tf, step[1], values[step[2]])
        loss = tf.add_n([tf.reduce_sum(values[i] * values[i]) for i in loss_slots])
    grads = [None if g is None else np.asarray(g.numpy()) for g in tape.gradient(loss, vs)]
    if companion is None:
        return grads
    return grads, [None if g is None else np.asarray(g.numpy()) for g in other.gradient(loss, vs)]


def run_pure(steps, init, loss_slots):
    """The exact gradient of ``run``'s program (assignments tracked, no paused steps): jax.grad of
    its pure rewrite."""

    def program(values_in):
        vals = list(values_in)
        read = [None] * N_VARS

        def get(i):
            if read[i] is None:
                read[i] = vals[i] * 1.0
            return read[i]

        for step in steps:
            kind = step[0]
            if kind == "unary":
                read[step[2]] = _unary(jnp, step[1], get(step[2]))
            elif kind == "binary":
                a, b = get(step[2]), get(step[3])
                read[step[2]] = {"add": a + b, "mul": a * b, "sub": a - b}[step[1]]
            elif kind == "assign":
                vals[step[1]] = get(step[1]) * 0.5
                read[step[1]] = vals[step[1]] * 1.0
            elif kind == "assign_add":
                vals[step[1]] = vals[step[1]] + get(step[1]) * 0.1
            elif kind == "assign_sub":
                vals[step[1]] = vals[step[1]] - jnp.sin(get(step[1]))
            elif kind == "slice_assign":
                i = step[1]
                vals[i] = vals[i].at[:1].set(get(i)[1:2])
                read[i] = get(i) + vals[i]
        return sum(jnp.sum(get(i) * get(i)) for i in loss_slots)

    return [np.asarray(g) for g in jax.grad(program)([jnp.asarray(v, jnp.float32) for v in init])]


@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(
    steps=st.lists(STEP, min_size=1, max_size=7),
    init=st.lists(st.lists(st.floats(-1.0, 1.0, width=32), min_size=2, max_size=2), min_size=N_VARS, max_size=N_VARS),
    loss_slots=st.lists(st.integers(0, N_VARS - 1), min_size=1, max_size=N_VARS, unique=True),
)
def test_random_programs_match_tensorflow(steps, init, loss_slots):
    _assert_same(run(gtf, steps, init, loss_slots), run(tf_real, steps, init, loss_slots), steps)


@settings(max_examples=20, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(
    steps=st.lists(STEP, min_size=1, max_size=7),
    init=st.lists(st.lists(st.floats(-1.0, 1.0, width=32), min_size=2, max_size=2), min_size=N_VARS, max_size=N_VARS),
    loss_slots=st.lists(st.integers(0, N_VARS - 1), min_size=1, max_size=N_VARS, unique=True),
    companion=st.sampled_from(["parity", "tracking"]),
)
def test_a_second_tape_alongside_changes_neither_tapes_gradients(steps, init, loss_slots, companion):
    # TensorFlow's answer does not depend on other tapes recording; the parity tape must match
    # it with a companion recording too, and a tracking companion must give the exact gradient.
    # stop_recording pauses the first tape only: for the companion a paused step is a plain one.
    got, other = run(gtf, steps, init, loss_slots, companion=companion)
    _assert_same(got, run(tf_real, steps, init, loss_slots), steps)
    unpaused = [("unary", *step[1:]) if step[0] == "paused" else step for step in steps]
    if companion == "parity":
        _assert_same(other, run(tf_real, unpaused, init, loss_slots), steps)
    else:
        for w, g in zip(run_pure(unpaused, init, loss_slots), other):
            np.testing.assert_allclose(
                np.zeros_like(w) if g is None else g, w, rtol=1e-4, atol=1e-5, err_msg=str(steps)
            )


def _assert_same(got, want, steps):
    for w, g in zip(want, got):
        assert (w is None) == (g is None), (steps, want, got)
        if w is not None:
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5, err_msg=str(steps))
