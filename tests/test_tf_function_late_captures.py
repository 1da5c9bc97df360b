"""A tensor a ``tf.function`` closes over, which no tape recorded when the function was first
traced, still gets its gradient once a tape watches it: the function captures it then, as
TensorFlow captures every eager tensor. Oracles: hand derivations; TensorFlow where installed."""

import numpy as np
import pytest

import gradkit as gk
import gradkit.tf as gtf


def _program(tf, warm):
    c = tf.constant(2.0)

    @tf.function
    def f(x):
        return x * c * c

    if warm == "plain":
        f(tf.constant(1.0))
    elif warm == "tape":
        with tf.GradientTape() as t0:
            x0 = tf.constant(1.0)
            t0.watch(x0)
            f(x0)
    x = tf.constant(3.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([x, c])
        y = f(x)
    grads = [float(g) for g in tape.gradient(y, [x, c])]
    again = float(f(tf.constant(4.0)))  # and later calls without a tape still compute
    return grads, again


@pytest.mark.parametrize("warm", ["none", "plain", "tape"])
def test_a_closed_over_constant_watched_after_the_first_trace(warm):
    grads, again = _program(gtf, warm)
    assert grads == [4.0, 12.0]  # d(x c^2)/dx = c^2, d/dc = 2 x c at x = 3, c = 2
    assert again == 16.0


@pytest.mark.parametrize("warm", ["none", "plain", "tape"])
def test_matches_tensorflow(warm):
    rtf = pytest.importorskip("tensorflow")
    assert _program(gtf, warm) == _program(rtf, warm)


def test_the_core_jit_captures_it_once_and_traces_once_more():
    c = gk.Tensor(np.float32(2.0))
    f = gk.jit(lambda x: x * c * c)
    f(np.float32(1.0))
    before = f.trace_count
    for _ in range(3):
        with gk.GradientTape() as tape:
            tape.watch(c)
            y = f(np.float32(3.0))
        assert float(tape.gradient(y, c)) == 12.0
    assert f.trace_count - before <= 2  # the capture is learned once, not at every call
