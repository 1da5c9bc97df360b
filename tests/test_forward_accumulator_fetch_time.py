"""A ``ForwardAccumulator``'s JVP belongs to the moment its forward ops ran (TensorFlow computes it
then): the tapes and accumulators recording at that moment differentiate it even when ``jvp`` is
called after they exit, and an accumulator does not differentiate its own JVPs.

Oracles: hand derivations, and TensorFlow itself where it is installed.
"""

from __future__ import annotations

import numpy as np
import pytest

import gradkit.tf as gtf


def _nested_accumulators_fetched_after_both_exit(tf):
    # TensorFlow's ForwardAccumulator docstring example for a second derivative.
    primal = tf.constant(1.1)
    with tf.autodiff.ForwardAccumulator(primal, tf.constant(1.0)) as outer:
        with tf.autodiff.ForwardAccumulator(primal, tf.constant(1.0)) as inner:
            out = primal ** tf.constant(3.5)
    return outer.jvp(inner.jvp(out))


def _mixed_partial_from_two_directions(tf):
    v = tf.constant([1.0, 2.0])
    with tf.autodiff.ForwardAccumulator(v, tf.constant([1.0, 0.0])) as outer:
        with tf.autodiff.ForwardAccumulator(v, tf.constant([0.0, 1.0])) as inner:
            y = tf.reduce_sum(v[0] ** 2 * v[1] ** 3)
    return outer.jvp(inner.jvp(y))


def _tape_gradient_of_a_jvp_fetched_after_the_tape(tf):
    x = tf.constant([0.5, 1.5])
    with tf.GradientTape() as tape:
        tape.watch(x)
        with tf.autodiff.ForwardAccumulator(x, tf.constant([1.0, 2.0])) as acc:
            y = tf.reduce_sum(tf.sin(x) * x)
    return tape.gradient(acc.jvp(y), x)


def _own_jvp_is_a_constant_for_the_accumulator(tf):
    x = tf.constant([0.5, 1.5])
    with tf.autodiff.ForwardAccumulator(x, tf.constant([1.0, 2.0])) as acc:
        j1 = acc.jvp(x**3)
        z = j1 * x
    return acc.jvp(j1), acc.jvp(z)


def _tape_entered_after_the_forward_ops_sees_a_constant(tf):
    x = tf.constant(2.0)
    with tf.autodiff.ForwardAccumulator(x, tf.constant(1.0)) as acc:
        y = x**3
        with tf.GradientTape() as tape:
            tape.watch(x)
            j = acc.jvp(y)
    return tape.gradient(j, x)


def test_nested_accumulators_give_the_second_derivative_after_both_exit():
    exact = 3.5 * 2.5 * 1.1**1.5
    np.testing.assert_allclose(float(_nested_accumulators_fetched_after_both_exit(gtf)), exact, rtol=1e-6)
    np.testing.assert_allclose(float(_mixed_partial_from_two_directions(gtf)), 6 * 1.0 * 2.0**2, rtol=1e-6)


def test_a_tape_that_exited_differentiates_a_jvp_of_what_it_recorded():
    x, t = np.array([0.5, 1.5]), np.array([1.0, 2.0])
    # jvp = sum(t * (cos x * x + sin x)); its gradient is t * (2 cos x - x sin x).
    exact = t * (2 * np.cos(x) - x * np.sin(x))
    np.testing.assert_allclose(np.asarray(_tape_gradient_of_a_jvp_fetched_after_the_tape(gtf)), exact, rtol=1e-5)


def test_an_accumulator_does_not_differentiate_its_own_jvps():
    twice, product = _own_jvp_is_a_constant_for_the_accumulator(gtf)
    assert twice is None
    x, t = np.array([0.5, 1.5]), np.array([1.0, 2.0])
    j1 = 3 * x**2 * t  # a constant for the accumulator, so d(j1 * x) = j1 * t
    np.testing.assert_allclose(np.asarray(product), j1 * t, rtol=1e-6)


def test_a_tape_entered_after_the_forward_ops_does_not_record_the_jvp():
    assert _tape_entered_after_the_forward_ops_sees_a_constant(gtf) is None


@pytest.mark.parametrize(
    "program",
    [
        _nested_accumulators_fetched_after_both_exit,
        _mixed_partial_from_two_directions,
        _tape_gradient_of_a_jvp_fetched_after_the_tape,
        _own_jvp_is_a_constant_for_the_accumulator,
        _tape_entered_after_the_forward_ops_sees_a_constant,
    ],
)
def test_against_tensorflow(program):
    tf = pytest.importorskip("tensorflow")
    ours, theirs = program(gtf), program(tf)
    ours, theirs = (ours, theirs) if isinstance(ours, tuple) else ((ours,), (theirs,))
    for a, b in zip(ours, theirs):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(np.asarray(a), b.numpy(), rtol=1e-5)
