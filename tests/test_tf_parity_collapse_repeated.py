"""``tf.nn.collapse_repeated`` against real TensorFlow: runs merged, rows cut at their lengths,
the result as wide as the longest new length; inside ``tf.function`` the input's width."""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")

from test_tf_parity import run_both, run_both_ok  # noqa: E402

import gradkit.tf as gtf  # noqa: E402

CASES = {
    "runs": ([[1, 1, 2, 2, 1], [1, 2, 3, 4, 5]], [5, 5]),
    "cut_at_lengths": ([[3, 3, 3, 0, 0], [7, 7, 1, 1, 1]], [3, 2]),
    "empty_rows": ([[1, 1], [2, 2]], [0, 0]),
    "float_labels": ([[1.5, 1.5, 2.0, 2.0]], [4]),
    "zeros_are_labels_too": ([[0, 0, 5, 0]], [4]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_parity(case):
    labels, lengths = CASES[case]
    run_both_ok(lambda tf: list(tf.nn.collapse_repeated(labels, lengths)))


def test_random_rows_against_tensorflow():
    rng = np.random.default_rng(3)
    labels = rng.integers(0, 3, size=(6, 9)).astype("int32")
    lengths = rng.integers(0, 10, size=6).astype("int32")
    run_both_ok(lambda tf: list(tf.nn.collapse_repeated(labels, lengths)))


def test_inside_tf_function_keeps_the_input_width():
    labels = np.array([[1, 1, 2, 2, 1], [1, 2, 3, 4, 5]], "int32")
    lengths = np.array([5, 3], "int32")
    collapsed, new_lengths = gtf.function(gtf.nn.collapse_repeated)(labels, lengths)
    expected, expected_lengths = tf_real.nn.collapse_repeated(labels, lengths)
    width = expected.shape[1]
    np.testing.assert_array_equal(collapsed.numpy()[:, :width], expected.numpy())
    np.testing.assert_array_equal(collapsed.numpy()[:, width:], 0)
    np.testing.assert_array_equal(new_lengths.numpy(), expected_lengths.numpy())


def test_refuses_mismatched_lengths():
    assert isinstance(run_both(lambda tf: tf.nn.collapse_repeated([[1, 1, 2]], [3, 3])), Exception)
    with pytest.raises(ValueError, match=r"\[gradkit\] tf.nn.collapse_repeated"):
        gtf.nn.collapse_repeated([[1, 1, 2]], [3, 3])
