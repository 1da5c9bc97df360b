"""A tf.while_loop whose condition is a tensor inside tf.function is a jax.lax.while_loop, which
reverse mode cannot differentiate: the tape says so in gradkit's words, stays usable, and the
same loop with maximum_iterations differentiates (against a hand derivation and TensorFlow)."""

import numpy as np
import pytest

import gradkit.tf as gtf


def _program(tf, bound):
    x = tf.Variable(0.5)

    @tf.function
    def f(x0):
        _, y = tf.while_loop(
            lambda i, y: y < 10.0, lambda i, y: (i + 1, y * 2.0 + x), (0, x0), maximum_iterations=bound
        )
        return y

    with tf.GradientTape(persistent=True) as tape:
        y = f(tf.constant(1.0))
    return tape, y, x


def test_unbounded_loop_gives_a_clear_error_and_the_tape_stays_usable():
    tape, y, x = _program(gtf, None)
    with pytest.raises(ValueError, match=r"^\[gradkit\].*maximum_iterations"):
        tape.gradient(y, x)
    # A Jacobian with respect to one value runs in forward mode, which differentiates the loop.
    assert float(tape.jacobian(y, x)) == pytest.approx(7.0)
    assert float(y) == pytest.approx(11.5)  # the forward value is fine


def test_bounded_loop_differentiates():
    # y0 = 1; y <- 2y + x while y < 10: 1, 2.5, 5.5, 11.5 (three steps at x = 0.5),
    # so y = 8 + 7x and dy/dx = 7.
    tape, y, x = _program(gtf, 10)
    assert float(y) == pytest.approx(11.5)
    assert float(tape.gradient(y, x)) == pytest.approx(7.0)


def test_bounded_loop_matches_tensorflow():
    tf = pytest.importorskip("tensorflow")
    for bound in (10, None):
        tape, y, x = _program(tf, bound)
        np.testing.assert_allclose(float(tape.gradient(y, x)), 7.0, rtol=1e-6)
