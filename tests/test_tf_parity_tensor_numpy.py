"""Tensor.numpy(): a NumPy scalar for a 0-d tensor (np.float32, np.int32, np.bool_), an array of
its own for the others, as TensorFlow's EagerTensor.numpy(); against NumPy and real TensorFlow.
A scalar that left a recording tape this way is still named by ``tape.explain``."""

import gc
import inspect
import os
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


def test_explain_names_the_line_where_a_scalar_left_the_tape():
    v, w = gk.Variable(2.0), gk.Variable(3.0)
    with gk.GradientTape() as tape:
        y = v * 2.0
        line = inspect.currentframe().f_lineno + 1
        z = w * y.numpy()
    assert tape.gradient(z, v) is None
    assert f"{os.path.basename(__file__)}:{line}" in tape.explain(z, v)


def test_a_scalar_that_left_a_tape_does_not_keep_its_graph_alive():
    v = gk.Variable(2.0)
    with gk.GradientTape():
        y = v * 2.0
        kept = y.numpy()
    node = weakref.ref(y._node)
    del y
    gc.collect()
    assert node() is None and kept == np.float32(4.0)


def test_an_array_that_left_a_tape_does_not_keep_its_graph_alive():
    v = gk.Variable([2.0, 3.0])
    with gk.GradientTape():
        y = v * 2.0
        kept = y.numpy()
    node = weakref.ref(y._node)
    del y
    gc.collect()
    assert node() is None and kept.tolist() == [4.0, 6.0]
