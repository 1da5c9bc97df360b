"""Datasets that take each element from one of several datasets: ``choose_from_datasets`` (the
dataset an index of ``choice_dataset`` names) and ``sample_from_datasets`` (one drawn with
``weights``), and ``counter`` (0, 1, 2, ... without end).

``sample_from_datasets`` draws with NumPy's generator from seeds set as ``shuffle``'s are
(``shuffle.py``), so its order differs from TensorFlow's for the same seeds; its proportions
and its determinism under a seed are TensorFlow's. A dataset that runs out is dropped and the
others' weights are renormalized, as TensorFlow does, unless ``stop_on_empty_dataset``.
"""

from __future__ import annotations

import itertools

import numpy as np

from gradkit import _errors

from .. import _dtypes
from .._function import TensorSpec
from .chunks import Chunk, Cursor
from .dataset import Dataset, bool_arg, int_arg
from .options import INFINITE_CARDINALITY, UNKNOWN_CARDINALITY
from .shuffle import _seed_words
from .structure import LEAF, canonical, most_specific_compatible

_BLOCK = 1 << 12  # elements of a counter made at a time


def _check_datasets(datasets, what: str) -> list:
    if isinstance(datasets, Dataset) or not isinstance(datasets, (list, tuple)) or not datasets:
        raise _errors.GradkitValueError(
            f"Invalid `datasets`: {what} takes a non-empty list of tf.data.Dataset, but got {type(datasets).__name__}"
            f"{'' if not isinstance(datasets, (list, tuple)) else ' of length 0'}."
        )
    for d in datasets:
        if not isinstance(d, Dataset):
            raise _errors.GradkitTypeError(
                f"{what} got a {type(d).__name__} among `datasets`; each must be a tf.data.Dataset (make one with "
                "tf.data.Dataset.from_tensor_slices)."
            )
    return list(datasets)


def _merged_spec(datasets: list, what: str):
    structure, merged = datasets[0]._structure_and_specs()
    for other in datasets[1:]:
        other_structure, specs = other._structure_and_specs()
        if other_structure != structure or None in (
            merged := [most_specific_compatible(a, b) for a, b in zip(merged, specs)]
        ):
            raise _errors.GradkitTypeError(
                f"Incompatible dataset elements in {what}: {structure.pack(datasets[0]._structure_and_specs()[1])} vs. "
                f"{other_structure.pack(specs)}. Every dataset must have the same structure and dtypes; cast with map "
                "first."
            )
    return structure, merged


class _FromDatasets(Dataset):
    """Elements taken one at a time from ``datasets``, at the indices ``_indices()`` gives."""

    def __init__(self, datasets: list, extra: list, stop_on_empty: bool, what: str):
        super().__init__(*datasets, *extra)
        self._datasets, self._stop_on_empty, self._what = datasets, stop_on_empty, what
        self._spec = _merged_spec(datasets, what)

    def _chunks(self):
        cursors = [Cursor(d._chunks()) for d in self._datasets]
        exhausted: set = set()
        indices = self._indices(exhausted)
        try:
            for index in indices:
                if not 0 <= index < len(cursors):
                    raise _errors.GradkitInvalidArgumentError(
                        f"{self._what}: selector index out of range: {index} is not in [0, {len(cursors)})."
                    )
                if index in exhausted:
                    continue
                element = cursors[index].next_up_to(1)
                if element is None:
                    exhausted.add(index)
                    if self._stop_on_empty or len(exhausted) == len(cursors):
                        return
                    continue
                yield element.as_structure(self._spec[0])
        finally:
            getattr(indices, "close", lambda: None)()
            for cursor in cursors:
                cursor.close()

    def _indices(self, exhausted: set):
        raise NotImplementedError

    def _compute_spec(self):
        return self._spec

    def _cardinality(self) -> int:
        # TensorFlow's rule: endless as soon as one of the datasets drawn from is; else unknown.
        if any(d._cardinality() == INFINITE_CARDINALITY for d in self._datasets):
            return INFINITE_CARDINALITY
        return UNKNOWN_CARDINALITY


