"""``tf.math.count_nonzero`` against real TensorFlow 2.21: the same program text under both
modules (values, shapes, None-ness and exception classes compared)."""

import warnings

import jax
import numpy as np
import pytest

import gradkit.tf as gtf

X = [[0.0, 1.5, -2.0], [0.0, 0.0, float("nan")]]


def p_whole_tensor_and_axes(tf):
    x = tf.constant(X)
    return [
        tf.math.count_nonzero(x),
        tf.math.count_nonzero(x, axis=0),
        tf.math.count_nonzero(x, axis=-1, keepdims=True),
        tf.math.count_nonzero(x, axis=[0, 1], keepdims=True),
        tf.math.count_nonzero(input=x, axis=tf.constant(1)),
    ]


def p_dtypes(tf):
    x = tf.constant([[1, 0, 5], [0, 0, 7]], tf.int8)
    return [
        tf.math.count_nonzero(x, dtype=tf.int32),
        tf.math.count_nonzero(x, axis=1, dtype=tf.int8),
        tf.math.count_nonzero(x, axis=0, dtype=tf.float32),
        tf.math.count_nonzero(x, axis=0, dtype=tf.bool),
        tf.math.count_nonzero(tf.constant([True, False, True])),
        tf.math.count_nonzero([0.0, -0.0, 2.0]),
    ]


def p_inside_a_function(tf):
    f = tf.function(lambda x: tf.math.count_nonzero(x > 0.5, axis=1))
    return [f(tf.constant(X)), f(tf.constant([[0.7, 0.2]]))]


def p_a_float_count_has_no_gradient(tf):
    v = tf.Variable([0.0, 2.0, 3.0])
    with tf.GradientTape(persistent=True) as tape:
        c = tf.math.count_nonzero(v, dtype=tf.float32)
        y = c * v
    return [c, tape.gradient(c, v), tape.gradient(y, v)]


def p_axis_out_of_range(tf):
    return tf.math.count_nonzero(tf.constant(X), axis=2)


PROGRAMS = [v for k, v in sorted(globals().items()) if k.startswith("p_")]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_parity(program):
    pytest.importorskip("tensorflow")
    from test_tf_parity import run_both

    run_both(program)


def test_exported_where_tensorflow_exports_it():
    tf = pytest.importorskip("tensorflow")
    assert hasattr(tf.math, "count_nonzero") and hasattr(gtf.math, "count_nonzero")
    assert not hasattr(tf, "count_nonzero") and not hasattr(gtf, "count_nonzero")


def test_the_default_int64_is_jaxs_integer_without_a_warning():
    # As tf.argmax's int64: int32 unless jax's x64 mode is on.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        count = gtf.math.count_nonzero(gtf.constant(X))
    assert count.dtype == jax.dtypes.canonicalize_dtype(np.int64)
    assert int(count) == 3
