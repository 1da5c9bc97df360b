"""``tf.constant`` of a tensor a tape records is that tensor, as TensorFlow's eager ``tf.constant``
returns the EagerTensor it is given: the gradient goes through it (3 per entry for ``3 x``), and
the same inside a ``tf.function`` a tape records. Of a Variable it is a copy of the value, without
a gradient, as in TensorFlow. Oracle: the derivative by hand, TensorFlow eagerly where installed."""

import numpy as np
import pytest

import gradkit.tf as gtf


def _gradients(tf):
    x = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.constant(x * 3.0))
    from_tensor = tape.gradient(y, x)
    with tf.GradientTape() as tape:
        z = tf.reduce_sum(tf.constant(x))
    return np.asarray(from_tensor), tape.gradient(z, x)


def test_constant_of_a_recorded_tensor_keeps_its_gradient():
    from_tensor, from_variable = _gradients(gtf)
    np.testing.assert_array_equal(from_tensor, [3.0, 3.0])
    assert from_variable is None
    x = gtf.Variable([1.0, 2.0])
    program = gtf.function(lambda: gtf.reduce_sum(gtf.constant(x * 3.0)))
    with gtf.GradientTape() as tape:
        y = program()
    np.testing.assert_array_equal(tape.gradient(y, x), [3.0, 3.0])
    tf = pytest.importorskip("tensorflow")
    want = _gradients(tf)
    np.testing.assert_array_equal(from_tensor, want[0])
    assert want[1] is None
