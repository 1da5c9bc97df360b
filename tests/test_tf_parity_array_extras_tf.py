"""TensorFlow's top-level array ops against real TensorFlow: meshgrid, sequence_mask,
dynamic_partition / dynamic_stitch, unique, histograms, unravel_index, reverse_sequence,
space_to_batch / batch_to_space, the shape helpers, and the arguments of pad, split, shape,
searchsorted and the scatter / gather_nd ``bad_indices_policy``: values, dtypes, first and second
derivatives through a Variable, inside tf.function, and the inputs TensorFlow refuses."""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
from test_tf_parity import run_both  # noqa: E402
from test_tf_parity import run_both_ok as _ok  # noqa: E402

import gradkit.tf as gtf  # noqa: E402

X = (np.arange(24, dtype=np.float32).reshape(2, 4, 3) * 0.37 - 2.0) ** 2 * np.sign(np.arange(24) % 3 - 0.5).reshape(
    2, 4, 3
).astype(np.float32)
M = X[0]  # (4, 3)
V = np.array([0.5, -1.25, 2.0], np.float32)


def _weights(shape):
    return np.cos(np.arange(int(np.prod(shape)), dtype=np.float32) * 0.7 + 0.3).reshape(tuple(shape))


def _loss(tf, outs):
    outs = outs if isinstance(outs, (list, tuple)) else [outs]
    return sum(tf.reduce_sum(o * o * tf.constant(_weights(o.shape))) for o in outs)


def _derivatives(f, second=False):
    """Outputs, the gradient of a quadratic loss of them and (``second``) the gradient of that
    gradient's weighted sum, through a Variable."""

    def program(tf):
        x = tf.Variable(X)
        with tf.GradientTape() as outer:
            with tf.GradientTape() as inner:
                outs = f(tf, x)
                loss = _loss(tf, outs)
            grad = inner.gradient(loss, x)
            if not second:
                return [outs, grad]
            total = tf.reduce_sum(grad * tf.constant(_weights(X.shape)))
        return [outs, grad, outer.gradient(total, x)]

    return program


DIFFERENTIABLE = {
    "meshgrid_xy": lambda tf, x: tf.meshgrid(x[0, :, 0], x[1, :2, 1], x[0, 0]),
    "meshgrid_ij": lambda tf, x: tf.meshgrid(x[0, :, 0], x[1, :2, 1], indexing="ij"),
    "meshgrid_flattens": lambda tf, x: tf.meshgrid(x[0, :2, :2], x[1, 0]),
    "dynamic_partition_rows": lambda tf, x: tf.dynamic_partition(x[0], [2, 0, 2, 2], 4),
    "dynamic_partition_entries": lambda tf, x: tf.dynamic_partition(x, [[1, 0, 1, 0], [0, 0, 1, 1]], 2),
    "dynamic_stitch_duplicates": lambda tf, x: tf.dynamic_stitch([[0, 3], [3, 1, 0]], [x[0, :2], x[1, :3]]),
    "dynamic_stitch_gap_and_matrix_indices": lambda tf, x: tf.dynamic_stitch(
        [tf.constant([[4, 0], [2, 0]]), [5]], [x[0, :2, :2], x[1, 3, :1]]
    ),
    "reverse_sequence": lambda tf, x: tf.reverse_sequence(x, [3, 1], seq_axis=1),
    "reverse_sequence_batch_axis": lambda tf, x: tf.reverse_sequence(x, [2, 0, 1], seq_axis=0, batch_axis=2),
    "space_to_batch": lambda tf, x: tf.space_to_batch(x[..., None], [2, 3], [[1, 1], [0, 0]]),
    "space_to_batch_nd_one_axis": lambda tf, x: tf.space_to_batch_nd(x, [3], [[1, 1]]),
    "batch_to_space": lambda tf, x: tf.batch_to_space(tf.reshape(x, [4, 2, 3, 1]), [2, 2], [[1, 0], [0, 2]]),
    "batch_to_space_int_block": lambda tf, x: tf.batch_to_space(tf.reshape(x, [4, 3, 2, 1]), 2, [[0, 1], [1, 1]]),
    "identity_n_and_ensure_shape": lambda tf, x: tf.identity_n([x[0], tf.ensure_shape(x[1], [None, 3])]),
    "pad_modes": lambda tf, x: [
        tf.pad(x[0], [[2, 1], [1, 2]], mode="reflect"),
        tf.pad(x[1], [[3, 0], [2, 3]], mode="Symmetric"),
        tf.pad(x[0], [[1, 0], [0, 2]], constant_values=np.float32(0.5)),
    ],
    "split_with_rest": lambda tf, x: tf.split(x, [1, -1], axis=np.int64(1)) + tf.split(x, np.int32(3), axis=-1),
}


