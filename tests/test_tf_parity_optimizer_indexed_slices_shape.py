"""``apply_gradients`` of a ``tf.IndexedSlices`` gradient made without ``dense_shape``: its rows
apply to the paired Variable, whose shape stands in for the missing one, as Keras' SGD applies
them. Against real TensorFlow (skipped without it) and by hand."""

import numpy as np
import pytest

import gradkit.tf as gtf


def _sgd_rows(tf):
    v = tf.Variable(np.ones((4, 2), np.float32))
    g = tf.IndexedSlices(tf.constant([[1.0, 2.0], [3.0, 4.0]]), tf.constant([2, 0]))
    tf.keras.optimizers.SGD(0.1).apply_gradients([(g, v)])
    return v.numpy()


def test_sgd_applies_the_rows_to_the_variable():
    by_hand = np.array([[0.7, 0.6], [1.0, 1.0], [0.9, 0.8], [1.0, 1.0]], np.float32)  # 1 - 0.1 * row
    np.testing.assert_allclose(_sgd_rows(gtf), by_hand, rtol=1e-6)
    tf = pytest.importorskip("tensorflow")
    np.testing.assert_allclose(_sgd_rows(gtf), _sgd_rows(tf), rtol=1e-6)


def test_adam_leaves_the_rows_without_gradient_alone():
    v = gtf.Variable(np.ones((3, 2), np.float32))
    g = gtf.IndexedSlices(gtf.constant([[1.0, -2.0]]), gtf.constant([1]))
    gtf.keras.optimizers.Adam(0.1).apply_gradients([(g, v)])
    # By hand, Adam's first step moves each coordinate with a gradient by lr * sign(g) (up to epsilon).
    np.testing.assert_allclose(v.numpy(), [[1.0, 1.0], [0.9, 1.1], [1.0, 1.0]], rtol=1e-5)


@pytest.mark.parametrize("index", [-1, 4])
def test_a_row_outside_the_variable_is_refused_and_changes_nothing(index):
    """TensorFlow's SGD refuses it (InvalidArgumentError from its scatter kernel); made dense, a
    negative row would be dropped silently."""

    def program(tf):
        v = tf.Variable(np.ones((4, 2), np.float32))
        opt = tf.keras.optimizers.SGD(0.1)
        opt.build([v])
        g = tf.IndexedSlices(tf.ones((2, 2)), tf.constant([1, index]), tf.constant([4, 2]))
        with pytest.raises(tf.errors.InvalidArgumentError):
            opt.apply_gradients([(g, v)])
        return v.numpy(), int(opt.iterations.numpy())

    values, steps = program(gtf)
    np.testing.assert_array_equal(values, np.ones((4, 2), np.float32))
    assert steps == 0
    tf = pytest.importorskip("tensorflow")
    program(tf)
