"""``tf.reduce_mean`` of integers sums in 64 bits and divides toward zero, as TensorFlow's kernel:
no overflow in the sum (a uint8 image's mean, int32 values near the limit), whatever the count.
``tf.nn.moments`` of integers stays in integers. Oracle: NumPy's int64 sum and C's division."""

import numpy as np
import pytest

import gradkit.tf as gtf

rs = np.random.RandomState(0)
CASES = {
    "uint8_image": rs.randint(0, 256, size=(2, 64, 64, 3)).astype(np.uint8),
    "int8_overflowing_sum": np.array([[100, 100, 100], [-100, -100, -99]], np.int8),
    "int16": rs.randint(-30000, 30000, size=(5, 70)).astype(np.int16),
    "int32_near_the_limit": rs.randint(-(2**31), 2**31 - 1, size=(3, 100_000)).astype(np.int32),
    "uint32": rs.randint(0, 2**32 - 1, size=(4, 5), dtype=np.uint64).astype(np.uint32),
    "negative_halves": np.array([[-3, -4], [3, 4], [-(2**31), -(2**31)]], np.int32),
}


def _c_mean(x, axis, keepdims):
    total = np.sum(x.astype(np.int64), axis=axis, keepdims=keepdims)
    count = x.size // max(total.size, 1)
    quotient = np.abs(total) // count * np.sign(total)  # C's division truncates toward zero
    return quotient.astype(x.dtype)


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("axis", [None, 0, -1, (0, -1)])
def test_integer_mean_is_the_64_bit_sum_divided_toward_zero(name, axis):
    x = CASES[name]
    for keepdims in (False, True):
        got = gtf.reduce_mean(x, axis=axis, keepdims=keepdims).numpy()
        want = _c_mean(x, axis, keepdims)
        assert got.dtype == x.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)


def test_inside_tf_function_too():
    x = CASES["int32_near_the_limit"]
    np.testing.assert_array_equal(gtf.function(lambda t: gtf.reduce_mean(t, axis=1))(x).numpy(), _c_mean(x, 1, False))


def test_integer_moments_stay_integers():
    mean, variance = gtf.nn.moments(np.array([1, 2, 3, 4], np.int32), axes=[0])
    # mean: 10 // 4 = 2; variance: the mean of (x - 2)^2 = [1, 0, 1, 4], 6 // 4 = 1.
    assert mean.dtype == np.int32 and int(mean) == 2 and int(variance) == 1


def test_matches_tensorflow():
    tf = pytest.importorskip("tensorflow")
    for x in CASES.values():
        np.testing.assert_array_equal(gtf.reduce_mean(x, axis=-1).numpy(), tf.reduce_mean(x, axis=-1).numpy())
