"""Ordering ops treat -0.0 and 0.0 as equal, as TensorFlow compares them: ties keep their index
order in top_k, sort and argsort, eager, under a tape and in tf.function, so values, indices and
gradients go to the same entries. A bool scatter_nd or-s its updates. Oracles: the orders by
hand (a stable sort of equal keys), and TensorFlow where it is installed."""

import numpy as np
import pytest

import gradkit.tf as gtf

Z = np.array([0.0, -0.0, 0.0, -1.0, 2.0], np.float32)


def _program(tf):
    v = tf.Variable(Z)
    with tf.GradientTape() as tape:
        top = tf.math.top_k(v, 3)
        ascending = tf.sort(v)
        descending = tf.sort(v, direction="DESCENDING")
        y = tf.reduce_sum(top.values * [1.0, 10.0, 100.0]) + tf.reduce_sum(ascending * [1.0, 2.0, 3.0, 4.0, 5.0])
    compiled = tf.function(lambda x: tf.math.top_k(x, 3).indices)
    return {
        "top_indices": top.indices.numpy(),
        "ascending_signs": np.signbit(ascending.numpy()),
        "descending_signs": np.signbit(descending.numpy()),
        "argsort": tf.argsort(v, stable=True).numpy(),
        "argsort_descending": tf.argsort(v, direction="DESCENDING", stable=True).numpy(),
        "grad": tape.gradient(y, v).numpy(),
        "compiled": compiled(tf.constant(Z)).numpy(),
        "scatter_bool": tf.scatter_nd([[1], [1], [3]], [True, False, True], [4]).numpy(),
    }


def test_signed_zeros_are_ties_kept_in_index_order():
    got = _program(gtf)
    # Keys 0, 0, 0, -1, 2: top 3 is 2 (index 4), then the zeros at 0 and 1 in order.
    np.testing.assert_array_equal(got["top_indices"], [4, 0, 1])
    np.testing.assert_array_equal(got["compiled"], [4, 0, 1])
    np.testing.assert_array_equal(got["argsort"], [3, 0, 1, 2, 4])
    np.testing.assert_array_equal(got["argsort_descending"], [4, 0, 1, 2, 3])
    np.testing.assert_array_equal(got["ascending_signs"], [True, False, True, False, False])  # -1, 0, -0, 0, 2
    np.testing.assert_array_equal(got["descending_signs"], [False, False, True, False, True])  # 2, 0, -0, 0, -1
    # top_k: 1 to index 4, 10 to index 0, 100 to index 1; sort: weights 1..5 in argsort order.
    np.testing.assert_allclose(got["grad"], [10.0 + 2.0, 100.0 + 3.0, 4.0, 1.0, 1.0 + 5.0])
    np.testing.assert_array_equal(got["scatter_bool"], [False, True, False, True])


def test_matches_tensorflow():
    tf_real = pytest.importorskip("tensorflow")
    ours, theirs = _program(gtf), _program(tf_real)
    for key in theirs:
        np.testing.assert_array_equal(ours[key], theirs[key], err_msg=key)
