"""TensorFlow's top-level array ops without TensorFlow: meshgrid, sequence_mask,
dynamic_partition / dynamic_stitch, unique, histograms, unravel_index, reverse_sequence,
space_to_batch / batch_to_space and the shape helpers against NumPy oracles written from
TensorFlow's documentation, gradients through a Variable against pure JAX and finite differences
(``check_grads``), tf.function against eager, and the errors. Real TensorFlow checks the same ops
in ``test_tf_parity_array_extras_tf.py``."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

import gradkit as gk
import gradkit.tf as gtf

X = np.linspace(-2.0, 3.0, 24, dtype=np.float32).reshape(2, 4, 3)


def _np(t):
    return np.asarray(t.numpy())


def _on_tensors(fn):
    """``fn`` of gradkit tensors as a function of arrays, for ``check_grads``."""

    def values(a):
        outs = jax.tree.leaves(fn(gk.Tensor(a)), is_leaf=lambda o: isinstance(o, gk.Tensor))
        return jnp.concatenate([jnp.ravel(getattr(o, "__gradkit_value__", lambda o=o: o)()) for o in outs])

    return values


def test_meshgrid_matches_numpy_and_its_gradient_sums_the_repeats():
    a, b, c = np.array([1.0, 2.0, 3.0], np.float32), np.array([4.0, 5.0], np.float32), np.array([6.0], np.float32)
    for indexing in ("xy", "ij"):
        got = gtf.meshgrid(a, b, c, indexing=indexing)
        for g, w in zip(got, np.meshgrid(a, b, c, indexing=indexing)):
            np.testing.assert_array_equal(_np(g), w)
    assert [_np(g).tolist() for g in gtf.meshgrid([[1, 2], [3, 4]], 5)] == [[[1, 2, 3, 4]], [[5, 5, 5, 5]]]
    assert gtf.meshgrid() == [] and _np(gtf.meshgrid([1, 2])[0]).tolist() == [1, 2]
    v = gtf.Variable(a)
    with gtf.GradientTape() as tape:
        gx, _ = gtf.meshgrid(v, b)  # (2, 3): each entry of v repeated along 2 rows
        loss = gtf.reduce_sum(gx * [[1.0, 2.0, 3.0], [10.0, 20.0, 30.0]])
    np.testing.assert_allclose(_np(tape.gradient(loss, v)), [11.0, 22.0, 33.0])
    check_grads(_on_tensors(lambda t: gtf.meshgrid(t, t[:2] * 2.0)), (jnp.asarray(a),), order=2, modes=("rev",))


def test_sequence_mask_compares_positions_with_lengths():
    lengths = np.array([[1, 3], [4, 0]])
    np.testing.assert_array_equal(_np(gtf.sequence_mask(lengths)), np.arange(4) < lengths[..., None])
    np.testing.assert_array_equal(_np(gtf.sequence_mask(lengths, 6)), np.arange(6) < lengths[..., None])
    as_float = gtf.sequence_mask([2, 0], 3, dtype=gtf.float32)
    assert as_float.dtype == np.float32 and _np(as_float).tolist() == [[1.0, 1.0, 0.0], [0.0, 0.0, 0.0]]
    # Float lengths are truncated by an integer maxlen; a float maxlen keeps them.
    assert _np(gtf.sequence_mask([1.5], 3)).tolist() == [[True, False, False]]
    assert _np(gtf.sequence_mask([1.5], 3.0)).tolist() == [[True, True, False]]
    assert _np(gtf.sequence_mask(np.zeros([0], np.int32))).shape == (0, 0)


def test_sequence_mask_has_no_gradient():
    lengths = gtf.Variable([1.0, 2.5])
    with gtf.GradientTape() as tape:
        y = gtf.reduce_sum(gtf.sequence_mask(lengths, 3.0, dtype=gtf.float32) * lengths[:, None])
    assert tape.gradient(y, lengths) is not None  # through the product's other factor only
    with gtf.GradientTape() as tape:
        y = gtf.reduce_sum(gtf.sequence_mask(lengths, 3.0, dtype=gtf.float32))
    assert tape.gradient(y, lengths) is None


def test_dynamic_partition_groups_rows_in_order():
    data = X.reshape(8, 3)
    parts = np.array([2, 0, 2, 1, 0, 2, 2, 0])
    got = gtf.dynamic_partition(data, parts, 4)
    for i, g in enumerate(got):
        np.testing.assert_array_equal(_np(g), data[parts == i])
    entries = gtf.dynamic_partition(X[0], (X[0] > 0).astype(np.int32), 2)
    np.testing.assert_array_equal(_np(entries[1]), X[0][X[0] > 0])
    whole = gtf.dynamic_partition(X[0], 1, 2)
    assert _np(whole[0]).shape == (0, 4, 3) and np.array_equal(_np(whole[1]), X[0][None])


def test_dynamic_stitch_merges_and_the_later_duplicate_wins():
    indices = [np.array([0, 3]), np.array([[3, 1], [5, 0]])]
    data = [X[0, :2], X[1].reshape(2, 2, 3)[:, :, :]]  # rows of 3
    want = np.zeros((6, 3), np.float32)
    for idx, d in zip(indices, data):
        for i, row in zip(idx.reshape(-1), d.reshape(-1, 3)):
            want[i] = row  # in order: a later write replaces an earlier one
    np.testing.assert_array_equal(_np(gtf.dynamic_stitch(indices, data)), want)
    assert _np(gtf.dynamic_stitch([[]], [np.zeros((0, 2), np.float32)])).shape == (0, 2)


def test_dynamic_stitch_gradient_is_tensorflows_gather_at_every_index():
    # TensorFlow's gradient: data[m][i] gets the upstream gradient at indices[m][i], also where a
    # later duplicate overwrote it; the transpose of summing the rows sent to each index.
    a, b = gtf.Variable(X[0, :2, 0]), gtf.Variable(X[1, :3, 0])
    w = np.array([1.0, 10.0, 0.5, 100.0], np.float32)
    with gtf.GradientTape() as tape:
        loss = gtf.reduce_sum(gtf.dynamic_stitch([[0, 3], [3, 1, 0]], [a * a, b]) * w)
    ga, gb = tape.gradient(loss, [a, b])
    np.testing.assert_allclose(_np(ga), 2 * X[0, :2, 0] * w[[0, 3]], rtol=1e-6)
    np.testing.assert_allclose(_np(gb), w[[3, 1, 0]], rtol=1e-6)
    # Without duplicates that is the derivative: finite differences agree, to second order.
    check_grads(
        _on_tensors(lambda t: gtf.dynamic_stitch([[2, 0], [1]], [t[:2] ** 2, t[2:3] * t[0]])),
        (jnp.asarray(X[0, 0]),),
        order=2,
        modes=("rev", "fwd"),
    )


def test_partition_then_stitch_round_trips_with_its_gradient():
    parts = [1, 0, 1, 1, 0, 2, 2, 0]
    positions = gtf.dynamic_partition(np.arange(8, dtype=np.int32), parts, 3)
    v = gtf.Variable(X.reshape(8, 3))
    with gtf.GradientTape() as tape:
        pieces = gtf.dynamic_partition(v, parts, 3)
        back = gtf.dynamic_stitch(positions, [p * float(k + 1) for k, p in enumerate(pieces)])
        loss = gtf.reduce_sum(back * back)
    scale = np.array([2.0, 1.0, 2.0, 2.0, 1.0, 3.0, 3.0, 1.0], np.float32)[:, None]
    np.testing.assert_allclose(_np(back), X.reshape(8, 3) * scale, rtol=1e-6)
    np.testing.assert_allclose(_np(tape.gradient(loss, v)), 2 * X.reshape(8, 3) * scale**2, rtol=1e-5)


def _unique_oracle(values):
    seen, y, idx = {}, [], []
    for v in values.tolist():
        key = v if v == v else object()  # each NaN on its own, as TensorFlow's hash table has it
        if key not in seen:
            seen[key] = len(y)
            y.append(v)
        idx.append(seen[key])
    return np.array(y, values.dtype), np.array(idx), np.bincount(idx, minlength=len(y))


@pytest.mark.parametrize(
    "values",
    [
        np.array([3.0, 1.0, 3.0, np.nan, 2.0, np.nan, -0.0, 0.0, 1.0], np.float32),
        np.array([5, 1, 5, 5, 9, 1], np.int32),
        np.array([True, True, False]),
        np.zeros([0], np.float32),
    ],
    ids=["floats", "ints", "bools", "empty"],
)
def test_unique_and_counts_match_a_first_appearance_oracle(values):
    y, idx, count = gtf.unique_with_counts(values)
    want_y, want_idx, want_count = _unique_oracle(values)
    np.testing.assert_array_equal(_np(y), want_y)
    np.testing.assert_array_equal(_np(idx), want_idx)
    np.testing.assert_array_equal(_np(count), want_count)
    assert idx.dtype == np.int32 and count.dtype == np.int32 and y.dtype == values.dtype
    plain = gtf.unique(values, out_idx=gtf.int64)
    assert plain.idx.dtype == jax.dtypes.canonicalize_dtype(np.int64)
    np.testing.assert_array_equal(_np(plain.y), want_y)


def test_unique_gradient_splits_among_equal_entries():
    v = gtf.Variable([2.0, 1.0, 2.0, 2.0, 5.0])
    with gtf.GradientTape() as tape:
        y, idx = gtf.unique(v * 1.0)
        loss = gtf.reduce_sum(y * [3.0, 10.0, 100.0])
    assert tape.gradient(loss, v).numpy().tolist() == [1.0, 10.0, 1.0, 1.0, 100.0]
    with gtf.GradientTape() as tape:
        _, idx = gtf.unique(v)
        loss = gtf.reduce_sum(gtf.cast(idx, gtf.float32) * v)
    np.testing.assert_array_equal(_np(tape.gradient(loss, v)), [0.0, 1.0, 0.0, 0.0, 2.0])  # not through idx


def _histogram_oracle(values, lo, hi, nbins):
    # TensorFlow's CPU kernel in double precision: ((clip(v, lo, hi) - lo) / step), at most nbins - 1.
    v = np.clip(values.astype(np.float64).ravel(), lo, hi)
    bins = np.minimum((v - lo) / (hi / nbins - lo / nbins), nbins - 1).astype(np.int64)
    return np.bincount(bins, minlength=nbins)


def test_histogram_fixed_width_matches_tensorflows_kernel():
    rng = np.random.default_rng(0)
    values = rng.normal(size=(5, 7)).astype(np.float32) * 2
    for lo, hi, nbins in ((-3.0, 3.0, 10), (0.0, 1.0, 4), (-1.0, 2.0, 1)):
        got = gtf.histogram_fixed_width(values, [lo, hi], nbins=nbins)
        np.testing.assert_array_equal(_np(got), _histogram_oracle(values, lo, hi, nbins))
    assert _np(gtf.histogram_fixed_width([-1, 0, 3, 7, 10], [0, 8], nbins=3)).tolist() == [2, 1, 2]
    as_int64 = gtf.histogram_fixed_width(values, [-1.0, 1.0], nbins=3, dtype=gtf.int64)
    assert as_int64.dtype == jax.dtypes.canonicalize_dtype(np.int64)
    # Near a bin edge double precision decides: float32 0.7 is 0.69999999, in bin 6 of [0, 1] / 10
    # (its float32 quotient 7.0000005 would say bin 7).
    near_edges = np.array([0.7, 0.9, 0.3], np.float32)
    np.testing.assert_array_equal(
        _np(gtf.histogram_fixed_width(near_edges, [0.0, 1.0], nbins=10)), _histogram_oracle(near_edges, 0.0, 1.0, 10)
    )
    assert _np(gtf.histogram_fixed_width([0.7, 0.9], [0.0, 1.0], nbins=10))[[6, 8]].tolist() == [1, 1]


def test_histogram_nbins_traced_in_a_function_is_refused_naming_the_cause():
    """The bin count is the result's shape: a traced one is refused, saying so; a Python int works."""
    traced = gtf.function(lambda v, n: gtf.histogram_fixed_width(v, [-2.0, 2.0], nbins=n))
    with pytest.raises(
        ValueError, match=r"^\[gradkit\] tf.histogram_fixed_width inside tf.function got nbins as a traced"
    ):
        traced(gtf.constant([0.5, 1.5]), gtf.constant(4))
    fixed = gtf.function(lambda v: gtf.histogram_fixed_width(v, [-2.0, 2.0], nbins=4))
    assert _np(fixed(gtf.constant([0.5, 1.5, -3.0]))).tolist() == [1, 0, 1, 1]


