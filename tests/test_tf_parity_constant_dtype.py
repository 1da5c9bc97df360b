"""A Python value that the requested dtype cannot hold raises, as in TensorFlow.

``tf.constant(1.7, dtype=tf.int32)`` raises TypeError in TensorFlow; gradkit.tf cast it to 1
silently (also in tf.Variable and tf.convert_to_tensor). NumPy arrays are cast in both.
"""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
from test_tf_parity import run_both  # noqa: E402

REFUSED = {
    "float_to_int": lambda tf: tf.constant(1.7, dtype=tf.int32),
    "whole_float_to_int": lambda tf: tf.constant(2.0, dtype=tf.int32),
    "list_with_a_float_to_int": lambda tf: tf.constant([1, 2.5], dtype=tf.int32),
    "int_to_bool": lambda tf: tf.constant(3, dtype=tf.bool),
    "complex_to_float": lambda tf: tf.constant(1 + 2j, dtype=tf.float32),
    "variable": lambda tf: tf.Variable(1.7, dtype=tf.int32),
    "convert_to_tensor": lambda tf: tf.convert_to_tensor(1.7, dtype=tf.int32),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_value_the_dtype_cannot_hold_raises_type_error(name):
    out = run_both(REFUSED[name])
    assert isinstance(out, TypeError), out


def test_values_the_dtype_holds_and_numpy_arrays_convert_as_in_tensorflow():
    def program(tf):
        return [
            tf.constant(np.array([1.7, -2.5]), dtype=tf.int32),
            tf.constant(True, dtype=tf.int32),
            tf.constant([1, 2], dtype=tf.float32),
            tf.Variable(1, dtype=tf.float32),
            tf.constant(1.5, dtype=tf.complex64),
            tf.constant(0, shape=[2], dtype=tf.float32),
            tf.convert_to_tensor([3, 4], dtype=tf.float16),
            tf.constant([], dtype=tf.int32),  # empty: no value to lose
            tf.constant([[]], dtype=tf.bool),
            tf.Variable([], dtype=tf.int32),
        ]

    out = run_both(program)
    assert not isinstance(out, Exception), out
