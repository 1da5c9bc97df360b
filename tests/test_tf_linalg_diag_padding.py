"""``tf.linalg.diag``/``diag_part`` padding: a bool matrix takes the default padding 0 as False (as
TensorFlow's diag special-cases it), and a padding value computed inside a ``tf.function`` is an
operand of the op, with no gradient (TensorFlow's MatrixDiag gives it none). Oracles: the matrices
by hand, and TensorFlow where installed."""

import numpy as np
import pytest

import gradkit.tf as gtf


def test_bool_diagonals_take_the_default_padding():
    np.testing.assert_array_equal(gtf.linalg.diag(gtf.constant([True, False])), [[True, False], [False, False]])
    np.testing.assert_array_equal(gtf.linalg.diag_part(gtf.constant([[True, False], [False, True]])), [True, True])
    band = gtf.linalg.diag(gtf.constant([[True, False]]), k=1)
    np.testing.assert_array_equal(band, [[[False, True, False], [False, False, False], [False, False, False]]])


def _traced(tf):
    with_padding = tf.function(lambda x, p: tf.linalg.diag(x, padding_value=p))
    band = tf.function(lambda m: tf.linalg.diag_part(m, k=(-1, 1), padding_value=tf.reduce_min(m)))
    x, p, m = tf.constant([1.0, 2.0]), tf.constant(5.0), tf.constant([[1.0, 2.0], [3.0, 4.0]])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([x, p, m])
        a, b = with_padding(x, p), band(m)
    return np.asarray(a), np.asarray(b), tape.gradient(a, p), np.asarray(tape.gradient(b, m))


def test_a_traced_padding_value_is_an_operand_without_gradient():
    a, b, grad_p, grad_m = _traced(gtf)
    np.testing.assert_array_equal(a, [[1, 5], [5, 2]])
    # The band k=(-1, 1) of [[1, 2], [3, 4]]: superdiagonal [2] padded on the left (RIGHT_LEFT), the
    # diagonal, the subdiagonal [3] padded on the right; the padding is the minimum, 1.
    np.testing.assert_array_equal(b, [[1, 2], [1, 4], [3, 1]])
    assert grad_p is None
    np.testing.assert_array_equal(grad_m, np.ones((2, 2)))  # each entry once, none through the padding
    tf = pytest.importorskip("tensorflow")
    want = _traced(tf)
    for got, expected in zip((a, b, grad_m), (want[0], want[1], want[3])):
        np.testing.assert_array_equal(got, expected)
    assert want[2] is None