# Second derivatives where gradkit's rule is its own (not jax's derivative of the forward op).
SECOND_ORDER = {"dynamic_stitch_duplicates", "pad_modes", "reverse_sequence", "batch_to_space"}


@pytest.mark.parametrize("name", sorted(DIFFERENTIABLE))
def test_values_and_derivatives_match_tensorflow(name):
    _ok(_derivatives(DIFFERENTIABLE[name], second=name in SECOND_ORDER))


def test_bad_indices_ignore_skips_them_as_tensorflow():
    # Values only: TensorFlow's gradients of these raise on the indices they skipped (they call
    # gather_nd / scatter_nd without the policy); tests/test_tf_parity_array_extras.py checks them.
    def program(tf):
        x = tf.constant(X)
        return [
            tf.tensor_scatter_nd_add(x[0], [[0, 1], [7, 0], [3, 2]], x[1, :3, 0], bad_indices_policy="IGNORE"),
            tf.tensor_scatter_nd_sub(x[0], [[0, 1], [-1, 0]], x[1, :2, 0], bad_indices_policy="IGNORE"),
            tf.tensor_scatter_nd_min(x[0], [[4], [1]], x[1, :2], bad_indices_policy="IGNORE"),
            tf.scatter_nd([[1], [-1], [0]], x[1, :3], [2, 3], bad_indices_policy="IGNORE"),
            tf.gather_nd(x[0], [[0, 1], [5, 0], [-1, 0], [3, 2]], bad_indices_policy="IGNORE"),
            tf.gather_nd(x, [[[1], [2]], [[0], [-3]]], batch_dims=1, bad_indices_policy="IGNORE"),
        ]

    _ok(program)


def test_pad_gives_constant_values_no_gradient_as_tensorflow():
    def program(tf):
        x, c = tf.Variable(M), tf.Variable(1.5)
        with tf.GradientTape() as tape:
            loss = _loss(tf, tf.pad(x, [[1, 1], [0, 2]], constant_values=c))
        return tape.gradient(loss, [x, c])

    assert _ok(program)[1] is None