def test_histogram_fixed_width_bins_follows_tensorflows_recipe():
    values = np.array([[-1.0, 0.0, 0.5, 0.99], [1.0, 2.0, np.inf, np.nan]], np.float32)
    got = _np(gtf.histogram_fixed_width_bins(values, [0.0, 2.0], nbins=4))
    with np.errstate(invalid="ignore"):
        want = np.clip(np.floor(np.float32(4) * ((values - 0.0) / (2.0 - 0.0))), 0, 3)
    want = np.where(np.isnan(want), np.iinfo(np.int32).min, np.nan_to_num(want)).astype(np.int32)
    np.testing.assert_array_equal(got, want)
    assert got.dtype == np.int32


def test_unravel_index_matches_numpy_and_truncates_negative_indices_as_cpp():
    dims = (2, 3, 4)
    flat = np.array([0, 5, 23, 17])
    np.testing.assert_array_equal(_np(gtf.unravel_index(flat, dims)), np.stack(np.unravel_index(flat, dims)))
    np.testing.assert_array_equal(_np(gtf.unravel_index(7, [3, 4])), [1, 3])
    assert _np(gtf.unravel_index([-1], [3, 4])).tolist() == [[0], [-1]]


def _reverse_sequence_oracle(x, lengths, seq_axis, batch_axis):
    out = np.array(x)
    for b, n in enumerate(lengths):
        src = np.take(x, b, axis=batch_axis)
        dst_axis = seq_axis - (seq_axis > batch_axis)
        rev = np.concatenate([np.flip(np.take(src, range(n), axis=dst_axis), dst_axis)], axis=dst_axis)
        index = [slice(None)] * x.ndim
        index[batch_axis], index[seq_axis] = b, slice(0, n)
        out[tuple(index)] = rev
    return out


