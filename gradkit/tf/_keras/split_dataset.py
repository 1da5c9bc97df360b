"""``tf.keras.utils.split_dataset``: a small in-memory dataset (a ``tf.data.Dataset``, a NumPy
array, or a list/tuple of same-length arrays) split into a left and a right
``tf.data.Dataset``, as Keras 3 splits it.

As in Keras, the samples are read into memory; ``shuffle`` shuffles them with Python's
``random`` module seeded by ``seed`` (so a seed gives Keras' split); the left part is the first
``left_size`` samples and the right part the last ``right_size`` (a middle left out when the two
do not add up to all); a dataset whose outermost step is ``batch`` or ``padded_batch`` is
unbatched first and both parts are batched again by the same size.
"""

from __future__ import annotations

import random

import jax
import numpy as np

from gradkit import _errors

from .._data.batching import Batch, PaddedBatch
from .._data.dataset import Dataset

_WHAT = "tf.keras.utils.split_dataset"


def split_dataset(dataset, left_size=None, right_size=None, shuffle=False, seed=None, preferred_backend=None):
    """Split ``dataset`` into ``(left, right)`` ``tf.data.Dataset`` objects.

    ``left_size`` / ``right_size``: a float in ``(0, 1)`` (a fraction of the samples, rounded)
    or an int (a number of samples); one of them may be None (the rest).
    """
    if preferred_backend not in (None, "tensorflow"):
        raise _errors.GradkitValueError(
            f"{_WHAT}(preferred_backend={preferred_backend!r}): gradkit returns tf.data datasets only. Leave "
            "preferred_backend unset (or 'tensorflow'), and wrap the splits for another framework yourself."
        )
    if not isinstance(dataset, (tuple, list, np.ndarray, Dataset)):
        raise _errors.GradkitTypeError(
            "The `dataset` argument must be either a `tf.data.Dataset` object, or a list/tuple of arrays. "
            f"Received: dataset={dataset!r} of type {type(dataset)}"
        )
    if left_size is None and right_size is None:
        raise _errors.GradkitValueError(
            "At least one of the `left_size` or `right_size` must be specified. Received: left_size=None and "
            "right_size=None"
        )
    samples = _samples(dataset)
    if shuffle:
        # Keras shuffles the list with the global Python generator, seeded: the same seed gives
        # the same split as Keras.
        if seed is None:
            seed = random.randint(0, int(1e6))
        random.seed(seed)
        random.shuffle(samples)
    left, right = _sizes(left_size, right_size, len(samples))
    batch_size = dataset._size if isinstance(dataset, (Batch, PaddedBatch)) else None
    splits = []
    for part in (samples[:left], samples[-right:]):
        split = Dataset.from_tensor_slices(_stacked(part, dataset))
        if batch_size is not None:
            split = split.batch(batch_size)
        splits.append(split.prefetch(-1))
    return tuple(splits)


def _samples(dataset) -> list:
    """The dataset's samples as a list (a sample of arrays: a tuple of their rows)."""
    if isinstance(dataset, (list, tuple)):
        kind = type(dataset).__name__
        if not dataset:
            raise _errors.GradkitValueError(
                f"Received an empty {kind} dataset. Please provide a non-empty {kind} of arrays."
            )
        for i, element in enumerate(dataset):
            if not isinstance(element, np.ndarray):
                raise _errors.GradkitValueError(
                    f"Expected a {kind} of `numpy.ndarray` objects, Received: {type(element)} at index {i}. Convert "
                    "each entry with np.asarray first."
                )
            if element.shape[:1] != dataset[0].shape[:1]:
                raise _errors.GradkitValueError(
                    f"Received a {kind} of NumPy arrays with different lengths. Mismatch found at index {i}, "
                    f"Expected shape={dataset[0].shape} Received shape={element.shape}. Please provide a {kind} of "
                    "NumPy arrays of the same length."
                )
        return list(zip(*dataset))
    if isinstance(dataset, (Batch, PaddedBatch)):
        dataset = dataset.unbatch()
    samples = list(dataset)
    if not samples:
        raise _errors.GradkitValueError(
            "Received an empty dataset. Argument `dataset` must be a non-empty list/tuple of `numpy.ndarray` "
            "objects or `tf.data.Dataset` objects."
        )
    first = samples[0]
    if hasattr(first, "shape") and not isinstance(first, (tuple, list, dict)):
        for i, sample in enumerate(samples[1:]):
            if tuple(sample.shape) != tuple(first.shape):
                raise _errors.GradkitValueError(
                    f"All `dataset` samples must have same shape, Expected shape: {tuple(first.shape)} Received "
                    f"shape: {tuple(sample.shape)} at index {i}."
                )
    return samples