VALUES = {
    "unique": lambda tf: list(tf.unique(tf.constant([3.0, 1.0, 3.0, np.nan, 2.0, np.nan, -0.0, 0.0, 1.0]))),
    "unique_ints_int64_idx": lambda tf: [t.numpy().astype(np.int64) for t in tf.unique([5, 1, 5, 5, 9], tf.int64)],
    "unique_bool": lambda tf: list(tf.unique([True, True, False])),
    "unique_empty": lambda tf: list(tf.unique(tf.zeros([0]))),
    "unique_with_counts": lambda tf: list(tf.unique_with_counts(tf.constant([5, 1, 5, 5, 2, 1]))),
    "sequence_mask": lambda tf: [
        tf.sequence_mask([1, 3, 0], 4),
        tf.sequence_mask([[1, 3], [2, 0]]),
        tf.sequence_mask([1, 3], 4, dtype=tf.float32),
        tf.sequence_mask([1.5, 3.0], 4),
        tf.sequence_mask([1.5, 3.0], 3.5),
        tf.sequence_mask([-1, 3], tf.constant(4)),
        tf.sequence_mask(2, 4),
        tf.sequence_mask(2),
        tf.sequence_mask(tf.zeros([0], tf.int32)),
    ],
    "histogram_fixed_width": lambda tf: [
        tf.histogram_fixed_width([-1.0, 0.0, 0.5, 1.0, 2.0, 3.99, 4.0, 5.0], [0.0, 4.0], nbins=4),
        tf.histogram_fixed_width([-1, 0, 3, 7, 10], [0, 8], nbins=3),
        tf.histogram_fixed_width(tf.constant(X), [-3.0, 5.0], nbins=7),
        tf.histogram_fixed_width([[1.0, 2.0], [3.0, 0.0]], [0, 4], nbins=2),
        tf.histogram_fixed_width([1.0, 2.0, 9.0], [0.0, 4.0], nbins=1),
        tf.histogram_fixed_width(np.linspace(-1, 2, 41).astype(np.float32), [0.0, 1.0], nbins=10),
    ],
    "histogram_fixed_width_bins": lambda tf: [
        tf.histogram_fixed_width_bins([[-1.0, 0.0, 0.5], [1.0, 2.0, 3.99]], [0.0, 4.0], nbins=4),
        tf.histogram_fixed_width_bins([np.nan, 1.0, np.inf, -np.inf], [0.0, 4.0], nbins=4),
        tf.histogram_fixed_width_bins([1.0, 2.0], [4.0, 0.0], nbins=2),
        tf.histogram_fixed_width_bins(np.linspace(-1, 2, 41).astype(np.float32), [0.0, 1.0], nbins=10),
    ],
    "unravel_index": lambda tf: [
        tf.unravel_index([5, 7, 0, -1], [3, 4]),
        tf.unravel_index(5, [3, 4]),
        tf.unravel_index(tf.constant([23, 6]), tf.constant([2, 3, 4])),
    ],
    "shape_helpers": lambda tf: [
        *tf.shape_n([tf.zeros([2, 3]), [1.0, 2.0], 4.0]),
        tf.broadcast_dynamic_shape([2, 1, 4], [3, 1]),
        tf.broadcast_dynamic_shape(tf.constant([2, 0]), [1]),
        tf.broadcast_static_shape(tf.TensorShape([2, 1]), tf.TensorShape([3])).as_list(),
        tf.broadcast_static_shape(tf.TensorShape([None, 1, 5]), tf.TensorShape([None, 4, 1])).as_list(),
        tf.get_static_value(tf.constant([1, 2])),
        tf.get_static_value([3, 4]),
        str(tf.get_static_value(tf.Variable(1.0))),
        tf.guarantee_const(tf.constant([1.0, 2.0])),
        *tf.required_space_to_batch_paddings([5, 7], [2, 3]),
        *tf.required_space_to_batch_paddings(tf.constant([5, 7]), [2, 3], base_paddings=[[1, 0], [0, 2]]),
    ],
    "shape_and_size_out_type": lambda tf: [
        tf.shape(tf.constant(M), out_type=None),
        str(tf.shape(tf.constant(M), out_type=None).dtype.name),
        tf.size(tf.constant(M), out_type=tf.int32),
        tf.shape(tf.constant(M), out_type=tf.int64).numpy().astype(np.int64),
    ],
    "bitcast": lambda tf: [
        tf.bitcast(tf.constant(M), tf.int32),
        tf.bitcast(tf.constant(M), tf.uint8),
        tf.bitcast(tf.constant(M), tf.float16),
        tf.bitcast(tf.constant(np.arange(12, dtype=np.uint8).reshape(3, 4)), tf.float32),
        tf.bitcast(tf.constant([[1, 2], [3, 4]], tf.int16), tf.int32),
    ],
    "searchsorted_out_type": lambda tf: (
        tf.searchsorted([1.0, 2.0, 3.0], [2.5, 0.0], side="right", out_type=tf.int64).numpy().astype(np.int64)
    ),
    # TensorFlow's bounds compare with `<`: a NaN value goes first on the left, last on the right.
    "searchsorted_nan": lambda tf: (
        [tf.searchsorted([1.0, 2.0, 3.0], [np.nan, -np.inf, np.inf, 2.0], side=side) for side in ("left", "right")]
        + [tf.searchsorted([1.0, 2.0, np.nan], [2.5, 5.0, np.nan], side="left")]
    ),
}


@pytest.mark.parametrize("name", sorted(VALUES))
def test_values_and_dtypes_match_tensorflow(name):
    _ok(VALUES[name])


def test_unique_histogram_and_mask_dtypes_match_tensorflow():
    def program(tf):
        y, idx, count = tf.unique_with_counts(tf.constant([2.0, 2.0, 1.0]))
        return [
            str(t.dtype.name)
            for t in (
                y,
                idx,
                count,
                tf.histogram_fixed_width([1.0], [0.0, 1.0], 3),
                tf.histogram_fixed_width_bins([1.0], [0.0, 1.0], 3, dtype=tf.int64),  # TensorFlow ignores dtype
                tf.sequence_mask([2], 3),
                tf.sequence_mask([2], 3, dtype=tf.float32),
                tf.unravel_index([2], [3]),
                tf.meshgrid([1, 2], [3])[0],
            )
        ]

    _ok(program)


