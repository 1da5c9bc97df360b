"""The dtype of ``tf.constant`` of a Python list that holds NumPy values: TensorFlow takes a
float dtype from a NumPy first element and Python's defaults otherwise; compared with
TensorFlow (float64 read as float32 where JAX has no 64-bit types, as the README says)."""

import jax
import numpy as np
import pytest

import gradkit.tf as gtf

CASES = {
    "float16_first": [np.float16(1.0), 2.0],
    "float16_later": [2.0, np.float16(1.0)],
    "float16_row_first": [[np.float16(1.0)], [2.0]],
    "float16_array_first": [np.array([1.5], np.float16), [2.0]],
    "float32_then_float64": [np.float32(1.0), np.float64(2.0)],
    "float64_first": [np.float64(1.5), 2.0],
    "int64_first": [np.int64(3), 2],
    "int32_then_float": [np.int32(1), 2.5],
    "uint8_then_int": [np.uint8(3), 300],
    "python_floats": [1.0, 2.0],
}


def _without_x64(name: str) -> str:
    return "float32" if name == "float64" and not jax.config.jax_enable_x64 else name


@pytest.mark.parametrize("case", CASES)
def test_list_dtype_matches_tensorflow(case):
    tf = pytest.importorskip("tensorflow")
    value = CASES[case]
    want = _without_x64(tf.constant(value).dtype.name)
    assert gtf.constant(value).dtype.name == want
    assert gtf.convert_to_tensor(value).dtype.name == want
    np.testing.assert_array_equal(gtf.constant(value).numpy(), tf.constant(value).numpy().astype(want))