@pytest.mark.parametrize("seq_axis, batch_axis, lengths", [(1, 0, [3, 0]), (0, 2, [2, 1, 0]), (2, 1, [3, 1, 2, 0])])
def test_reverse_sequence_matches_a_loop_and_its_gradient_permutes_back(seq_axis, batch_axis, lengths):
    got = gtf.reverse_sequence(X, lengths, seq_axis=seq_axis, batch_axis=batch_axis)
    np.testing.assert_array_equal(_np(got), _reverse_sequence_oracle(X, lengths, seq_axis, batch_axis))
    check_grads(
        _on_tensors(lambda t: gtf.reverse_sequence(t * t, lengths, seq_axis=seq_axis, batch_axis=batch_axis)),
        (jnp.asarray(X),),
        order=2,
        modes=("rev",),
    )


def _space_to_batch_oracle(x, block, paddings):
    # TensorFlow's definition: out[(i1 * b2 + i2) * batch + n, p, q, ...] = padded[n, p * b1 + i1, q * b2 + i2, ...]
    padded = np.pad(x, [(0, 0), *paddings] + [(0, 0)] * (x.ndim - 1 - len(block)))
    batch = x.shape[0]
    outs = []
    for offsets in np.ndindex(*block):
        index = (slice(None), *[slice(o, None, b) for o, b in zip(offsets, block)])
        outs.append(padded[index])
    return np.concatenate(outs, axis=0).reshape(batch * int(np.prod(block)), *outs[0].shape[1:])