def test_inside_tf_function_match_tensorflow():
    def program(tf):
        x = tf.Variable(X)

        @tf.function
        def forward(lengths):
            parts = tf.dynamic_partition(x[0], [1, 0, 1, 1], 2)
            merged = tf.dynamic_stitch([[2, 0], [1, 3]], [x[1, :2], x[0, 2:]])
            grids = tf.meshgrid(x[0, :, 0], x[1, 0], indexing="ij")
            reversed_ = tf.reverse_sequence(x, lengths, seq_axis=1)
            blocks = tf.space_to_batch(x[..., None], [2, 1], [[0, 0], [0, 0]])
            mask = tf.sequence_mask(lengths, 4, dtype=tf.float32)
            return [
                parts,
                merged,
                grids,
                reversed_ * mask[..., None],
                tf.batch_to_space(blocks, [2, 1], [[0, 0], [0, 0]]),
            ]

        with tf.GradientTape() as tape:
            outs = forward(tf.constant([3, 1]))
            loss = _loss(tf, tf.nest.flatten(outs))
        return [outs, tape.gradient(loss, x)]

    _ok(program)


REFUSED = {
    "meshgrid_mixed_dtypes": lambda tf: tf.meshgrid([1, 2, 3], [4.0, 5.0]),
    "meshgrid_bad_indexing": lambda tf: tf.meshgrid([1, 2], indexing="xyz"),
    "meshgrid_unknown_keyword": lambda tf: tf.meshgrid([1, 2], sparse=True),
    "sequence_mask_vector_maxlen": lambda tf: tf.sequence_mask([1, 3], [4]),
    "sequence_mask_negative_maxlen": lambda tf: tf.sequence_mask([1, 3], -1),
    "dynamic_partition_out_of_range": lambda tf: tf.dynamic_partition(tf.constant(M), [1, 0, 3, 0], 3),
    "dynamic_partition_negative": lambda tf: tf.dynamic_partition(tf.constant(M), [1, 0, -1, 0], 3),
    "dynamic_partition_shape": lambda tf: tf.dynamic_partition(tf.constant(M), [1, 0], 3),
    "dynamic_partition_float": lambda tf: tf.dynamic_partition(tf.constant(M), [1.0, 0.0, 1.0, 0.0], 3),
    "dynamic_stitch_negative": lambda tf: tf.dynamic_stitch([[0, -1]], [[1.0, 2.0]]),
    "dynamic_stitch_shapes": lambda tf: tf.dynamic_stitch([[0, 1]], [[1.0, 2.0, 3.0]]),
    "dynamic_stitch_lengths": lambda tf: tf.dynamic_stitch([[0], [1]], [[1.0]]),
    "unique_matrix": lambda tf: tf.unique(tf.constant(M)),
    "unique_float_out_idx": lambda tf: tf.unique([1, 1, 2], out_idx=tf.float32),
    "histogram_nan": lambda tf: tf.histogram_fixed_width([1.0, np.nan], [0.0, 4.0], nbins=4),
    "histogram_bad_range": lambda tf: tf.histogram_fixed_width([1.0, 2.0], [4.0, 0.0], nbins=2),
    "histogram_empty_range": lambda tf: tf.histogram_fixed_width([1.0, 2.0], [1.0, 1.0], nbins=2),
    "histogram_no_bins": lambda tf: tf.histogram_fixed_width([1.0, 2.0], [0.0, 4.0], nbins=0),
    "histogram_float_dtype": lambda tf: tf.histogram_fixed_width([1.0], [0.0, 4.0], nbins=2, dtype=tf.float32),
    "histogram_bins_of_ints": lambda tf: tf.histogram_fixed_width_bins([1, 5], [0, 8], nbins=3),
    "unravel_out_of_bounds": lambda tf: tf.unravel_index([12], [3, 4]),
    "unravel_matrix": lambda tf: tf.unravel_index([[5, 7]], [3, 4]),
    "unravel_zero_dim": lambda tf: tf.unravel_index([0], [3, 0]),
    "unravel_float": lambda tf: tf.unravel_index([5.0], [3, 4]),
    "ensure_shape_mismatch": lambda tf: tf.ensure_shape(tf.constant(M), [3, 4]),
    "ensure_shape_rank": lambda tf: tf.ensure_shape(tf.constant(M), [4]),
    "broadcast_static_shape": lambda tf: tf.broadcast_static_shape(tf.TensorShape([2, 2]), tf.TensorShape([3])),
    "broadcast_dynamic_shape": lambda tf: tf.broadcast_dynamic_shape([2, 2], [3]),
    "reverse_sequence_no_seq_axis": lambda tf: tf.reverse_sequence(tf.constant(M), [2, 3, 1, 0]),
    "reverse_sequence_too_long": lambda tf: tf.reverse_sequence(tf.constant(M), [2, 4, 1, 0], seq_axis=1),
    "reverse_sequence_negative_length": lambda tf: tf.reverse_sequence(tf.constant(M), [2, -1, 1, 0], seq_axis=1),
    "reverse_sequence_negative_axis": lambda tf: tf.reverse_sequence(tf.constant(M), [2, 3, 1, 0], seq_axis=-1),
    "reverse_sequence_same_axis": lambda tf: tf.reverse_sequence(tf.constant(M), [2, 3, 1], seq_axis=1, batch_axis=1),
    "reverse_sequence_lengths": lambda tf: tf.reverse_sequence(tf.constant(M), [2, 3], seq_axis=1),
    "reverse_sequence_float_lengths": lambda tf: tf.reverse_sequence(tf.constant(M), [2.0, 3.0, 1.0, 0.0], seq_axis=1),
    "space_to_batch_indivisible": lambda tf: tf.space_to_batch(tf.constant(X), [3, 3], [[0, 0], [0, 0]]),
    "space_to_batch_negative_padding": lambda tf: tf.space_to_batch(tf.constant(X), [2, 3], [[-1, 1], [0, 0]]),
    "space_to_batch_zero_block": lambda tf: tf.space_to_batch(tf.constant(X), [0, 3], [[0, 0], [0, 0]]),
    "space_to_batch_padding_rows": lambda tf: tf.space_to_batch(tf.constant(X), [2, 3], [[0, 0]]),
    "space_to_batch_too_many_blocks": lambda tf: tf.space_to_batch(
        tf.constant(X), [1, 1, 1], tf.zeros([3, 2], tf.int32)
    ),
    "batch_to_space_indivisible_batch": lambda tf: tf.batch_to_space(tf.constant(X), [3], [[0, 0]]),
    "batch_to_space_crops_too_large": lambda tf: tf.batch_to_space(tf.constant(X), [2], [[5, 4]]),
    "batch_to_space_negative_crop": lambda tf: tf.batch_to_space(tf.constant(X), [2], [[-1, 0]]),
    "bitcast_to_bool": lambda tf: tf.bitcast(tf.constant(M), tf.bool),
    "bitcast_wrong_last_axis": lambda tf: tf.bitcast(tf.constant(np.zeros((3, 3), np.uint8)), tf.float32),
    "pad_unknown_mode": lambda tf: tf.pad(tf.constant(M), [[1, 1], [0, 0]], mode="WRAP"),
    "pad_float_on_int": lambda tf: tf.pad(tf.constant([1, 2]), [[1, 1]], constant_values=7.5),
    "pad_int_tensor_on_float": lambda tf: tf.pad(tf.constant(V), [[1, 1]], constant_values=tf.constant(1)),
    "pad_vector_constant_values": lambda tf: tf.pad(tf.constant(V), [[1, 1]], constant_values=[1.0]),
    "shape_float_out_type": lambda tf: tf.shape(tf.constant(M), out_type=tf.float32),
    "scatter_bad_policy": lambda tf: tf.tensor_scatter_nd_add(tf.zeros([3]), [[0]], [1.0], bad_indices_policy="x"),
    "scatter_nd_bad_policy": lambda tf: tf.scatter_nd([[0]], [1.0], [3], bad_indices_policy="ignore"),
    "scatter_bad_index_by_default": lambda tf: tf.tensor_scatter_nd_max(tf.zeros([3]), [[5]], [1.0]),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_inputs_tensorflow_refuses_raise_a_gradkit_error(name):
    assert isinstance(run_both(REFUSED[name]), Exception)
    with pytest.raises((ValueError, TypeError, IndexError), match=r"^\[gradkit\] "):
        REFUSED[name](gtf)
