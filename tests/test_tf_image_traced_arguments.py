"""``tf.image`` arguments known only when a ``tf.function``'s program runs: ``rot90``'s ``k`` on a
square image (every turn keeps the shape; a non-square image's shape would depend on it, which
gradkit refuses) and ``adjust_gamma``'s ``gamma`` (negative values fail when the program runs,
as TensorFlow's assertion). Oracles: NumPy, and TensorFlow where installed."""

import numpy as np
import pytest

import gradkit.tf as gtf

SQUARE = np.arange(2 * 4 * 4 * 3, dtype=np.float32).reshape(2, 4, 4, 3) / 10
WEIGHTS = np.linspace(-1.0, 1.0, SQUARE.size, dtype=np.float32).reshape(SQUARE.shape)


def _rotated(tf, k):
    rotate = tf.function(lambda x, k: tf.image.rot90(x, k))
    x = tf.Variable(SQUARE)
    with tf.GradientTape() as tape:
        out = rotate(x, tf.constant(k))
        loss = tf.reduce_sum(out * tf.constant(WEIGHTS))
    return np.asarray(out), np.asarray(tape.gradient(loss, x))


@pytest.mark.parametrize("k", [-1, 0, 1, 2, 3, 5])
def test_rot90_by_a_traced_k(k):
    out, grad = _rotated(gtf, k)
    np.testing.assert_array_equal(out, np.rot90(SQUARE, k, axes=(1, 2)))
    # d sum(rot(x) * w) / dx = rot^-1(w)
    np.testing.assert_array_equal(grad, np.rot90(WEIGHTS, -k, axes=(1, 2)))
    tf = pytest.importorskip("tensorflow")
    want_out, want_grad = _rotated(tf, k)
    np.testing.assert_array_equal(out, want_out)
    np.testing.assert_array_equal(grad, want_grad)


def test_rot90_by_a_traced_k_of_a_non_square_image_is_refused():
    rotate = gtf.function(lambda x, k: gtf.image.rot90(x, k))
    with pytest.raises(ValueError, match=r"\[gradkit\] tf.image.rot90 got a traced k"):
        rotate(gtf.constant(np.zeros((2, 3, 1), np.float32)), gtf.constant(1))


def test_rot90_by_a_traced_float_k_is_refused():
    rotate = gtf.function(lambda x, k: gtf.image.rot90(x, k))
    with pytest.raises(TypeError, match=r"\[gradkit\] tf.image.rot90 got k of shape \(\) and dtype float32"):
        rotate(gtf.constant(SQUARE), gtf.constant(1.0))


def test_adjust_gamma_by_a_traced_gamma():
    adjust = gtf.function(lambda x, g: gtf.image.adjust_gamma(x, g, gain=2.0))
    image = np.full((2, 2, 3), 0.25, np.float32)
    np.testing.assert_allclose(adjust(gtf.constant(image), gtf.constant(0.5)), 2.0 * image**0.5, rtol=1e-6)
    with pytest.raises(gtf.errors.InvalidArgumentError, match="Gamma should be a non-negative real number"):
        adjust(gtf.constant(image), gtf.constant(-0.5))