@pytest.mark.parametrize(
    "block, paddings", [([2, 3], [[1, 1], [0, 0]]), ([2], [[0, 0]]), ([1, 1], [[0, 0], [1, 2]]), ([], [])]
)
def test_space_to_batch_matches_tensorflows_definition_and_batch_to_space_inverts_it(block, paddings):
    x = X[..., None]  # (2, 4, 3, 1)
    got = gtf.space_to_batch(x, block, paddings)
    np.testing.assert_array_equal(_np(got), _space_to_batch_oracle(x, block, paddings))
    back = gtf.batch_to_space(got, block, paddings)
    np.testing.assert_array_equal(_np(back), x)
    np.testing.assert_array_equal(_np(gtf.space_to_batch_nd(x, block, paddings)), _np(got))


def test_space_batch_gradients_are_each_others():
    check_grads(
        _on_tensors(lambda t: gtf.space_to_batch(t * t, [2, 3], [[0, 2], [0, 0]])), (jnp.asarray(X),), 2, ("rev",)
    )
    y = gtf.space_to_batch(X, [2], [[1, 1]])
    check_grads(_on_tensors(lambda t: gtf.batch_to_space(t * t, [2], [[1, 0]])), (jnp.asarray(_np(y)),), 2, ("rev",))
    paddings, crops = gtf.required_space_to_batch_paddings([5, 7], [2, 3], base_paddings=[[1, 0], [0, 2]])
    assert _np(paddings).tolist() == [[1, 0], [0, 2]] and _np(crops).tolist() == [[0, 0], [0, 0]]
    paddings, crops = gtf.required_space_to_batch_paddings([5, 7], [2, 3])
    assert _np(paddings).tolist() == [[0, 1], [0, 2]] and _np(crops).tolist() == [[0, 1], [0, 2]]


