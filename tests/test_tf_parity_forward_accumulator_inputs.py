"""What ``tf.autodiff.ForwardAccumulator`` refuses, against real TensorFlow 2.21 (the exception
class) and with a ``[gradkit]`` message: a primal given twice and a None tangent; and a
well-formed one still works (JVP of x * x along t is 2 x t, by hand)."""

import numpy as np
import pytest

import gradkit.tf as gtf


def p_a_primal_given_twice_is_refused(tf):
    x = tf.constant([1.0, 2.0])
    return tf.autodiff.ForwardAccumulator([x, x], [tf.ones(2), tf.ones(2)])


def p_a_none_tangent_is_refused(tf):
    return tf.autodiff.ForwardAccumulator(tf.constant([1.0, 2.0]), None)


PROGRAMS = [v for k, v in sorted(globals().items()) if k.startswith("p_")]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_parity(program):
    pytest.importorskip("tensorflow")
    from test_tf_parity import run_both

    assert isinstance(run_both(program), ValueError)


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_the_refusal_says_what_came_in(program):
    with pytest.raises(ValueError, match=r"\[gradkit\]"):
        program(gtf)


def test_a_well_formed_accumulator_gives_the_jvp():
    x, t = gtf.constant([1.0, 2.0]), gtf.constant([0.5, -1.0])
    with gtf.autodiff.ForwardAccumulator(x, t) as acc:
        y = x * x
    np.testing.assert_allclose(acc.jvp(y).numpy(), 2 * np.array([1.0, 2.0]) * np.array([0.5, -1.0]))
