"""keras.ops where Keras on TensorFlow refuses what gradkit silently answered: ``digitize`` with bins
out of order, ``correlate(mode='valid')`` with the shorter array first, float-only activations
given integers; and ``soft_shrink`` of integers, shrunk in float32 and truncated back as Keras does.
Against Keras on TensorFlow (skipped without it) and NumPy."""

import numpy as np
import pytest

import gradkit.tf as gtf

_X = np.array([-1.0, 0.0, 0.5, 2.0], np.float32)


def test_digitize_refuses_bins_out_of_order():
    with pytest.raises(gtf.errors.InvalidArgumentError, match=r"\[gradkit\].*increasing"):
        gtf.keras.ops.digitize(_X, [1.0, 0.0, -1.0])
    for bins in ([0.0, 0.0, 1.0], [0.0, 1.0, 1.0, 2.0]):  # repeated bins are in order
        np.testing.assert_array_equal(gtf.keras.ops.digitize(_X, bins), np.digitize(_X, bins))
    tf = pytest.importorskip("tensorflow")
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.keras.ops.digitize(_X, [1.0, 0.0, -1.0])


def test_correlate_valid_refuses_the_shorter_array_first():
    a, v = np.array([1.0, 2.0, 3.0], np.float32), np.array([1.0, 0.0, -1.0, 2.0, 5.0], np.float32)
    with pytest.raises(gtf.errors.InvalidArgumentError, match=r"\[gradkit\].*shorter"):
        gtf.keras.ops.correlate(a, v, mode="valid")
    np.testing.assert_allclose(gtf.keras.ops.correlate(v, a, mode="valid"), np.correlate(v, a, "valid"))
    for mode in ("full", "same"):
        np.testing.assert_allclose(gtf.keras.ops.correlate(a, v, mode=mode), np.correlate(a, v, mode))
    tf = pytest.importorskip("tensorflow")
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.keras.ops.correlate(a, v, mode="valid")


_INTS = {"int32": np.array([-4, -1, 0, 1, 3], np.int32), "uint8": np.array([0, 1, 5, 200], np.uint8)}


@pytest.mark.parametrize("dtype", ["int32", "uint8"])
def test_soft_shrink_of_integers(dtype):
    x = _INTS[dtype]
    got = gtf.keras.ops.soft_shrink(x)
    # x - 0.5 (x + 0.5 below -0.5) in float, truncated toward zero, 0 within 0.5 of 0: by hand.
    want = np.where(x > 0.5, x - 0.5, np.where(x.astype(np.float32) < -0.5, x + 0.5, 0.0)).astype(np.float32)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, np.trunc(want).astype(dtype))
    tf = pytest.importorskip("tensorflow")
    np.testing.assert_array_equal(got, tf.keras.ops.soft_shrink(x).numpy())


@pytest.mark.parametrize("name", ["hard_tanh", "hard_shrink", "celu", "sparse_plus", "sparse_sigmoid", "threshold"])
@pytest.mark.parametrize("dtype", ["int32", "uint8"])
def test_float_activations_refuse_integers(name, dtype):
    args = (0.5, -1.0) if name == "threshold" else ()
    with pytest.raises(TypeError, match=rf"\[gradkit\] tf.keras.ops.{name}"):
        getattr(gtf.keras.ops, name)(_INTS[dtype], *args)
    tf = pytest.importorskip("tensorflow")
    with pytest.raises((TypeError, tf.errors.InvalidArgumentError)):
        getattr(tf.keras.ops, name)(_INTS[dtype], *args)


def test_threshold_and_hard_shrink_take_integer_arguments_for_integers():
    x = _INTS["int32"]
    np.testing.assert_array_equal(gtf.keras.ops.threshold(x, 0, -7), np.where(x > 0, x, -7))
    np.testing.assert_array_equal(gtf.keras.ops.hard_shrink(x, threshold=1), np.where(np.abs(x) > 1, x, 0))
    # An int the dtype cannot hold wraps round, as in Keras: -1 is 255 in uint8.
    np.testing.assert_array_equal(gtf.keras.ops.threshold(_INTS["uint8"], 1, -1), [255, 255, 5, 200])
    tf = pytest.importorskip("tensorflow")
    np.testing.assert_array_equal(gtf.keras.ops.threshold(x, 0, -7), tf.keras.ops.threshold(x, 0, -7).numpy())
    np.testing.assert_array_equal(gtf.keras.ops.hard_shrink(x, 1), tf.keras.ops.hard_shrink(x, 1).numpy())
