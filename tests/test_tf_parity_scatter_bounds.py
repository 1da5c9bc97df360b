"""Scatter indices outside the tensor raise, as in TensorFlow, and tf.tensor_scatter_nd_max/min exist.

jax's ``.at[]`` drops an update whose index is past the end and wraps a negative one, so an
index that TensorFlow refuses wrote nothing, or wrote the last row, without a word.
"""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
from test_tf_parity import run_both  # noqa: E402

X = np.arange(12, dtype=np.float32).reshape(3, 4)
ROW = np.ones(4, np.float32)

BAD = {
    "update_past_the_end": lambda tf: tf.tensor_scatter_nd_update(tf.constant(X), [[3, 0]], [1.0]),
    "update_negative": lambda tf: tf.tensor_scatter_nd_update(tf.constant(X), [[-1]], [ROW]),
    "add_column": lambda tf: tf.tensor_scatter_nd_add(tf.constant(X), [[0, 4]], [1.0]),
    "sub": lambda tf: tf.tensor_scatter_nd_sub(tf.constant(X), [[0, 4]], [1.0]),
    "max": lambda tf: tf.tensor_scatter_nd_max(tf.constant(X), [[5, 0]], [1.0]),
    "variable_scatter_nd_update": lambda tf: tf.Variable(X).scatter_nd_update([[3, 0]], [1.0]),
    "variable_scatter_update": lambda tf: tf.Variable(X).scatter_update(tf.IndexedSlices([ROW], tf.constant([3]))),
    "variable_scatter_add_negative": lambda tf: tf.Variable(X).scatter_add(tf.IndexedSlices([ROW], tf.constant([-1]))),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_an_index_outside_the_tensor_raises_as_in_tensorflow(name):
    out = run_both(BAD[name])
    assert isinstance(out, IndexError), out


def test_scatter_max_and_min_values_and_gradients_match_tensorflow():
    def program(tf):
        x, u = tf.Variable(X), tf.Variable([5.0, 0.5, 100.0])
        with tf.GradientTape() as t:
            hi = tf.tensor_scatter_nd_max(x, [[0, 0], [1, 1], [2, 2]], u)
            lo = tf.tensor_scatter_nd_min(x, [[0, 0], [1, 1], [2, 2]], u)
            loss = tf.reduce_sum(hi * X) + tf.reduce_sum(lo * lo)
        return [hi, lo, t.gradient(loss, [x, u])]

    out = run_both(program)
    assert not isinstance(out, Exception), out


def test_a_nan_update_leaves_the_entry_in_scatter_max_and_min_as_in_tensorflow():
    def program(tf):
        x = tf.constant(np.float32([1.0, np.nan, 3.0, -np.inf]))
        return [
            tf.tensor_scatter_nd_max(x, [[0], [2], [1]], [np.nan, 1.0, 5.0]),
            tf.tensor_scatter_nd_min(x, [[0], [2], [3]], [np.nan, 1.0, np.nan]),
            tf.tensor_scatter_nd_max(x, [[0], [0]], [np.nan, 7.0]),
        ]

    out = run_both(program)
    assert not isinstance(out, Exception), out
