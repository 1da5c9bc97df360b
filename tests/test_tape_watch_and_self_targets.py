"""Watching a tensor the tape already records, a target that is its own source, and
intermediates computed from a Variable that holds a constant: TensorFlow's answers, checked
by hand and against real TensorFlow where it is installed."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

import gradkit as gk
import gradkit.tf as gtf

gnp = gk.numpy
V0 = np.array([0.3, -0.5], np.float32)


def test_watching_a_tensor_the_tape_already_records_keeps_its_earlier_uses():
    v = gk.Variable(V0)
    with gk.GradientTape(persistent=True) as tape:
        h = v * 2.0
        before = gnp.sum(gnp.sin(h))  # a use of h before the watch
        tape.watch(h)  # h is already on the tape: nothing changes, as in TensorFlow
        after = gnp.sum(gnp.sin(h))
        both = before + after
    want = np.cos(2.0 * V0)
    np.testing.assert_allclose(np.asarray(tape.gradient(before, h)), want, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(tape.gradient(after, h)), want, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(tape.gradient(both, v)), 4.0 * want, rtol=1e-6)


def program_watched_read(tf):
    """A watched read of a Variable is a tensor of its own: other reads are not its uses."""
    v = tf.Variable(V0)
    with tf.GradientTape() as tape:
        a = v.read_value()
        tape.watch(a)
        y = tf.reduce_sum(a * 2.0 + v * 3.0)
    return tape.gradient(y, a).numpy()


def program_self_target(tf):
    """A target that is its own source, recorded by an outer tape but not by this one."""
    x = tf.Variable(V0)
    with tf.GradientTape():
        h = x * 1.0
        with tf.GradientTape() as inner:
            y = h * 2.0
        return inner.gradient(y, y).numpy()


def program_self_target_variable_and_repeated_sources(tf):
    """A Variable target that is its own source for a tape that never saw it, though an
    outer tape recorded its assignment; and a tensor source listed twice."""
    v = tf.Variable(np.array([0.1, 0.2, 0.3], np.float32))
    c = tf.constant(0.5)
    with tf.GradientTape():
        v.assign(tf.tanh(v))
        with tf.GradientTape(persistent=True) as inner:
            y = c * 2.0
        by_variable = inner.gradient(v, v)
        twice = inner.gradient(y, [y, y])
    return [by_variable.numpy(), *(g.numpy() for g in twice)]


def program_after_constant_assignment(tf, **tape_options):
    """An intermediate computed from a Variable after it was assigned a constant."""
    v = tf.Variable(1.0)
    with tf.GradientTape(persistent=True, **tape_options) as tape:
        v.assign(2.0)
        h = v * 3.0
        y = h * h
    grad_v = tape.gradient(y, v)
    return float(tape.gradient(y, h).numpy()), None if grad_v is None else float(grad_v.numpy())


def test_a_watched_read_is_a_tensor_of_its_own():
    np.testing.assert_allclose(program_watched_read(gtf), [2.0, 2.0])


def test_a_target_that_is_its_own_source_gives_ones_where_only_an_outer_tape_records_it():
    np.testing.assert_array_equal(program_self_target(gtf), [1.0, 1.0])


def test_a_variable_target_unseen_by_its_tape_and_a_repeated_source_take_the_identity():
    got = program_self_target_variable_and_repeated_sources(gtf)
    np.testing.assert_array_equal(got[0], [1.0, 1.0, 1.0])
    assert [float(g) for g in got[1:]] == [1.0, 1.0]


def test_an_intermediate_from_a_variable_holding_a_constant_has_its_gradient():
    # d(h^2)/dh = 2h = 12. The default tape follows the assignment: y does not depend on the
    # value v had when the tape first saw it (None). The TensorFlow-parity tape sums the
    # gradient over reads of v, as TensorFlow does: 2h * 3 = 36.
    assert program_after_constant_assignment(gtf) == (12.0, None)
    assert program_after_constant_assignment(gtf, track_assignments=False) == (12.0, 36.0)


def test_the_same_programs_in_tensorflow():
    tf = pytest.importorskip("tensorflow")
    np.testing.assert_allclose(program_watched_read(gtf), program_watched_read(tf))
    np.testing.assert_array_equal(program_self_target(gtf), program_self_target(tf))
    for got, want in zip(
        program_self_target_variable_and_repeated_sources(gtf), program_self_target_variable_and_repeated_sources(tf)
    ):
        np.testing.assert_array_equal(got, want)
    assert program_after_constant_assignment(gtf, track_assignments=False) == program_after_constant_assignment(tf)


def test_a_tensor_assigned_in_a_compiled_step_then_watched():
    x = gk.Variable(np.array([1.0, 2.0, 3.0], np.float32))
    v = gk.Variable(np.zeros(3, np.float32))

    def step():
        r = gk.Tensor(gnp.tanh(x))
        v.assign(r)
        with gk.GradientTape() as tape:
            tape.watch(r)  # r is not v's value on the tape: v has a source of its own
            y = gnp.sum(v * v)
        return tape.gradient(y, v)

    want = 2.0 * np.tanh([1.0, 2.0, 3.0])
    np.testing.assert_allclose(np.asarray(gk.jit(step)()), want, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(step()), want, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(v.value), np.tanh([1.0, 2.0, 3.0]), rtol=1e-6)
    assert jnp.shape(v.value) == (3,)
