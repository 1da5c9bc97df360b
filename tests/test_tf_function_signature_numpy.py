"""A ``tf.function`` with an ``input_signature`` converts NumPy arrays and Python lists to the
spec's dtype, as TensorFlow does, and refuses a tensor of another dtype, as TensorFlow does; a
string result, which TensorFlow returns as a string tensor, is refused with a clear error.
Checked against real TensorFlow where it is installed; the expected values are by hand."""

import numpy as np
import pytest

import gradkit.tf as gtf

CASES = {
    "numpy_int64": (np.array([1, 2], np.int64), [2.0, 4.0]),
    "numpy_float64": (np.array([1.5, 2.0]), [3.0, 4.0]),
    "numpy_bool": (np.array([True, False]), [2.0, 0.0]),
    "python_list": ([1, 2], [2.0, 4.0]),
}


def _doubled(tf):
    return tf.function(lambda x: x * 2, input_signature=[tf.TensorSpec([None], tf.float32)])


@pytest.mark.parametrize("name", sorted(CASES))
def test_numpy_and_python_values_are_converted_to_the_spec(name):
    value, expected = CASES[name]
    out = _doubled(gtf)(value)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out.numpy(), expected)
    tf_real = pytest.importorskip("tensorflow")
    np.testing.assert_array_equal(_doubled(tf_real)(value).numpy(), expected)


def test_a_tensor_of_another_dtype_is_refused():
    with pytest.raises(TypeError, match=r"^\[gradkit\]"):
        _doubled(gtf)(gtf.constant([1, 2]))
    tf_real = pytest.importorskip("tensorflow")
    with pytest.raises((TypeError, ValueError)):
        _doubled(tf_real)(tf_real.constant([1, 2]))


def test_a_string_result_is_refused_clearly():
    with pytest.raises(TypeError, match=r"^\[gradkit\] a tf.function returned the string 'a'"):
        gtf.function(lambda x: ("a", x))(gtf.constant(1.0))


def test_an_input_signature_refuses_python_values_its_dtype_cannot_hold():
    # TensorFlow: TypeError "Cannot convert 2.7 to EagerTensor of dtype int32"; a cast would truncate.
    @gtf.function(input_signature=[gtf.TensorSpec([], gtf.int32)])
    def twice(n):
        return n * 2

    with pytest.raises(TypeError, match=r"\[gradkit\]"):
        twice(2.7)
    assert int(twice(3)) == 6
