"""Tensor.numpy(): a NumPy scalar for a 0-d tensor (np.float32, np.int32, np.bool_), an array of
its own for the others, as TensorFlow's EagerTensor.numpy(); against NumPy and real TensorFlow."""

import gc
import weakref

import numpy as np
import pytest

import gradkit as gk
import gradkit.tf as gtf

PROGRAMS = {
    "constant": lambda tf: tf.constant(1.5),
    "int constant": lambda tf: tf.constant(3),
    "bool": lambda tf: tf.constant(2.0) > 1.0,
    "reduction": lambda tf: tf.reduce_sum(tf.ones([3])),
    "vector": lambda tf: tf.constant([1.0, 2.0]) * 2.0,
    "matrix": lambda tf: tf.reshape(tf.range(4), [2, 2]),
}


def _gradient(tf):
    x = tf.Variable(3.0)
    with tf.GradientTape() as tape:
        y = x * x
    return tape.gradient(y, x)


PROGRAMS["gradient"] = _gradient


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_numpy_is_a_scalar_for_0d_and_an_array_otherwise(name):
    out = PROGRAMS[name](gtf).numpy()
    value = np.asarray(out)
    assert type(out) is (type(value[()]) if value.ndim == 0 else np.ndarray)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_numpy_matches_tensorflow(name):
    tf = pytest.importorskip("tensorflow")
    ours, theirs = PROGRAMS[name](gtf).numpy(), PROGRAMS[name](tf).numpy()
    assert type(ours) is type(theirs) and ours.dtype == theirs.dtype and np.array_equal(ours, theirs)


def test_an_array_is_writable_and_of_its_own():
    t = gtf.constant([1.0, 2.0])
    out = t.numpy()
    out[0] = 5.0
    assert t.numpy()[0] == 1.0


@pytest.mark.parametrize("value", [2.0, [2.0, 3.0]], ids=["scalar", "vector"])
def test_a_value_that_left_a_tape_does_not_keep_its_graph_alive(value):
    # (tests/test_tape_api.py checks that tape.explain still names where a scalar left.)
    v = gk.Variable(value)
    with gk.GradientTape():
        y = v * 2.0
        kept = y.numpy()
    node = weakref.ref(y._node)
    del y
    gc.collect()
    assert node() is None and np.array_equal(kept, np.asarray(value, np.float32) * 2)
