"""``bucket_by_sequence_length``: elements grouped into buckets by their length and batched per
bucket, padded to the longest in the batch (or to the bucket's boundary).

TensorFlow builds it on ``group_by_window``, and so does gradkit, with TensorFlow's rules: an
element of length ``n`` falls in the bucket ``i`` where ``bucket_boundaries[i - 1] <= n <
bucket_boundaries[i]`` (the first from minus infinity, the last to infinity); each bucket batches
``bucket_batch_sizes[i]`` elements (``padded_batch``, or ``batch`` with ``no_padding``); with
``pad_to_bucket_boundary`` its unknown dimensions are padded to the bucket's boundary minus one,
and an element of the last bucket (longer than every boundary) is an error.

>>> import gradkit.tf as tf
>>> ds = tf.data.Dataset.from_generator(
...     lambda: iter([[1], [1, 2, 3], [4, 5], [6]]), output_signature=tf.TensorSpec([None], tf.int32))
>>> ds = ds.bucket_by_sequence_length(lambda x: tf.shape(x)[0], [2], [2, 2])
>>> [b.tolist() for b in ds.as_numpy_iterator()]
[[[1, 2, 3], [4, 5, 0]], [[1], [6]]]
"""

from __future__ import annotations

import jax
import numpy as np

from gradkit import _errors

from . import functions
from .grouping import GroupByWindow
from .structure import as_component, canonical, to_public

_WHAT = "tf.data.Dataset.bucket_by_sequence_length"


def _ints(values, name: str) -> list[int]:
    try:
        return [int(v) for v in np.asarray(values).reshape(-1)]
    except (TypeError, ValueError):
        raise _errors.GradkitTypeError(
            f"{_WHAT}: `{name}` must be a list of ints, got {values!r}. Pass Python ints, e.g. {name}=[10, 20]."
        ) from None


class BucketBySequenceLength(GroupByWindow):
    def __init__(self, dataset, element_length_func, bucket_boundaries, bucket_batch_sizes, options: dict):
        """``options``: ``Dataset.bucket_by_sequence_length``'s keyword arguments after the first three."""
        padded_shapes, padding_values = options["padded_shapes"], options["padding_values"]
        pad_to_bucket_boundary, no_padding = options["pad_to_bucket_boundary"], options["no_padding"]
        drop_remainder = options["drop_remainder"]
        boundaries = _ints(bucket_boundaries, "bucket_boundaries")
        sizes = _ints(bucket_batch_sizes, "bucket_batch_sizes")
        if len(sizes) != len(boundaries) + 1:
            raise _errors.GradkitValueError(
                f"len(bucket_batch_sizes) must equal len(bucket_boundaries) + 1 ({_WHAT} got {len(sizes)} batch "
                f"sizes for {len(boundaries)} boundaries): give one batch size per bucket, the last for the "
                "elements at least as long as the last boundary."
            )
        if not callable(element_length_func):
            raise _errors.GradkitTypeError(
                f"{_WHAT} got a {type(element_length_func).__name__} as `element_length_func`: pass a function "
                "of an element that returns its length (e.g. lambda x: tf.shape(x)[0])."
            )
        length_func = functions.frozen(element_length_func)
        lows = [np.iinfo(np.int32).min, *boundaries]
        highs = [*boundaries, np.iinfo(np.int32).max]

        def bucket_of(*element):
            length = as_component(length_func(*element), "what `element_length_func` returned")
            if length.shape != () or length.dtype.kind not in "iu":
                raise _errors.GradkitValueError(
                    f"{_WHAT}: `element_length_func` must return an integer scalar, but it returned a "
                    f"{length.dtype} tensor of shape {length.shape}. Return e.g. tf.shape(x)[0]."
                )
            n = int(length)
            bucket = next((i for i, (lo, hi) in enumerate(zip(lows, highs)) if lo <= n < hi), None)
            if bucket is None:
                raise _errors.GradkitInvalidArgumentError(
                    f"{_WHAT}: element length {n} falls in no bucket (int32's range). Give lengths within int32's range."
                )
            return to_public(np.array(bucket, canonical(np.int64)))

        def batched(key, window):
            bucket = int(key)
            if no_padding:
                return window.batch(sizes[bucket], drop_remainder=drop_remainder)
            filler = None
            if pad_to_bucket_boundary:
                if bucket >= len(sizes) - 1:
                    raise _errors.GradkitInvalidArgumentError(
                        "When pad_to_bucket_boundary=True, elements must have length < max(bucket_boundaries) "
                        f"({_WHAT}). Add a boundary above the longest element, or pad_to_bucket_boundary=False."
                    )
                filler = boundaries[bucket] - 1
            shapes = padded_shapes
            if shapes is None:
                shapes = jax.tree_util.tree_map(lambda spec: spec.shape, window.element_spec, is_leaf=_is_spec)
            shapes = jax.tree_util.tree_map(
                lambda shape: [filler if d is None else d for d in _dims(shape)], shapes, is_leaf=_is_shape
            )
            return window.padded_batch(sizes[bucket], shapes, padding_values, drop_remainder=drop_remainder)

        super().__init__(dataset, bucket_of, batched, None, lambda key: sizes[int(key)])


def _dims(shape) -> list:
    """A shape's dimensions, None where unknown (a TensorShape, a list or a tuple)."""
    as_list = getattr(shape, "as_list", None)
    return list(as_list() if as_list is not None else shape)


def _is_shape(x) -> bool:
    """A shape where a structure of shapes has its leaves: a TensorShape, or a list of dimensions."""
    return hasattr(x, "as_list") or (isinstance(x, (list, tuple)) and all(d is None or np.ndim(d) == 0 for d in x))


def _is_spec(x) -> bool:
    return hasattr(x, "shape") and hasattr(x, "dtype")


def bucket_by_sequence_length(element_length_func, bucket_boundaries, bucket_batch_sizes, **options):
    """``tf.data.experimental.bucket_by_sequence_length``: for ``dataset.apply``; the options of
    ``Dataset.bucket_by_sequence_length``."""
    return lambda dataset: dataset.bucket_by_sequence_length(
        element_length_func, bucket_boundaries, bucket_batch_sizes, **options
    )
