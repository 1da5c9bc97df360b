"""The functions gradkit.tf traces for a user (``tf.vectorized_map``'s ``fn``, ``tf.custom_gradient``'s
``f`` and its ``grad_fn``) take tensors, as in TensorFlow: a tape inside them records Python operators
and indexing on their arguments, and tensor methods work. Against TensorFlow (skipped without it)
and a hand derivation."""

import numpy as np
import pytest

import gradkit.tf as gtf

_X = np.array([[1.3, 2.7, -0.5], [0.2, -0.4, 0.9]], np.float32)
_W = np.array([[1.0], [0.5], [-1.0]], np.float32)


def _per_example_gradients(tf, inside_function):
    w = tf.Variable(_W)

    def per_example(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.reduce_sum(tf.tanh(tf.matmul(x[None], w))) + tf.reduce_sum(x * x)
        return t.gradient(y, x), tf.fill([2], x.get_shape()[0])

    run = (
        (lambda: tf.function(lambda: tf.vectorized_map(per_example, tf.constant(_X)))())
        if inside_function
        else (lambda: tf.vectorized_map(per_example, tf.constant(_X)))
    )
    grads, sizes = run()
    return np.asarray(grads), np.asarray(sizes)


@pytest.mark.parametrize("inside_function", [False, True])
def test_vectorized_map_hands_fn_tensors(inside_function):
    grads, sizes = _per_example_gradients(gtf, inside_function)
    # d/dx [sum tanh(x @ w) + sum x^2] = (1 - tanh(x @ w)^2) w^T + 2x, by hand.
    want = (1 - np.tanh(_X @ _W) ** 2) * _W.T + 2 * _X
    np.testing.assert_allclose(grads, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(sizes, [[3, 3], [3, 3]])
    tf = pytest.importorskip("tensorflow")
    theirs = _per_example_gradients(tf, inside_function)
    np.testing.assert_allclose(grads, theirs[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(sizes, theirs[1])


def _custom_gradient_with_inner_tape(tf):
    @tf.custom_gradient
    def cube_ish(x):
        size = float(x.get_shape()[0])

        def grad_fn(dy):
            # The VJP recomputed with a tape of its own, on the tensors grad_fn was given.
            with tf.GradientTape() as t:
                t.watch(x)
                z = x * x * 3.0
            return t.gradient(z, x, output_gradients=dy * dy.get_shape()[0] / size)

        return x * x * 3.0, grad_fn

    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.reduce_sum(cube_ish(x))
    return np.asarray(t.gradient(y, x))


def test_custom_gradient_hands_f_and_grad_fn_tensors():
    got = _custom_gradient_with_inner_tape(gtf)
    np.testing.assert_allclose(got, [6.0, 12.0])  # d/dx 3x^2 = 6x, by hand
    tf = pytest.importorskip("tensorflow")
    np.testing.assert_allclose(got, _custom_gradient_with_inner_tape(tf))
