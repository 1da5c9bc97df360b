"""A Variable's slice read as TensorFlow reads it, against real TensorFlow: ``v[1]`` is a tensor
(sliced again, ``.numpy()``, ``.shape.as_list()``, arithmetic), and ``v.ref()`` is a key that
compares by identity, not by value."""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
from test_tf_parity import programs, run_program  # noqa: E402

M = np.arange(12.0, dtype=np.float32).reshape(3, 4)


def p_slice_of_a_slice(tf):
    v = tf.Variable(M)
    return v[1][2].numpy(), v[1:][0], v[0:2][1:, ::2], v[1][tf.constant(0)]


def p_slice_shape_is_a_tensor_shape(tf):
    v = tf.Variable(M)
    return v[1].shape.as_list(), v[1].shape.rank, v[1][None].shape.as_list(), v[1:, 2].get_shape().as_list()


def p_slice_arithmetic_gives_tensors(tf):
    v = tf.Variable(M)
    return (v[1] * 2).numpy(), (1.0 - v[:, 0]).numpy(), (v[0] // 2.0).numpy(), abs(-v[2]).numpy()


def p_gradient_through_slices_of_slices(tf):
    v = tf.Variable(M)
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(v[1][1:3] * v[1:][0][0]) + tf.reduce_sum(v[2] * 3.0)
    return tape.gradient(y, v)


def p_references_compare_by_identity(tf):
    c, d = tf.Variable(0.0), tf.Variable(0.0)
    a, b = tf.Variable([1.0, 2.0]), tf.Variable([1.0, 2.0])
    table = {a.ref(): "a", b.ref(): "b"}
    return [
        c.ref() in [d.ref()],
        c.ref() == d.ref(),
        c.ref() == c.ref(),
        a.ref() in [b.ref(), a.ref()],
        table[b.ref()] == "b",
        a.ref().deref() is a,
        len({v.ref() for v in (a, b, a, c)}),
    ]


@pytest.mark.parametrize("program", programs(globals()), ids=lambda p: p.__name__)
def test_variable_slices_and_references_match_tensorflow(program):
    outcome = run_program(program)
    assert isinstance(outcome, Exception) == ("refuses" in program.__name__), outcome
