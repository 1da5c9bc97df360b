"""Arguments that must be one integer (a cumulative op's or ``argmax``'s axis,
``num_segments``, ``bincount``'s ``minlength`` and ``axis``) against real TensorFlow 2.21: a
float, a string or a list is refused with TensorFlow's exception class, not truncated to an
int; integers of every kind (Python, NumPy, a tensor) are taken. (``tf.sort`` and
``tf.argsort`` take any ``int()``-able axis in TensorFlow, and in gradkit.)"""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")

from test_tf_parity import programs, run_program  # noqa: E402

import gradkit.tf as gtf  # noqa: E402

X = np.arange(1.0, 7.0, dtype="float32").reshape(2, 3)


def p_cumsum_float_axis(tf):
    return tf.math.cumsum(tf.constant(X), axis=1.7)


def p_cumsum_list_axis(tf):
    return tf.math.cumsum(tf.constant(X), axis=[1])


def p_cumsum_float_tensor_axis(tf):
    return tf.math.cumsum(tf.constant(X), axis=tf.constant(1.0))


def p_cumprod_float_axis(tf):
    return tf.math.cumprod(tf.constant(X), axis=1.0)


def p_cumulative_logsumexp_float_axis(tf):
    return tf.math.cumulative_logsumexp(tf.constant(X), axis=1.5)


def p_argmax_float_axis(tf):
    return tf.math.argmax(tf.constant(X), axis=1.7)


def p_argmin_string_axis(tf):
    return tf.math.argmin(tf.constant(X), axis="1")


def p_unsorted_segment_sum_float_num_segments(tf):
    return tf.math.unsorted_segment_sum(tf.constant(X), tf.constant([0, 1]), 2.5)


def p_bincount_float_minlength(tf):
    return tf.math.bincount(tf.constant([0, 1]), minlength=4.5)


def p_integers_of_every_kind_are_taken(tf):
    x = tf.constant(X)
    return [
        tf.math.cumsum(x, axis=np.int64(1)),
        tf.math.cumprod(x, axis=tf.constant(-1)),
        tf.math.argmax(x, axis=tf.constant(1)),
        tf.math.argmin(x, axis=np.int32(0)),
        tf.sort(x, axis=np.int64(0), direction="DESCENDING"),
        tf.math.unsorted_segment_sum(x, tf.constant([0, 1]), tf.constant(3)),
        tf.math.bincount(tf.constant([0, 1]), minlength=np.int32(4)),
    ]


PROGRAMS = programs(globals())


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_parity(program):
    outcome = run_program(program)
    refused = program is not p_integers_of_every_kind_are_taken
    assert isinstance(outcome, Exception) == refused


def test_the_refusal_names_the_argument():
    with pytest.raises(TypeError, match=r"^\[gradkit\] tf.math.cumsum's axis must be one integer, but got 1.7"):
        gtf.math.cumsum(gtf.constant(X), axis=1.7)
    with pytest.raises(TypeError, match=r"num_segments must be one integer, but got 2.5"):
        gtf.math.unsorted_segment_sum(gtf.constant(X), gtf.constant([0, 1]), 2.5)
