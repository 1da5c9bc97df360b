"""A Variable indexed by a tensor (``v[tf.constant(1)]``): read, assigned, differentiated, compiled.

TensorFlow takes a tensor as an index of a Variable as it takes a Python int; the index carries
no gradient. Checked against real TensorFlow where it is installed and by hand everywhere.
"""

from __future__ import annotations

import numpy as np
import pytest

import gradkit as gk
import gradkit.tf as gtf

V0 = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], np.float32)


def program(tf):
    """Reads, slice assignments and a gradient through a tensor-indexed Variable."""
    v = tf.Variable(V0)
    row = v[tf.constant(1)].numpy()
    v[tf.constant(0), tf.constant(2)].assign(7.0)
    v[tf.constant(1), :2].assign(np.full((2,), 0.5, np.float32))
    after = v.numpy()
    w = tf.Variable(V0)
    with tf.GradientTape() as tape:
        i = tf.argmax(tf.reduce_sum(w, axis=1))  # an integer tensor computed on the tape: row 1
        loss = tf.reduce_sum(w[i] ** 2) + tf.reduce_sum(w[tf.constant(0), 1:] * 3.0)
    return row, after, tape.gradient(loss, w).numpy()


def test_tensor_indices_read_assign_and_differentiate_by_hand():
    row, after, grad = program(gtf)
    np.testing.assert_array_equal(row, V0[1])
    np.testing.assert_array_equal(after, np.array([[1.0, 2.0, 7.0], [0.5, 0.5, 6.0]], np.float32))
    want = np.zeros_like(V0)
    want[1] = 2.0 * V0[1]  # d sum(w[1]^2) / d w[1]
    want[0, 1:] = 3.0
    np.testing.assert_allclose(grad, want)


def test_tensor_indices_match_tensorflow():
    tf = pytest.importorskip("tensorflow")
    for got, want in zip(program(gtf), program(tf)):
        np.testing.assert_allclose(got, want)


def test_a_boolean_mask_tensor_selects_rows_as_numpy_reads_it():
    v = gtf.Variable(V0)
    v[gtf.constant([True, False])].assign(np.full((1, 3), 0.5, np.float32))
    np.testing.assert_array_equal(v.numpy(), np.array([[0.5, 0.5, 0.5], [4.0, 5.0, 6.0]], np.float32))


def test_a_traced_tensor_index_inside_a_compiled_function():
    v = gk.Variable(V0)

    @gk.jit
    def take_and_bump(i):
        out = v[i] * 1.0  # i is traced: a runtime index of the one compiled program
        v[i].assign_add(1.0)
        return out

    np.testing.assert_array_equal(np.asarray(take_and_bump(1)), V0[1])
    np.testing.assert_array_equal(np.asarray(take_and_bump(0)), V0[0])
    np.testing.assert_array_equal(np.asarray(v.value), V0 + 1.0)