class ChooseFromDatasets(_FromDatasets):
    def __init__(self, datasets, choice_dataset, stop_on_empty_dataset):
        what = "tf.data.Dataset.choose_from_datasets"
        datasets = _check_datasets(datasets, what)
        if not isinstance(choice_dataset, Dataset):
            raise _errors.GradkitTypeError(
                f"{what}: `choice_dataset` must be a tf.data.Dataset of scalar int64 indices, but got "
                f"{type(choice_dataset).__name__}."
            )
        structure, specs = choice_dataset._structure_and_specs()
        # tf.int64 as gradkit has it: int32 where jax_enable_x64 is off, which cannot be told apart.
        if structure != LEAF or specs[0].shape != () or np.dtype(specs[0].dtype) != canonical(np.int64):
            raise _errors.GradkitTypeError(
                f"Invalid `choice_dataset`. Elements of `choice_dataset` must be scalar tf.int64 tensors but are "
                f"{structure.pack(specs)} ({what}). Map it with tf.cast(index, tf.int64)."
            )
        self._choices = choice_dataset
        super().__init__(datasets, [choice_dataset], bool_arg(stop_on_empty_dataset, what), what)

    def _indices(self, exhausted: set):
        for chunk in self._choices._chunks():
            yield from (int(i) for i in chunk.arrays[0])


_SAMPLE = "tf.data.Dataset.sample_from_datasets"


def _sample_weights(datasets: list, weights) -> np.ndarray:
    if weights is None:
        return np.ones(len(datasets))
    if isinstance(weights, Dataset):
        raise _errors.GradkitTypeError(
            f"{_SAMPLE}: gradkit.tf takes `weights` as a list of numbers (one per dataset), not as a dataset of "
            "weight vectors. Pass the weights as a list."
        )
    weights = np.asarray(getattr(weights, "numpy", lambda: weights)(), np.float64)
    if weights.shape != (len(datasets),) or not np.all(np.isfinite(weights)) or np.any(weights < 0):
        raise _errors.GradkitValueError(
            f"{_SAMPLE}: `weights` must be {len(datasets)} non-negative numbers (one per dataset), but got {weights}."
        )
    return weights


def sample_from_datasets(datasets, weights, seed, stop_on_empty_dataset, rerandomize_each_iteration) -> Dataset:
    """TensorFlow's ``sample_from_datasets``: with weights given as numbers (not a tensor), the
    datasets of weight 0 are left out (all of them: none of the first's elements), and one dataset
    left is returned itself, its cardinality and element_spec its own."""
    datasets = _check_datasets(datasets, _SAMPLE)
    array = _sample_weights(datasets, weights)
    if weights is not None and not hasattr(weights, "numpy"):
        kept = [(d, w) for d, w in zip(datasets, array) if w > 0]
        datasets, array = (
            ([d for d, _ in kept], np.array([w for _, w in kept])) if kept else ([datasets[0].take(0)], np.ones(1))
        )
    if len(datasets) == 1:
        return datasets[0]
    return SampleFromDatasets(datasets, array, seed, stop_on_empty_dataset, rerandomize_each_iteration)


class SampleFromDatasets(_FromDatasets):
    def __init__(self, datasets, weights, seed, stop_on_empty_dataset, rerandomize_each_iteration):
        what = _SAMPLE
        datasets = _check_datasets(datasets, what)
        weights = _sample_weights(datasets, weights)
        if weights.sum() <= 0:
            raise _errors.GradkitValueError(
                f"{what}: `weights` must not all be zero, but got {weights.tolist()}: no dataset could be drawn "
                "from. Give a positive weight to at least one dataset."
            )
        self._weights = weights
        self._words = _seed_words(seed)
        self._rerandomize = bool_arg(bool(rerandomize_each_iteration), what)
        self._passes = 0
        super().__init__(datasets, [], bool_arg(stop_on_empty_dataset, what), what)

    def _indices(self, exhausted: set):
        pass_index = self._passes if self._rerandomize else 0
        self._passes += 1
        key = np.array([(self._words[0] << 32) | self._words[1], pass_index], np.uint64)
        rng = np.random.Generator(np.random.Philox(key=key))
        while True:
            weights = self._weights.copy()
            weights[list(exhausted)] = 0.0
            if weights.sum() <= 0:
                return
            yield int(rng.choice(len(weights), p=weights / weights.sum()))


class Counter(Dataset):
    def __init__(self, start, step, dtype):
        super().__init__()
        self._start = int_arg(start, "tf.data.Dataset.counter(start)")
        self._step = int_arg(step, "tf.data.Dataset.counter(step)")
        self._dtype = canonical(np.dtype(_dtypes.as_dtype(dtype)))

    def _chunks(self):
        for first in itertools.count(0, _BLOCK):
            index = np.arange(first, first + _BLOCK, dtype=np.int64)
            yield Chunk(LEAF, [(self._start + self._step * index).astype(self._dtype)])

    def _compute_spec(self):
        return LEAF, [TensorSpec((), self._dtype)]

    def _cardinality(self) -> int:
        return INFINITE_CARDINALITY
