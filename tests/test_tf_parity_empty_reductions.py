"""tf.reduce_max / reduce_min of nothing give TensorFlow's identities instead of raising.

jnp.max has no identity ("zero-size array to reduction operation max"); TensorFlow gives -inf
(max) and inf (min) for floats and the integer limits for ints, which masked or ragged code
(a row with no entries) relies on.
"""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
from test_tf_parity import run_both  # noqa: E402


def test_empty_reductions_match_tensorflow():
    def program(tf):
        return [
            tf.reduce_max(tf.zeros([0])),
            tf.reduce_min(tf.zeros([0])),
            tf.reduce_max(tf.zeros([0], tf.int32)),
            tf.reduce_min(tf.zeros([0], tf.int32)),
            tf.reduce_min(tf.zeros([2, 0]), axis=1),
            tf.reduce_max(tf.zeros([0, 2]), axis=0, keepdims=True),
            tf.reduce_max(tf.zeros([0, 2]), axis=1),
            tf.math.reduce_max(tf.zeros([3, 0, 2]), axis=[0, 1]),
        ]

    out = run_both(program)
    assert not isinstance(out, Exception), out


def test_gradient_of_an_empty_reduction_is_empty_and_of_a_full_one_unchanged():
    def program(tf):
        empty, full = (
            tf.Variable(tf.zeros([2, 0])),
            tf.Variable(np.array([[1.0, 3.0, 3.0], [2.0, 0.0, 2.0]], np.float32)),
        )
        with tf.GradientTape() as t:
            loss = tf.reduce_sum(tf.reduce_max(empty, axis=1)) * 0.0 + tf.reduce_sum(
                tf.reduce_max(full, axis=1) * [1.0, 2.0]
            )
            loss += tf.reduce_min(full)
        return t.gradient(loss, [empty, full])

    out = run_both(program)
    assert not isinstance(out, Exception), out
