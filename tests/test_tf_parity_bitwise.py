"""``tf.bitwise`` against real TensorFlow: every op on every integer dtype, broadcasting, negative
numbers (arithmetic right shift), and the dtype errors."""

import numpy as np
import pytest

import gradkit.tf as gtf

DTYPES = [np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32]
OPS = ["bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift"]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", OPS)
def test_binary_ops_match_tensorflow(op, dtype):
    tf = pytest.importorskip("tensorflow")
    info = np.iinfo(dtype)
    x = np.array([[0, 1, 5, info.max], [info.min, 7, 12, 3]], dtype)
    y = np.array([1, 2, 3, 0], dtype) if "shift" in op else np.array([3, 6, 10, info.max], dtype)
    want = getattr(tf.bitwise, op)(x, y).numpy()
    got = getattr(gtf.bitwise, op)(x, y).numpy()
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_invert_matches_tensorflow(dtype):
    tf = pytest.importorskip("tensorflow")
    info = np.iinfo(dtype)
    x = np.array([0, 1, info.max, info.min], dtype)
    np.testing.assert_array_equal(gtf.bitwise.invert(x).numpy(), tf.bitwise.invert(x).numpy())


def test_names_are_tensorflows():
    tf = pytest.importorskip("tensorflow")
    names = {n for n in dir(tf.bitwise) if not n.startswith("_")}
    assert names == {n for n in dir(gtf.bitwise) if not n.startswith("_")}


@pytest.mark.parametrize("case", ["floats", "two tensors of two dtypes"])
def test_errors_are_tensorflows(case):
    tf = pytest.importorskip("tensorflow")
    for lib in (tf, gtf):
        if case == "floats":
            args = (lib.constant([1.0]), lib.constant([1.0]))
        else:
            args = (lib.constant([1], lib.int32), lib.constant([1], lib.int16))
        error = gtf.errors.InvalidArgumentError if lib is gtf else (tf.errors.InvalidArgumentError, TypeError)
        with pytest.raises(error, match=r"^\[gradkit\] tf\.bitwise\.bitwise_and got" if lib is gtf else None):
            lib.bitwise.bitwise_and(*args)


def test_a_value_that_is_not_a_tensor_takes_the_tensors_dtype():
    tf = pytest.importorskip("tensorflow")
    for lib in (tf, gtf):
        out = lib.bitwise.left_shift(lib.constant([1, 2], lib.int16), np.array([3, 4], np.int32))
        assert out.dtype == lib.int16
        np.testing.assert_array_equal(out.numpy(), [8, 32])
