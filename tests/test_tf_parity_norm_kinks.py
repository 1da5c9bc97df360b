"""Matrix norms of order 1, inf and 2 and ``tf.clip_by_norm`` differentiate at zero entries and ties
as TensorFlow does (it builds them from ``abs``, whose gradient at 0 is 0, and ``maximum``, which
gives a tie's gradient to its first argument). Oracles: hand derivations and TensorFlow."""

from __future__ import annotations

import numpy as np
import pytest

import gradkit.tf as gtf

CASES = [
    (np.array([[0.0, 3.0], [2.0, 0.0]], np.float32), 1, [[0.0, 1.0], [0.0, 0.0]]),
    (np.array([[0.0, 3.0], [2.0, 0.0]], np.float32), np.inf, [[0.0, 1.0], [0.0, 0.0]]),
    (np.array([[0.0, 3.0], [2.0, 0.0]], np.float32), 2, [[0.0, 1.0], [0.0, 0.0]]),
    (np.zeros((2, 3), np.float32), 1, np.zeros((2, 3))),
    (np.zeros((2, 3), np.float32), np.inf, np.zeros((2, 3))),
    (np.zeros((2, 3), np.float32), 2, np.zeros((2, 3))),
]


def _norm_gradient(tf, x, order, keepdims=False):
    x = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.norm(x, ord=order, axis=(0, 1), keepdims=keepdims)
    return y.numpy(), tape.gradient(y, x).numpy()


@pytest.mark.parametrize("x, order, expected", CASES)
def test_matrix_norm_gradients_at_zero_entries(x, order, expected):
    # ord=1: the largest column sum |3| + |0| picks column 1, whose zero entry gets abs'(0) = 0.
    _, grad = _norm_gradient(gtf, x, order)
    np.testing.assert_allclose(grad, expected, atol=1e-6)


def test_matrix_norm_values_and_keepdims():
    x = np.array([[[1.0, -2.0], [3.0, 4.0]], [[0.5, 0.0], [0.0, -0.25]]], np.float32)
    for order, want in [(1, [6.0, 0.5]), (np.inf, [7.0, 0.5]), (2, [np.linalg.norm(x[0], 2), 0.5])]:
        got = gtf.norm(x, ord=order, axis=[-2, -1]).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-5)
        assert gtf.norm(x, ord=order, axis=[1, 2], keepdims=True).shape == (2, 1, 1)


def _clip_gradients(tf):
    x, c = tf.constant([3.0, 4.0]), tf.constant(5.0)  # |x| equals the clip value: a tie
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([x, c])
        y = tf.reduce_sum(tf.clip_by_norm(x, c) * tf.constant([1.0, 2.0]))
    return tape.gradient(y, x).numpy(), float(tape.gradient(y, c))


def test_clip_by_norm_at_a_tie_takes_the_clipped_branch():
    x, w = np.array([3.0, 4.0]), np.array([1.0, 2.0])
    grad_x, grad_c = _clip_gradients(gtf)
    # d/dx [c x / |x|] . w = c (w - x (x.w) / |x|^2) / |x| with c = |x| = 5; d/dc = x.w / |x|.
    np.testing.assert_allclose(grad_x, w - x * (x @ w) / 25.0, rtol=1e-5)
    assert grad_c == pytest.approx(float(x @ w) / 5.0, rel=1e-6)


def test_against_tensorflow():
    tf = pytest.importorskip("tensorflow")
    for x, order, _ in CASES:
        for ours, theirs in zip(_norm_gradient(gtf, x, order), _norm_gradient(tf, x, order)):
            np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
    for ours, theirs in zip(_clip_gradients(gtf), _clip_gradients(tf)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