def test_shape_helpers():
    assert [_np(s).tolist() for s in gtf.shape_n([X, [1.0, 2.0]])] == [[2, 4, 3], [2]]
    assert gtf.broadcast_static_shape(gtf.TensorShape([2, 1]), [3]).as_list() == [2, 3]
    assert list(gtf.broadcast_static_shape([None, 1, 5], [None, 4, 1])) == [None, 4, 5]
    assert _np(gtf.broadcast_dynamic_shape([2, 1, 4], [3, 1])).tolist() == [2, 3, 4]
    assert gtf.get_static_value(gtf.constant([1, 2])).tolist() == [1, 2]
    assert gtf.get_static_value(gtf.Variable(1.0)) is None and gtf.get_static_value([3]) == [3]
    seen = []

    @gtf.function
    def traced(x):
        seen.append(gtf.get_static_value(x))
        return x

    traced(gtf.constant(1.0))
    assert seen == [None]
    v = gtf.Variable(X[0])
    with gtf.GradientTape() as tape:
        a, b = gtf.identity_n([v, v * 2.0])
        loss = gtf.reduce_sum(gtf.ensure_shape(a, [None, 3]) * b) + gtf.reduce_sum(gtf.guarantee_const(v))
    np.testing.assert_allclose(_np(tape.gradient(loss, v)), 4 * X[0] + 1, rtol=1e-6)


def test_bitcast_reads_the_same_bits_as_numpy_and_has_no_gradient():
    np.testing.assert_array_equal(_np(gtf.bitcast(X, gtf.int32)), X.view(np.int32))
    np.testing.assert_array_equal(_np(gtf.bitcast(X, gtf.uint8)), X.view(np.uint8).reshape(*X.shape, 4))
    as_bytes = np.arange(8, dtype=np.uint8).reshape(2, 4)
    np.testing.assert_array_equal(_np(gtf.bitcast(as_bytes, gtf.float32)), as_bytes.view(np.float32)[:, 0])
    v = gtf.Variable(X)
    with gtf.GradientTape() as tape:
        loss = gtf.reduce_sum(gtf.bitcast(gtf.bitcast(v, gtf.float16), gtf.float32))
    assert tape.gradient(loss, v) is None


def test_bad_indices_ignore_gradient_reaches_the_indices_kept():
    v = gtf.Variable([1.0, 2.0, 3.0])
    with gtf.GradientTape() as tape:
        updates = gtf.concat([v * v + 1.0, [7.0]], axis=0)
        y = gtf.tensor_scatter_nd_add(v, [[0], [5], [2], [-1]], updates, bad_indices_policy="IGNORE")
        z = gtf.gather_nd(y, [[1], [7], [2]], bad_indices_policy="IGNORE")
        loss = gtf.reduce_sum(z * [1.0, 2.0, 3.0]) + gtf.reduce_sum(y)

    def pure(a):
        y = a.at[jnp.array([0, 2])].add((a * a + 1.0)[jnp.array([0, 2])])
        return jnp.sum(y[jnp.array([1, 2])] * jnp.array([1.0, 3.0])) + jnp.sum(y)

    a = jnp.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(loss.numpy(), pure(a), rtol=1e-6)
    np.testing.assert_allclose(_np(tape.gradient(loss, v)), jax.grad(pure)(a), rtol=1e-6)


