"""Inputs TensorFlow's math kernels refuse, refused by gradkit.tf with an exception of
TensorFlow's class (``tf.errors.InvalidArgumentError`` eagerly, so that ``except`` clauses
written for TensorFlow catch it): ``reduce_any``/``reduce_all`` of a non-bool tensor,
``add_n`` of bools or of mismatched shapes, ``segment_*`` ids that do not match the data, and
``confusion_matrix`` classes out of range; and ``clip_by_global_norm`` of a bare tensor (TypeError)."""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")

from test_tf_parity import check_refused_unless_valid, invalid_argument, programs  # noqa: E402


def p_reduce_any_of_floats(tf):
    return invalid_argument(tf, lambda: tf.reduce_any(tf.constant([1.0, 0.0])))


def p_reduce_all_of_ints(tf):
    return invalid_argument(tf, lambda: tf.reduce_all(tf.constant([1, 0])))


def p_add_n_of_bools(tf):
    return invalid_argument(tf, lambda: tf.math.add_n([tf.constant([True])] * 2))


def p_add_n_of_mismatched_shapes(tf):
    return invalid_argument(tf, lambda: tf.math.add_n([tf.constant([1.0]), tf.constant([1.0, 2.0])]))


def p_segment_sum_with_too_few_ids(tf):
    return invalid_argument(tf, lambda: tf.math.segment_sum(tf.constant([1.0, 2.0, 3.0]), tf.constant([0, 0])))


def p_confusion_matrix_class_out_of_range(tf):
    return invalid_argument(tf, lambda: tf.math.confusion_matrix([0, 2], [0, 1], num_classes=2))


def p_confusion_matrix_negative_label(tf):
    return invalid_argument(tf, lambda: tf.math.confusion_matrix([0, -1], [0, 1], num_classes=2))


def p_the_same_ops_on_valid_inputs(tf):
    x = tf.constant(np.arange(6.0, dtype="float32").reshape(3, 2))
    return [
        tf.reduce_any(x > 2.0, axis=0),
        tf.reduce_all(x >= 0.0),
        tf.math.add_n([x, x, x]),
        tf.math.segment_sum(x, tf.constant([0, 0, 1])),
        tf.math.confusion_matrix([0, 1, 1], [0, 1, 0], num_classes=2),
    ]


PROGRAMS = programs(globals())


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_parity(program):
    check_refused_unless_valid(program, p_the_same_ops_on_valid_inputs)


def test_clip_by_global_norm_takes_a_sequence_only():
    from test_tf_parity import run_both

    def bare_tensor(tf):
        return tf.clip_by_global_norm(tf.constant([3.0, 4.0]), 1.0)

    def a_tuple(tf):
        return tf.clip_by_global_norm((tf.constant([3.0, 4.0]), None), 1.0)

    outcome = run_both(bare_tensor)
    assert isinstance(outcome, TypeError) and str(outcome).startswith("[gradkit] `t_list` should be a sequence")
    assert not isinstance(run_both(a_tuple), Exception)
