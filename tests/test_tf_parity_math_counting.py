"""tf.math.bincount, confusion_matrix, in_top_k, invert_permutation, is_non_decreasing,
is_strictly_increasing and zero_fraction against real TensorFlow: values, dtypes, shapes, no
gradient through counts (confusion_matrix's float weights differentiable, as there), inside
tf.function, and the errors for inputs TensorFlow refuses."""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
from test_tf_parity import run_both  # noqa: E402
from test_tf_parity import run_both_ok as _ok  # noqa: E402

import gradkit.tf as gtf  # noqa: E402

A = np.array([1, 1, 2, 3, 2, 4, 4, 5], np.int32)
M = np.array([[1, 2, 2], [0, 0, 3]], np.int32)
P = np.array([[0.1, 0.5, 0.5, 0.2], [0.9, np.nan, 0.3, 0.0], [0.2, np.inf, 0.1, 0.1], [0.3, 0.3, 0.3, 0.1]], np.float32)


def _dtype(tf, t):
    return t.dtype.name if tf is tf_real else np.dtype(t.dtype).name


CASES = {
    "bincount": lambda tf: tf.math.bincount(A),
    "bincount_minlength": lambda tf: tf.math.bincount(A, minlength=8),
    "bincount_maxlength": lambda tf: tf.math.bincount(A, maxlength=3),
    "bincount_both": lambda tf: tf.math.bincount(A, minlength=4, maxlength=3),
    "bincount_negative_minlength": lambda tf: tf.math.bincount(A, minlength=-1),
    "bincount_weights": lambda tf: tf.math.bincount(A, weights=tf.range(8.0)),
    "bincount_weights_ignore_dtype": lambda tf: tf.math.bincount(A, weights=tf.range(8.0), dtype=tf.int32),
    "bincount_int_weights": lambda tf: tf.math.bincount(A, weights=tf.range(8)),
    "bincount_python_weights": lambda tf: tf.math.bincount(tf.constant([1, 2, 2]), weights=[1.0, 2.0, 3.0]),
    "bincount_empty_weights": lambda tf: tf.math.bincount(A, weights=tf.zeros([0])),
    "bincount_float_dtype": lambda tf: tf.math.bincount(A, dtype=tf.float32),
    "bincount_binary": lambda tf: tf.math.bincount(A, binary_output=True),
    "bincount_empty": lambda tf: tf.math.bincount(tf.zeros([0], tf.int32)),
    "bincount_empty_minlength": lambda tf: tf.math.bincount(tf.zeros([0], tf.int32), minlength=3),
    "bincount_maxlength_zero": lambda tf: tf.math.bincount(A, maxlength=0),
    "bincount_matrix_flattened": lambda tf: tf.math.bincount(M),
    "bincount_axis0": lambda tf: tf.math.bincount(M, axis=0),
    "bincount_rows": lambda tf: tf.math.bincount(M, axis=-1),
    "bincount_rows_weights": lambda tf: tf.math.bincount(M, weights=tf.constant(M.astype(np.float32) * 1.5), axis=-1),
    "bincount_rows_binary_float": lambda tf: tf.math.bincount(M, axis=-1, binary_output=True, dtype=tf.float32),
    "bincount_rows_maxlength": lambda tf: tf.math.bincount(M, axis=-1, maxlength=2),
    "bincount_vector_axis_minus_one": lambda tf: tf.math.bincount(A, axis=-1),
    "bincount_float_values": lambda tf: tf.math.bincount(tf.constant([1.7, -0.5, 2.0])),
    "bincount_scalar": lambda tf: tf.math.bincount(tf.constant(3)),
    "bincount_tensor_minlength": lambda tf: tf.math.bincount(A, minlength=tf.constant(9)),
    "confusion_matrix": lambda tf: tf.math.confusion_matrix([1, 2, 4], [2, 2, 4]),
    "confusion_matrix_num_classes": lambda tf: tf.math.confusion_matrix([1, 2, 4], [2, 2, 4], num_classes=6),
    "confusion_matrix_tensor_num_classes": lambda tf: tf.math.confusion_matrix(
        [1, 2], [2, 0], num_classes=tf.constant(4)
    ),
    "confusion_matrix_int_truncated_weights": lambda tf: tf.math.confusion_matrix(
        [1, 2, 4], [2, 2, 4], weights=[0.5, 1.0, 2.0]
    ),
    "confusion_matrix_float": lambda tf: tf.math.confusion_matrix([1, 2], [2, 2], dtype=tf.float16),
    "confusion_matrix_float_labels": lambda tf: tf.math.confusion_matrix([1.0, 2.7], [2.0, 2.0]),
    "confusion_matrix_squeezed": lambda tf: tf.math.confusion_matrix([[1], [2]], [2, 2]),
    # TensorFlow stacks labels and predictions on axis 1 and scatters with the last axis as the
    # index: for matrices of two columns each row's pairs are counted, not the entries.
    "confusion_matrix_matrices": lambda tf: tf.math.confusion_matrix([[1, 2], [0, 0]], [[2, 2], [1, 0]]),
    "confusion_matrix_empty": lambda tf: tf.math.confusion_matrix(
        tf.zeros([0], tf.int32), tf.zeros([0], tf.int32), num_classes=2
    ),
    "in_top_k": lambda tf: tf.math.in_top_k([1, 0, 1, 2], P, 1),
    "in_top_k_2": lambda tf: tf.math.in_top_k([3, 2, 0, 3], P, 2),
    "in_top_k_ties": lambda tf: tf.math.in_top_k([2, 0, 1, 0], P, 1),
    "in_top_k_out_of_range": lambda tf: tf.math.in_top_k([4, -1, 0, 1], P, 3),
    "in_top_k_zero": lambda tf: tf.math.in_top_k([1, 0, 1, 1], P, 0),
    "in_top_k_large_and_negative": lambda tf: [tf.math.in_top_k([1, 0, 1, 1], P, k) for k in (9, -1)],
    "in_top_k_keywords": lambda tf: tf.math.in_top_k(
        targets=tf.constant([1, 0, 1, 3]), predictions=P, k=tf.constant(2)
    ),
    "invert_permutation": lambda tf: tf.math.invert_permutation([3, 4, 0, 2, 1]),
    "invert_permutation_empty": lambda tf: tf.math.invert_permutation(tf.zeros([0], tf.int32)),
    "monotonic": lambda tf: [
        f(x)
        for f in (tf.math.is_non_decreasing, tf.math.is_strictly_increasing)
        for x in ([1, 1, 2], [[1, 2], [3, 4]], [[1, 2], [0, 3]], [], 5, [1.0, np.nan], [-2.0, 1.5])
    ],
    "zero_fraction": lambda tf: [
        tf.math.zero_fraction(x) for x in ([0, 1, 0, 3], [[0.0, 2.0], [1.0, 0.0]], 0.0, [True, False, False])
    ],
    "zero_fraction_empty": lambda tf: tf.math.zero_fraction(tf.zeros([0])),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_dtypes_and_shapes_match_tensorflow(name):
    def program(tf):
        out = CASES[name](tf)
        outs = out if isinstance(out, list) else [out]
        return [*outs, [_dtype(tf, t) for t in outs]]

    _ok(program)


def test_no_gradient_through_counts_but_through_confusion_matrix_weights():
    def program(tf):
        w, p = tf.Variable(np.arange(8, dtype=np.float32)), tf.Variable(np.ones((4, 3), np.float32))
        with tf.GradientTape(persistent=True) as tape:
            frac = tf.math.zero_fraction(w)
            hits = tf.cast(tf.math.in_top_k([1, 0, 1, 2], p, 1), tf.float32)
            cm = tf.math.confusion_matrix([1, 2, 0], [2, 2, 0], weights=w[:3] * 2.0, dtype=tf.float32)
            loss = tf.reduce_sum(cm * tf.constant(np.arange(9, dtype=np.float32).reshape(3, 3)))
        return [tape.gradient(frac, w), tape.gradient(hits, p), cm, tape.gradient(loss, w)]

    _ok(program)


def test_bincount_weights_give_no_gradient():
    # TensorFlow has no gradient for DenseBincount (it raises LookupError); gradkit's is None.
    w = gtf.Variable(np.arange(8, dtype=np.float32))
    with gtf.GradientTape() as tape:
        y = gtf.reduce_sum(gtf.math.bincount(A, weights=w * 2.0))
    assert tape.gradient(y, w) is None


def test_inside_tf_function_match_tensorflow():
    def program(tf):
        @tf.function
        def forward(values, targets, scores):
            return [
                tf.math.bincount(values, minlength=7, maxlength=7),
                tf.math.bincount(values, weights=tf.cast(values, tf.float32), minlength=7, maxlength=7, axis=-1),
                tf.math.confusion_matrix(values, values[::-1], num_classes=6),
                tf.math.in_top_k(targets, scores, 2),
                tf.math.invert_permutation(targets),
                tf.math.is_strictly_increasing(values),
                tf.math.zero_fraction(scores),
            ]

        return forward(tf.constant(A), tf.constant([3, 0, 1, 2]), tf.constant(np.nan_to_num(P, posinf=2.0)))

    _ok(program)


def test_lengths_set_by_traced_values_are_a_gradkit_error():
    from gradkit import GradkitError

    with pytest.raises(GradkitError, match="minlength and maxlength"):
        gtf.function(lambda v: gtf.math.bincount(v))(gtf.constant(A))
    with pytest.raises(GradkitError, match="num_classes"):
        gtf.function(lambda v: gtf.math.confusion_matrix(v, v))(gtf.constant(A))


BAD = {
    "bincount_negative": lambda tf: tf.math.bincount(tf.constant([1, -1, 2])),
    "bincount_binary_and_weights": lambda tf: tf.math.bincount(A, weights=tf.range(8.0), binary_output=True),
    "bincount_axis": lambda tf: tf.math.bincount(M, axis=1),
    "bincount_rank3_rows": lambda tf: tf.math.bincount(tf.constant([[[1, 2]]]), axis=-1),
    "bincount_weights_shape": lambda tf: tf.math.bincount(A, weights=tf.range(3.0)),
    "bincount_half_weights": lambda tf: tf.math.bincount(A, weights=tf.ones([8], tf.float16)),
    "bincount_bool_dtype": lambda tf: tf.math.bincount(A, dtype=tf.bool),
    "confusion_matrix_negative": lambda tf: tf.math.confusion_matrix([1, -2, 4], [2, 2, 4]),
    "confusion_matrix_negative_prediction": lambda tf: tf.math.confusion_matrix([1, 2], [2, -1]),
    "confusion_matrix_out_of_bounds": lambda tf: tf.math.confusion_matrix([1, 2, 4], [2, 2, 4], num_classes=3),
    "confusion_matrix_scalars": lambda tf: tf.math.confusion_matrix(1, 2),
    "confusion_matrix_lengths": lambda tf: tf.math.confusion_matrix([1, 2], [2, 2, 4]),
    "confusion_matrix_weights_shape": lambda tf: tf.math.confusion_matrix([1, 2], [2, 0], weights=[1.0, 2.0, 3.0]),
    "confusion_matrix_empty": lambda tf: tf.math.confusion_matrix(tf.zeros([0], tf.int32), tf.zeros([0], tf.int32)),
    "confusion_matrix_columns": lambda tf: tf.math.confusion_matrix([[1], [2]], [[2], [2]]),
    "confusion_matrix_three_columns": lambda tf: tf.math.confusion_matrix([[1, 2, 0]], [[2, 2, 1]]),
    "in_top_k_half": lambda tf: tf.math.in_top_k([1, 0, 1, 1], tf.constant(P, tf.float16), 1),
    "in_top_k_float_targets": lambda tf: tf.math.in_top_k([1.0, 0, 1, 1], P, 1),
    "in_top_k_vector": lambda tf: tf.math.in_top_k([1], P[0], 1),
    "in_top_k_lengths": lambda tf: tf.math.in_top_k([1, 0], P, 1),
    "in_top_k_k_vector": lambda tf: tf.math.in_top_k([1, 0, 1, 1], P, [1]),
    "invert_permutation_duplicate": lambda tf: tf.math.invert_permutation([3, 4, 0, 2, 2]),
    "invert_permutation_out_of_range": lambda tf: tf.math.invert_permutation([3, 1, 0]),
    "invert_permutation_matrix": lambda tf: tf.math.invert_permutation([[1, 0]]),
    "invert_permutation_float": lambda tf: tf.math.invert_permutation([1.0, 0.0]),
    "is_non_decreasing_bool": lambda tf: tf.math.is_non_decreasing([True, False]),
    "is_strictly_increasing_complex": lambda tf: tf.math.is_strictly_increasing(tf.constant([1j, 2j])),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_inputs_raise_as_in_tensorflow_with_a_gradkit_message(name):
    assert isinstance(run_both(BAD[name]), Exception)
    with pytest.raises(Exception, match=r"^\[gradkit\] tf\.math\.\w+"):
        BAD[name](gtf)
