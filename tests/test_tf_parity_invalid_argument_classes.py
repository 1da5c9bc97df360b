"""Values and shapes TensorFlow's eager ops refuse with InvalidArgumentError raise gradkit.tf's
InvalidArgumentError too (a [gradkit] message, a ValueError as well), so ``except
tf.errors.InvalidArgumentError`` catches them on both; and tf.clip_by_global_norm's use_norm.
Oracle: real TensorFlow 2.21 (class and values)."""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
from test_tf_parity import run_both, run_both_ok  # noqa: E402

import gradkit.tf as gtf  # noqa: E402

M = np.arange(6, dtype=np.float32).reshape(2, 3)

REFUSED = {
    "unique_of_a_matrix": lambda tf: tf.unique(tf.constant(M)),
    "segment_sum_unsorted_ids": lambda tf: tf.math.segment_sum(tf.constant([1.0, 2.0, 3.0]), [1, 0, 0]),
    "unsorted_segment_sum_id_too_large": lambda tf: tf.math.unsorted_segment_sum(tf.constant([1.0, 2.0]), [0, 3], 2),
    "bincount_negative": lambda tf: tf.math.bincount(tf.constant([1, -1, 2])),
    "reverse_sequence_too_long": lambda tf: tf.reverse_sequence(tf.constant(M), [4, 1], seq_axis=1, batch_axis=0),
    "histogram_lo_above_hi": lambda tf: tf.histogram_fixed_width(tf.constant([1.0, 2.0]), [3.0, 1.0], nbins=3),
    "histogram_nan": lambda tf: tf.histogram_fixed_width(tf.constant([1.0, np.nan]), [0.0, 3.0], nbins=3),
    "diag_part_of_a_vector": lambda tf: tf.linalg.diag_part(tf.constant([1.0, 2.0])),
    "matmul_of_a_vector": lambda tf: tf.matmul(tf.constant([1.0, 2.0]), tf.constant([[1.0], [2.0]])),
    "gather_batch_dims_the_rank": lambda tf: tf.gather(tf.constant(M), [[0], [1]], axis=1, batch_dims=2),
    "diag_num_rows_too_small": lambda tf: tf.linalg.diag(tf.constant([1.0, 2.0, 3.0]), k=1, num_rows=2),
    "roll_shift_and_axis_sizes_differ": lambda tf: tf.roll(tf.constant(M), [1, 2], [0]),
    "roll_one_shift_many_axes": lambda tf: tf.roll(tf.constant(M), 2, [0, 0, 1]),
    "pow_integer_negative_exponent": lambda tf: tf.pow(tf.constant([2, 3]), tf.constant([-1, 2])),
    "band_part_more_superdiagonals_than_columns": lambda tf: tf.linalg.band_part(tf.ones((3, 3)), 0, 10),
    "band_part_more_subdiagonals_than_rows": lambda tf: tf.linalg.band_part(tf.ones((3, 3)), 5, 0),
    "argsort_of_bools": lambda tf: tf.argsort(tf.constant([True, False])),
    "clip_by_norm_of_integers": lambda tf: tf.clip_by_norm(tf.constant([3, 4]), 1),
    "one_hot_of_float_indices": lambda tf: tf.one_hot(tf.constant([0.0, 1.0]), 3),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_as_invalid_argument(name):
    import gradkit.tf as gtf

    out = run_both(REFUSED[name])
    assert isinstance(out, gtf.errors.InvalidArgumentError), out
    assert str(out).startswith("[gradkit]"), out
    with pytest.raises(tf_real.errors.InvalidArgumentError):
        REFUSED[name](tf_real)


def test_roll_and_clip_by_global_norm_with_use_norm_agree():
    def program(tf):
        a, b = tf.Variable([3.0, 4.0]), tf.Variable([[1.0, 2.0]])
        with tf.GradientTape() as tape:
            (x, y), norm = tf.clip_by_global_norm([a, b], 2.0, use_norm=tf.constant(10.0))
            (u, _), small = tf.clip_by_global_norm([a, None], 50.0, use_norm=tf.constant(5.0))
            loss = tf.reduce_sum(x) + tf.reduce_sum(y * y) + tf.reduce_sum(u)
        rolled = [tf.roll(tf.constant(M), [1, 2], [0, 1]), tf.roll(tf.constant(M), -1, 1)]
        powers = [tf.pow(tf.constant([2, 3]), tf.constant([0, 2])), tf.pow(tf.constant([2.0, 4.0]), -1.0)]
        kept = [tf.linalg.band_part(tf.ones((3, 4)), 3, 4), tf.one_hot([0, 2], 3, on_value=True, off_value=False)]
        return [x, y, norm, u, small, *tape.gradient(loss, [a, b]), *rolled, *powers, *kept]

    run_both_ok(program)


def test_keras_layer_arguments_refused_with_tensorflows_classes():
    import gradkit.tf as gtf

    x3 = np.ones((2, 5, 3), np.float32)
    cases = [
        (lambda tf: tf.keras.layers.LayerNormalization(axis=4)(x3), IndexError),
        (lambda tf: tf.keras.layers.BatchNormalization(axis=3)(x3), IndexError),
        (lambda tf: tf.keras.layers.UnitNormalization(axis=3)(x3), tf_real.errors.InvalidArgumentError),
        (lambda tf: tf.keras.layers.Bidirectional(tf.keras.layers.Dense(2)), TypeError),
        (lambda tf: tf.one_hot([0, 1], 3, dtype=tf.bool), TypeError),
    ]
    for program, theirs in cases:
        with pytest.raises(theirs):
            program(tf_real)
        ours = theirs if theirs is not tf_real.errors.InvalidArgumentError else gtf.errors.InvalidArgumentError
        with pytest.raises(ours, match=r"^\[gradkit\]"):
            program(gtf)


@pytest.mark.parametrize(
    "program",
    [
        lambda tf: tf.math.reduce_logsumexp([1, 2]),
        lambda tf: tf.math.reduce_std([1, 2]),
        lambda tf: tf.math.unsorted_segment_sqrt_n([1, 2], [0, 1], 2),
    ],
    ids=["reduce_logsumexp", "reduce_std", "unsorted_segment_sqrt_n"],
)
def test_float_only_kernels_refuse_integers_as_both_error_classes(program):
    # TensorFlow raises InvalidArgumentError (a kernel's refusal) or TypeError (a Python check):
    # gradkit's error is both, so either except clause catches it.
    with pytest.raises(gtf.errors.InvalidArgumentError, match=r"\[gradkit\]") as info:
        program(gtf)
    assert isinstance(info.value, TypeError)