def _stacked(samples: list, dataset):
    """The samples as one structure of arrays stacked along a new first axis."""
    if isinstance(dataset, np.ndarray):
        return np.stack(samples) if samples else samples
    leaves = [jax.tree_util.tree_leaves(sample, is_leaf=_is_leaf) for sample in samples]
    treedef = jax.tree_util.tree_structure(samples[0], is_leaf=_is_leaf)
    columns = [np.stack([np.asarray(column) for column in group]) for group in zip(*leaves)]
    stacked = jax.tree_util.tree_unflatten(treedef, columns)
    # tf.data takes a tuple as one element's components, a list as one tensor.
    return _lists_as_tuples(stacked)


def _is_leaf(x) -> bool:
    return not isinstance(x, (list, tuple, dict))


def _lists_as_tuples(structure):
    if isinstance(structure, (list, tuple)):
        return tuple(_lists_as_tuples(x) for x in structure)
    if isinstance(structure, dict):
        return {key: _lists_as_tuples(value) for key, value in structure.items()}
    return structure


def _sizes(left_size, right_size, total: int) -> tuple[int, int]:
    """Keras' rescaling of the requested sizes to sample counts, with its checks."""
    for name, size in (("left_size", left_size), ("right_size", right_size)):
        if size is not None and type(size) not in (int, float):
            raise _errors.GradkitTypeError(
                f"Invalid `{name}` Type. Expected: int or float or None, Received: type({name})={type(size)}. Pass a "
                "Python int (a number of samples) or float (a fraction)."
            )
    if left_size == 0 and right_size == 0:
        raise _errors.GradkitValueError(
            "Both `left_size` and `right_size` are zero. At least one of the split sizes must be non-zero."
        )
    for name, size in (("left_size", left_size), ("right_size", right_size)):
        if (type(size) is int and not 0 < size < total) or (type(size) is float and not 0 < size < 1):
            raise _errors.GradkitValueError(
                f"`{name}` should be either a positive integer smaller than {total}, or a float within the range "
                f"`[0, 1]`. Received: {name}={size}"
            )
    if type(left_size) is float and type(right_size) is float and left_size + right_size > 1:
        raise _errors.GradkitValueError(
            "The sum of `left_size` and `right_size` is greater than 1. It must be less than or equal to 1."
        )
    left = round(left_size * total) if type(left_size) is float else left_size
    right = round(right_size * total) if type(right_size) is float else right_size
    if left is None:
        left = total - right
    elif right is None:
        right = total - left
    if left + right > total:
        raise _errors.GradkitValueError(
            f"The sum of `left_size` and `right_size` should be smaller than the {total}. Received: left_size + "
            f"right_size = {left + right} and total_length = {total}"
        )
    for split, side in ((left, "left"), (right, "right")):
        if split == 0:
            raise _errors.GradkitValueError(
                f"With `dataset` of length={total}, `left_size`={left} and `right_size`={right}. Resulting {side} "
                "side dataset split will be empty. Adjust any of the aforementioned parameters"
            )
    return int(left), int(right)
