"""A slice of a Variable (``v[0]``) is a tensor wherever TensorFlow takes one: a target or
source of ``jacobian`` and ``batch_jacobian``, a source of ``gradient``, a tensor to
``watch``. Hand-derived values, and real TensorFlow where it is installed."""

from __future__ import annotations

import numpy as np
import pytest

import gradkit.tf as gtf

V0 = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)


def slices_as_targets(tf):
    v = tf.Variable(V0)
    with tf.GradientTape(persistent=True) as tape:
        first = v[0]
    return [
        tape.jacobian(first, v),  # d v[0] / d v: ones at row 0
        tape.jacobian(v[1], v),  # a slice taken after recording: not on the tape
        tape.batch_jacobian(v[0:2], v),  # likewise: zeros, as TensorFlow's batch Jacobian gives
    ]


def slices_as_sources(tf):
    v = tf.Variable(V0)
    with tf.GradientTape(persistent=True) as tape:
        rows = v[0:2]
        tape.watch(rows)
        y = rows * 2.0
    return [
        tape.gradient(y, rows),
        tape.gradient(y, v[0]),  # a slice the tape never saw
        tape.jacobian(y, rows),
        tape.batch_jacobian(y, rows),
        tape.batch_jacobian(y, v[0:2]),
    ]


def as_arrays(results):
    return [None if r is None else np.asarray(r) for r in results]


def test_slices_as_jacobian_targets():
    jac, later, batch = as_arrays(slices_as_targets(gtf))
    want = np.zeros((2, 2, 2), np.float32)
    want[0, 0, 0] = want[1, 0, 1] = 1.0
    np.testing.assert_array_equal(jac, want)
    assert later is None
    np.testing.assert_array_equal(batch, np.zeros((2, 2, 2)))


def test_slices_as_sources_and_watched_tensors():
    grad, unseen, jac, batch, batch_unseen = as_arrays(slices_as_sources(gtf))
    np.testing.assert_array_equal(grad, np.full((2, 2), 2.0))
    assert unseen is None
    np.testing.assert_array_equal(jac, 2.0 * np.eye(4).reshape(2, 2, 2, 2))
    np.testing.assert_array_equal(batch, 2.0 * np.stack([np.eye(2)] * 2))
    np.testing.assert_array_equal(batch_unseen, np.zeros((2, 2, 2)))


@pytest.mark.parametrize("program", [slices_as_targets, slices_as_sources], ids=lambda p: p.__name__)
def test_the_same_programs_in_tensorflow(program):
    tf = pytest.importorskip("tensorflow")
    for want, got in zip(as_arrays(program(tf)), as_arrays(program(gtf))):
        assert (want is None) == (got is None)
        if want is not None:
            np.testing.assert_array_equal(got, want)
