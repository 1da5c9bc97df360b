"""tf.one_hot takes its dtype from on_value / off_value, and tf.linspace honours axis, as in TensorFlow.

one_hot always gave float32 (``on_value=5`` is int32 in TensorFlow, ``on_value=True`` bool),
and linspace dropped ``axis``: vector ends gave shape (num, n) for any axis.
"""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
from test_tf_parity import run_both  # noqa: E402

ONE_HOT = {
    "int_on_and_off": lambda tf: tf.one_hot([0, 2], 3, on_value=5, off_value=-1),
    "int_off_only": lambda tf: tf.one_hot([0, 2], 3, off_value=-1),
    "bool": lambda tf: tf.one_hot([0, 2], 3, on_value=True, off_value=False),
    "tensor_on": lambda tf: tf.one_hot([0, 2], 3, on_value=tf.constant(2.5), off_value=tf.constant(0.5)),
    "dtype_wins": lambda tf: tf.one_hot([0, 2], 3, on_value=2, dtype=tf.float32),
    "default": lambda tf: tf.one_hot([[0, -1], [1, 3]], 3, axis=0),
}


@pytest.mark.parametrize("name", sorted(ONE_HOT))
def test_one_hot_values_and_dtype_match_tensorflow(name):
    out = run_both(lambda tf: [ONE_HOT[name](tf), ONE_HOT[name](tf).dtype.name])
    assert not isinstance(out, Exception), out


def test_one_hot_has_no_gradient_for_its_values_as_in_tensorflow():
    def program(tf):
        on, x = tf.Variable(2.0), tf.Variable(1.5)
        with tf.GradientTape() as t:
            y = tf.reduce_sum(tf.one_hot([0, 2], 3, on_value=on) * x)
        return [y, t.gradient(y, [on, x])]

    out = run_both(program)
    assert not isinstance(out, Exception), out


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_linspace_with_vector_ends_follows_axis(axis):
    def program(tf):
        a = tf.Variable(np.array([0.0, 1.0], np.float32))
        with tf.GradientTape() as t:
            y = tf.linspace(a, [1.0, 3.0], 4, axis=axis)
            loss = tf.reduce_sum(y * tf.reshape(tf.range(8.0), y.shape))
        return [y, t.gradient(loss, a)]

    out = run_both(program)
    assert not isinstance(out, Exception), out
