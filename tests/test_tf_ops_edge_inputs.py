"""Op inputs at the edges, as TensorFlow takes them: integer division by a known zero raises,
a Python int beyond 32 bits meets a float tensor as a float, one-argument ``tf.where`` of numbers
gives the nonzero coordinates, ``gather_nd`` with empty indices selects all of ``params``, and an
exclusive cumulative sum of nothing is nothing. Oracles: NumPy, and TensorFlow."""

import numpy as np
import pytest

import gradkit.tf as gtf


@pytest.mark.parametrize(
    "op",
    [gtf.math.floordiv, gtf.math.floormod, gtf.math.mod, gtf.truncatediv, gtf.truncatemod],
    ids=lambda f: f.__name__,
)
def test_integer_division_by_a_known_zero_raises(op):
    with pytest.raises(gtf.errors.InvalidArgumentError, match=r"\[gradkit\].*Integer division by zero"):
        op(gtf.constant([3, 4]), gtf.constant([1, 0]))
    np.testing.assert_array_equal(op(gtf.constant([7, -7]), gtf.constant([2, 2])).numpy(), _numpy(op)([7, -7], 2))


def _numpy(op):
    return {
        "floordiv": np.floor_divide,
        "floormod": np.mod,
        "truncatediv": lambda a, b: np.trunc(np.divide(a, b)).astype(int),
        "truncatemod": np.fmod,
    }[op.__name__]


def test_a_python_int_beyond_32_bits_meets_floats_as_a_float():
    x = np.array([1.0, 3.0], np.float32)
    t = gtf.constant(x)
    np.testing.assert_allclose((t / 2**32).numpy(), x / np.float32(2.0**32), rtol=1e-7)
    np.testing.assert_allclose((2**40 * t).numpy(), x * np.float32(2.0**40), rtol=1e-7)
    np.testing.assert_allclose((t - 2**40).numpy(), x - np.float32(2.0**40), rtol=1e-7)
    v = gtf.Variable(x)
    with gtf.GradientTape() as tape:
        loss = gtf.reduce_sum(v * 2**33)
    np.testing.assert_allclose(tape.gradient(loss, v).numpy(), [2.0**33] * 2, rtol=1e-7)


@pytest.mark.parametrize("dtype", [np.int32, np.float32])
def test_one_argument_where_of_numbers_gives_the_nonzero_coordinates(dtype):
    c = np.array([[0, 2, 0], [-1, 0, 3]], dtype)
    np.testing.assert_array_equal(gtf.where(c).numpy(), np.argwhere(c))
    with pytest.raises(TypeError, match=r"\[gradkit\].*bool condition"):
        gtf.where(c, 1.0, 0.0)  # choosing between x and y still takes a bool condition


def test_gather_nd_with_empty_indices_selects_all_of_params():
    params = np.arange(12, dtype=np.float32).reshape(3, 4)
    out = gtf.gather_nd(params, np.zeros((2, 0), np.int32))
    np.testing.assert_array_equal(out.numpy(), np.broadcast_to(params, (2, 3, 4)))


@pytest.mark.parametrize("reverse", [False, True])
def test_exclusive_cumsum_of_nothing_is_nothing(reverse):
    assert gtf.cumsum(np.zeros((0, 3), np.float32), axis=0, exclusive=True, reverse=reverse).shape == (0, 3)


def test_matches_tensorflow():
    tf = pytest.importorskip("tensorflow")
    c = np.array([[0, 2, 0], [-1, 0, 3]], np.int32)
    np.testing.assert_array_equal(gtf.where(c).numpy(), tf.where(c).numpy())
    params = np.arange(12, dtype=np.float32).reshape(3, 4)
    idx = np.zeros((2, 0), np.int32)
    np.testing.assert_array_equal(gtf.gather_nd(params, idx).numpy(), tf.gather_nd(params, idx).numpy())
    x = tf.constant([1.0, 3.0])
    np.testing.assert_allclose((gtf.constant([1.0, 3.0]) / 2**32).numpy(), (x / 2**32).numpy(), rtol=1e-7)
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.math.floordiv(tf.constant([3, 4]), tf.constant([1, 0]))


def test_a_user_built_indexed_slices_converts_to_its_dense_tensor():
    values = gtf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    slices = gtf.IndexedSlices(values, gtf.constant([2, 0, 2]), gtf.constant([4, 2]))
    want = np.zeros((4, 2), np.float32)
    np.add.at(want, [2, 0, 2], values.numpy())  # a repeated index sums its rows
    np.testing.assert_array_equal(gtf.convert_to_tensor(slices).numpy(), want)
    assert slices.shape.as_list() == [4, 2] and slices.dtype == np.float32
    np.testing.assert_array_equal(gtf.convert_to_tensor(-slices).numpy(), -want)
    with pytest.raises(ValueError, match=r"\[gradkit\].*dense_shape"):
        gtf.convert_to_tensor(gtf.IndexedSlices(values, gtf.constant([0, 1, 2])))