def test_inside_tf_function_matches_eager():
    def forward(x, lengths):
        parts = gtf.dynamic_partition(x[0], [1, 0, 1, 1], 2)
        stitched = gtf.dynamic_stitch([[2, 0], [1, 3]], [x[1, :2], x[0, 2:]])
        grid = gtf.meshgrid(x[0, :, 0], x[1, 0])[1]
        mask = gtf.sequence_mask(lengths, 4, dtype=gtf.float32)
        rev = gtf.reverse_sequence(x, lengths, seq_axis=1) * mask[..., None]
        blocks = gtf.batch_to_space(
            gtf.space_to_batch(x[..., None], [2, 1], [[0, 0], [0, 0]]), [2, 1], [[0, 0], [0, 0]]
        )
        y, _ = gtf.unique([3.0, 1.0, 3.0])
        hist = gtf.cast(gtf.histogram_fixed_width(x, [-2.0, 3.0], nbins=5), gtf.float32)
        padded = gtf.pad(x[0], [[1, 0], [0, 1]], constant_values=x[1, 0, 0])  # a traced constant_values
        return [
            padded,
            parts[0],
            parts[1],
            stitched,
            grid,
            rev,
            blocks,
            y,
            hist,
            gtf.cast(gtf.unravel_index(lengths, [2, 2]), gtf.float32),
        ]

    compiled = gtf.function(forward)
    lengths = gtf.constant([3, 1])
    for got, want in zip(compiled(gtf.constant(X), lengths), forward(gtf.constant(X), lengths)):
        np.testing.assert_allclose(_np(got), _np(want), rtol=1e-6)


def test_values_that_set_shapes_must_be_known_inside_tf_function():
    with pytest.raises(gk.GradkitError, match="dynamic_partition inside tf.function"):
        gtf.function(lambda p: gtf.dynamic_partition(X[0], p, 2))(gtf.constant([0, 1, 0, 1]))
    with pytest.raises(gk.GradkitError, match="unique inside tf.function"):
        gtf.function(lambda x: gtf.unique(x))(gtf.constant([1.0, 2.0]))
    with pytest.raises(gk.GradkitError, match="sequence_mask inside tf.function"):
        gtf.function(lambda n: gtf.sequence_mask(n))(gtf.constant([1, 2]))


REFUSED = {
    "meshgrid_mixed_dtypes": lambda: gtf.meshgrid([1, 2, 3], [4.0, 5.0]),
    "meshgrid_unknown_keyword": lambda: gtf.meshgrid([1, 2], sparse=True),
    "dynamic_partition_out_of_range": lambda: gtf.dynamic_partition(X[0], [1, 0, 3, 0], 3),
    "dynamic_stitch_negative": lambda: gtf.dynamic_stitch([[0, -1]], [[1.0, 2.0]]),
    "unique_matrix": lambda: gtf.unique(X[0]),
    "histogram_nan": lambda: gtf.histogram_fixed_width([1.0, np.nan], [0.0, 4.0], nbins=4),
    "unravel_out_of_bounds": lambda: gtf.unravel_index([12], [3, 4]),
    "ensure_shape_mismatch": lambda: gtf.ensure_shape(X[0], [3, 4]),
    "broadcast_static_shape": lambda: gtf.broadcast_static_shape([2, 2], [3]),
    "reverse_sequence_no_seq_axis": lambda: gtf.reverse_sequence(X[0], [2, 3, 1, 0]),
    "space_to_batch_indivisible": lambda: gtf.space_to_batch(X, [3, 3], [[0, 0], [0, 0]]),
    "batch_to_space_indivisible_batch": lambda: gtf.batch_to_space(X, [3], [[0, 0]]),
    "pad_unknown_mode": lambda: gtf.pad(X[0], [[1, 1], [0, 0]], mode="WRAP"),
    "pad_float_on_int": lambda: gtf.pad(gtf.constant([1, 2]), [[1, 1]], constant_values=7.5),
    "shape_float_out_type": lambda: gtf.shape(X, out_type=gtf.float32),
    "scatter_bad_policy": lambda: gtf.tensor_scatter_nd_add(gtf.zeros([3]), [[0]], [1.0], bad_indices_policy="x"),
    "zeros_with_a_layout": lambda: gtf.zeros([2], layout="mesh"),
    "bitcast_complex": lambda: gtf.bitcast(X, gtf.complex64),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_bad_inputs_raise_a_gradkit_error(name):
    with pytest.raises((ValueError, TypeError, IndexError), match=r"^\[gradkit\] "):
        REFUSED[name]()
