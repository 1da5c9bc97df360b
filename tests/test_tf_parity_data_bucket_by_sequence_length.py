"""``Dataset.bucket_by_sequence_length`` (and ``tf.data.experimental``'s, for ``apply``) against
TensorFlow: the batches, their padding and the element_spec, for each of its options."""

import numpy as np
import pytest

import gradkit.tf as gtf

ROWS = [[1], [1, 2, 3], [4, 5], [6], [7, 8, 9, 10], [11, 12], [13], [14, 15, 16]]

OPTIONS = {
    "default": {},
    "drop_remainder": {"drop_remainder": True},
    "padding_values": {"padding_values": -1},
    "padded_shapes": {"padded_shapes": [5]},
    "pad_to_bucket_boundary": {"pad_to_bucket_boundary": True},
    "no_padding_equal_lengths": {"no_padding": True},
}


def _sequences(tf, rows):
    return tf.data.Dataset.from_generator(lambda: iter(rows), output_signature=tf.TensorSpec([None], tf.int32))


def _bucketed(tf, options):
    rows = [r[:1] for r in ROWS] if options.get("no_padding") else ROWS
    boundaries = [2, 4, 6] if options.get("pad_to_bucket_boundary") else [2, 4]
    sizes = [2, 2, 3, 1] if options.get("pad_to_bucket_boundary") else [2, 2, 3]
    length = (lambda x: x[0] % 5) if options.get("no_padding") else (lambda x: tf.shape(x)[0])
    ds = _sequences(tf, rows).bucket_by_sequence_length(length, boundaries, sizes, **options)
    return ds.element_spec.shape.as_list(), [b.tolist() for b in ds.as_numpy_iterator()]


@pytest.mark.parametrize("name", OPTIONS)
def test_batches_match_tensorflow(name):
    tf = pytest.importorskip("tensorflow")
    assert _bucketed(gtf, OPTIONS[name]) == _bucketed(tf, OPTIONS[name])


def test_the_default_batches_by_hand():
    # Buckets [-inf, 2), [2, 4), [4, inf) of 2, 2 and 3 elements; each full bucket is batched as it
    # fills, the rest at the end in bucket order; padded with zeros to the longest.
    spec, batches = _bucketed(gtf, {})
    assert spec == [None, None]
    assert batches == [[[1, 2, 3], [4, 5, 0]], [[1], [6]], [[11, 12, 0], [14, 15, 16]], [[13]], [[7, 8, 9, 10]]]


def _tuples(tf):
    ds = tf.data.Dataset.from_tensor_slices((np.arange(6, dtype=np.int32), np.arange(6, dtype=np.int32) * 10))
    ds = ds.apply(
        tf.data.experimental.bucket_by_sequence_length(lambda x, y: x % 3, [1, 2], [2, 1, 2], no_padding=True)
    )
    return [tuple(c.tolist() for c in b) for b in ds.as_numpy_iterator()]


def test_tuple_elements_through_apply_match_tensorflow():
    assert _tuples(gtf) == [([1], [10]), ([0, 3], [0, 30]), ([4], [40]), ([2, 5], [20, 50])]
    tf = pytest.importorskip("tensorflow")
    assert _tuples(gtf) == _tuples(tf)


def test_an_element_past_the_last_boundary_with_pad_to_bucket_boundary_is_an_error():
    ds = _sequences(gtf, [[1], [1, 2, 3]]).bucket_by_sequence_length(
        lambda x: gtf.shape(x)[0], [2], [1, 1], pad_to_bucket_boundary=True
    )
    with pytest.raises(gtf.errors.InvalidArgumentError, match=r"must have length < max\(bucket_boundaries\)"):
        list(ds)


def test_batch_sizes_one_more_than_boundaries():
    with pytest.raises(
        ValueError, match=r"^\[gradkit\] len\(bucket_batch_sizes\) must equal len\(bucket_boundaries\) \+ 1"
    ):
        _sequences(gtf, ROWS).bucket_by_sequence_length(lambda x: gtf.shape(x)[0], [2, 4], [2, 2])


def _one_boundary(tf):
    # One boundary makes two buckets: the element_spec keeps the fixed trailing size of 3.
    ds = tf.data.Dataset.from_tensor_slices((np.arange(10, dtype=np.int32), np.zeros((10, 3), np.float32)))
    ds = ds.bucket_by_sequence_length(lambda x, y: x, [4], [3, 3])
    return [s.shape.as_list() for s in ds.element_spec], [tuple(b[1].shape) for b in ds.as_numpy_iterator()]


def test_one_boundary_keeps_fixed_dimensions_in_the_element_spec():
    specs, shapes = _one_boundary(gtf)
    assert specs == [[None], [None, 3]]
    assert shapes == [(3, 3), (3, 3), (3, 3), (1, 3)]  # lengths 0-3 in bucket 0, 4-9 in bucket 1, by 3
    tf = pytest.importorskip("tensorflow")
    assert _one_boundary(gtf) == _one_boundary(tf)
