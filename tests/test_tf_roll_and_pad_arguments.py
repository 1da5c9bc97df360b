"""tf.roll with tensors of shifts and axes, tf.pad of a bool tensor with the default zero, and
tf.repeat with negative counts."""

import numpy as np
import pytest

import gradkit.tf as gtf

X = np.arange(6).reshape(2, 3)


def test_roll_takes_tensor_vectors():
    expected = np.roll(X, [1, 1], [0, 1])
    assert gtf.roll(X, gtf.constant([1, 1]), [0, 1]).numpy().tolist() == expected.tolist()
    assert gtf.roll(X, gtf.constant([1, 1]), gtf.constant([0, 1])).numpy().tolist() == expected.tolist()
    traced = gtf.function(lambda s: gtf.roll(X, s, [0, 1]))(gtf.constant([1, 1]))
    assert traced.numpy().tolist() == expected.tolist()


def test_pad_of_bools_with_the_default_zero():
    padded = gtf.pad(gtf.constant([True, False]), [[1, 1]])
    assert padded.numpy().tolist() == [False, True, False, False]


def test_roll_and_pad_match_tensorflow():
    tf = pytest.importorskip("tensorflow")
    for module in (tf, gtf):
        got = [
            module.roll(X, module.constant([1, -1]), module.constant([0, 1])).numpy().tolist(),
            module.pad(module.constant([True, False]), [[1, 1]]).numpy().tolist(),
        ]
        if module is tf:
            theirs = got
    assert got == theirs


def test_repeat_with_negative_counts():
    # Counts per element: a negative one repeats its element no times; a single negative count is refused.
    assert gtf.repeat([10, 20, 30], [1, -1, 2], axis=0).numpy().tolist() == [10, 30, 30]
    with pytest.raises(gtf.errors.InvalidArgumentError, match=r"^\[gradkit\] tf.repeat got repeats=-1"):
        gtf.repeat([1, 2], -1)


def test_a_shift_past_int32_rolls_by_its_remainder_eagerly_and_traced():
    """Oracle: NumPy's roll by the same Python-int shift (a whole number of turns plus the rest)."""
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    shift = [2**31 + 1, -(2**33) - 3]
    want = np.roll(x, shift, axis=(0, 1))
    np.testing.assert_array_equal(gtf.roll(gtf.constant(x), shift, [0, 1]).numpy(), want)
    traced = gtf.function(lambda t: gtf.roll(t, shift, [0, 1]))
    np.testing.assert_array_equal(traced(gtf.constant(x)).numpy(), want)
