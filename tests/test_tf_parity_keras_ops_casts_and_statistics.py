"""``keras.ops.cast`` of out-of-range floats into narrow integer types, and the integer products
Keras computes through it (``matmul``/``dot``/``tensordot`` of uint8/int8/int16 operands), against
real Keras on TensorFlow, whose kernel truncates toward zero and wraps (300.0 is 44 as uint8), and
against that rule written by hand; ``keras.ops.batch_normalization`` with ``axis=-1`` and
statistics that broadcast as they are (a scalar, a ``(3, 4)`` mean of an ``(N, 3, 4)`` input)."""

import numpy as np
import pytest
from keras_ops_results import assert_matches_keras, case_ids

import gradkit.tf as gtf

OUT_OF_RANGE = np.array([1.7, -1.7, 300.0, -300.0, 1e10, -129.0, 128.0, np.nan], np.float32)
U8 = (np.array([[20, 20]], np.uint8), np.array([[10], [10]], np.uint8))
I8 = (np.array([100, 100], np.int8), np.array([1, 1], np.int8))
X3 = np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 7.0
M34 = np.linspace(0.0, 1.0, 12, dtype=np.float32).reshape(3, 4)

CASES = [
    ("cast", (OUT_OF_RANGE, "uint8"), {}),
    ("cast", (OUT_OF_RANGE, "int8"), {}),
    ("cast", (OUT_OF_RANGE, "int16"), {}),
    ("cast", (OUT_OF_RANGE, "uint16"), {}),
    ("convert_to_tensor", (OUT_OF_RANGE,), dict(dtype="uint8")),
    ("matmul", U8, {}),
    ("dot", I8, {}),
    ("tensordot", I8, dict(axes=1)),
    ("batch_normalization", (np.ones((2, 3), np.float32), 0.5, 2.0), dict(axis=-1)),
    ("batch_normalization", (X3, M34, M34 + 1.0), dict(axis=-1, offset=M34, scale=2.0)),
    ("batch_normalization", (X3, M34[0, :3], M34[0, :3] + 1.0), dict(axis=1)),
    ("batch_normalization", (X3, M34[0], M34[0] + 1.0), dict(axis=2, scale=M34[1])),
]


@pytest.mark.parametrize("case", CASES, ids=case_ids(CASES))
def test_op_matches_keras(case):
    assert_matches_keras(case, gtf.keras.ops)


def _wrapped(values, dtype):
    """TensorFlow's float-to-narrow-integer rule by hand: toward zero into int32 (NaN and values
    past int32's range are INT_MIN, whose low bits are 0), then the low bits."""
    out = []
    for v in values:
        whole = -(2**31) if np.isnan(v) or not -(2.0**31) <= v < 2.0**31 else int(v)
        out.append(whole)
    return np.array(out, np.int64).astype(dtype)


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "uint16"])
def test_cast_wraps_as_tensorflows_kernel(dtype):
    got = gtf.keras.ops.cast(OUT_OF_RANGE, dtype).numpy()
    np.testing.assert_array_equal(got, _wrapped(OUT_OF_RANGE, dtype))
    np.testing.assert_array_equal(got, gtf.cast(OUT_OF_RANGE, dtype).numpy())


def test_narrow_integer_products_wrap():
    assert gtf.keras.ops.matmul(*U8).numpy().ravel().tolist() == [400 % 256]
    assert int(gtf.keras.ops.dot(*I8).numpy()) == 200 - 256


def test_batch_normalization_broadcasts_scalar_statistics_on_the_last_axis():
    got = gtf.keras.ops.batch_normalization(X3, 0.5, 2.0, axis=-1, offset=1.0, scale=3.0).numpy()
    np.testing.assert_allclose(got, (X3 - 0.5) / np.sqrt(2.0 + 1e-3) * 3.0 + 1.0, rtol=1e-6)
