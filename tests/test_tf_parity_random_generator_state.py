"""``tf.random.Generator``'s state API against real TensorFlow: ``from_state``, ``reset``,
``skip``, ``algorithm``, ``tf.random.Algorithm`` and ``create_rng_state``. The states differ by
design (gradkit's is a jax.random key), so each program compares what TensorFlow promises about
them: replays that match, skip returning the state before and leaving the one a draw leaves."""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")

from test_tf_parity import run_both, run_both_ok  # noqa: E402


def test_from_state_of_create_rng_state_replays_from_seed():
    def program(tf):
        g = tf.random.Generator.from_state(tf.random.create_rng_state(7, "philox"), "philox")
        return [g.normal([3]).numpy() == tf.random.Generator.from_seed(7).normal([3]).numpy()]

    assert np.all(run_both_ok(program)[0])


def test_reset_replays_the_draws_after_a_state():
    def program(tf):
        g = tf.random.Generator.from_seed(3)
        g.normal([2])
        saved = tf.identity(g.state)
        first = g.uniform([4])
        g.normal([5])
        g.reset(saved)
        return [first.numpy() == g.uniform([4]).numpy()]

    assert np.all(run_both_ok(program)[0])


def test_skip_returns_the_state_before_and_leaves_the_state_a_draw_leaves():
    def program(tf):
        g, h = tf.random.Generator.from_seed(5), tf.random.Generator.from_seed(5)
        before = tf.identity(g.state)
        returned = g.skip(4)
        h.normal([4])
        return [
            np.array_equal(returned.numpy(), before.numpy()),
            np.array_equal(g.state.numpy(), h.state.numpy()),
            np.array_equal(g.normal([2]).numpy(), h.normal([2]).numpy()),
        ]

    assert run_both_ok(program) == [True, True, True]


def test_algorithm_names():
    def program(tf):
        return [[a.name for a in tf.random.Algorithm], [a.value for a in tf.random.Algorithm]]

    assert run_both_ok(program)[0] == ["PHILOX", "THREEFRY", "AUTO_SELECT"]


def test_unknown_algorithm_and_foreign_state_refused():
    outcome = run_both(lambda tf: tf.random.Generator.from_seed(1, alg="mersenne"))
    assert isinstance(outcome, ValueError) and "tf.random.Algorithm" in str(outcome)
    import gradkit.tf as gtf

    g = gtf.random.Generator.from_seed(1)
    state = g.state.numpy()
    with pytest.raises(ValueError, match=r"^\[gradkit\] Generator.reset got a state of shape \[3\]"):
        g.reset([1, 0, 0])
    assert np.array_equal(g.state.numpy(), state)
    assert g.algorithm == gtf.random.Algorithm.THREEFRY.value
