"""The steps that join datasets or split one into datasets: ``zip``, ``concatenate``, ``window``."""

from __future__ import annotations

import numpy as np

from gradkit import _errors

from .chunks import Chunk, Cursor
from .dataset import Dataset, bool_arg, int_arg
from .options import INFINITE_CARDINALITY, UNKNOWN_CARDINALITY
from .structure import LEAF, DatasetSpec, Structure, most_specific_compatible


class Zip(Dataset):
    def __init__(self, args: tuple, datasets):
        if datasets is not None and args:
            raise _errors.GradkitTypeError(
                "tf.data.Dataset.zip takes the datasets either positionally or as datasets=, not both."
            )
        if datasets is None:
            if not args:
                raise _errors.GradkitTypeError("Must pass at least one dataset to `zip`: tf.data.Dataset.zip(a, b).")
            datasets = args[0] if len(args) == 1 else args
        self._nesting, inputs = Structure.split(datasets)
        for item in inputs:
            if not isinstance(item, Dataset):
                hint = (
                    " Python `list` is not supported and you should use `tuple` instead."
                    if isinstance(item, list)
                    else ""
                )
                raise _errors.GradkitTypeError(
                    "Invalid input to `zip`. Inputs are expected to be (nested) structures of `tf.data.Dataset` "
                    f"objects; got a {type(item).__name__}.{hint}"
                )
        super().__init__(*inputs)

    def _chunks(self):
        cursors = [Cursor(d._chunks()) for d in self._inputs]
        heads: list = [None] * len(cursors)
        try:
            while True:
                for i, cursor in enumerate(cursors):
                    if heads[i] is None:
                        heads[i] = cursor.next_up_to(1 << 62)
                        if heads[i] is None:
                            return
                count = min(len(h) for h in heads)
                parts = [h if len(h) == count else h.slice(0, count) for h in heads]
                heads = [None if len(h) == count else h.slice(count) for h in heads]
                structure = self._nesting.nest([p.structure for p in parts])
                yield Chunk(structure, [a for p in parts for a in p.arrays])
        finally:
            for cursor in cursors:
                cursor.close()

    def _compute_spec(self):
        parts = [d._structure_and_specs() for d in self._inputs]
        return self._nesting.nest([p[0] for p in parts]), [s for p in parts for s in p[1]]

    def _cardinality(self) -> int:
        counts = [d._cardinality() for d in self._inputs]
        known = [c for c in counts if c >= 0]
        if UNKNOWN_CARDINALITY in counts:  # TensorFlow's rule: unknown, even beside an empty one
            return UNKNOWN_CARDINALITY
        return min(known) if known else INFINITE_CARDINALITY


class Concatenate(Dataset):
    def __init__(self, dataset: Dataset, other):
        if not isinstance(other, Dataset):
            raise _errors.GradkitTypeError(
                f"tf.data.Dataset.concatenate got a {type(other).__name__}: pass a tf.data.Dataset (make one with "
                "tf.data.Dataset.from_tensor_slices)."
            )
        super().__init__(dataset, other)
        (first, a), (second, b) = dataset._structure_and_specs(), other._structure_and_specs()
        merged = [most_specific_compatible(x, y) for x, y in zip(a, b)] if first == second else [None]
        if None in merged:
            raise _errors.GradkitTypeError(
                f"Incompatible dataset elements: {first.pack(a)} vs. {second.pack(b)}. tf.data.Dataset.concatenate "
                "needs both datasets' elements to have the same structure (dict keys, tuple lengths) and dtypes; "
                "make them match with map first (tf.cast a component to the other's dtype)."
            )
        self._merged = (first, merged)

    def _chunks(self):
        structure = self._merged[0]
        for dataset in self._inputs:
            for chunk in dataset._chunks():
                yield chunk.as_structure(structure)

    def _compute_spec(self):
        return self._merged

    def _cardinality(self) -> int:
        counts = [d._cardinality() for d in self._inputs]
        if INFINITE_CARDINALITY in counts:
            return INFINITE_CARDINALITY
        return UNKNOWN_CARDINALITY if UNKNOWN_CARDINALITY in counts else sum(counts)


class _WindowPart(Dataset):
    """One component of one window: a dataset of the rows it holds."""

    def __init__(self, rows: list, spec):
        super().__init__()
        self._rows, self._spec_of_rows = [np.asarray(row) for row in rows], spec

    def _chunks(self):
        if not self._rows:
            return
        if len({row.shape for row in self._rows}) == 1:
            yield Chunk(LEAF, [np.stack(self._rows)])
        else:  # rows of different shapes (a spec with unknown sizes): a chunk each
            for row in self._rows:
                yield Chunk(LEAF, [row[None]])

    def _compute_spec(self):
        return LEAF, [self._spec_of_rows]

    def _cardinality(self) -> int:
        return len(self._rows)


class Window(Dataset):
    def __init__(self, dataset: Dataset, size, shift, stride, drop_remainder):
        super().__init__(dataset)
        what = "tf.data.Dataset.window"
        self._size = int_arg(size, f"{what}(size)")
        self._shift = self._size if shift is None else int_arg(shift, f"{what}(shift)")
        self._stride = int_arg(stride, f"{what}(stride)")
        self._drop = bool_arg(drop_remainder, f"{what}(drop_remainder)")
        for name, value in (("size", self._size), ("shift", self._shift), ("stride", self._stride)):
            if value <= 0:
                raise _errors.GradkitInvalidArgumentError(f"Window {name} must be greater than zero, but got {value}.")

    def _chunks(self):
        rows: list = []  # the elements from position `first` on
        first = start = 0
        span = (self._size - 1) * self._stride + 1
        structure = None
        for chunk in self._inputs[0]._chunks():
            structure = chunk.structure
            rows.extend(chunk.rows())
            while start + span <= first + len(rows):
                yield self._window(structure, rows[start - first : start - first + span : self._stride])
                start += self._shift
                drop = min(start - first, len(rows))
                del rows[:drop]
                first += drop
        while not self._drop and start < first + len(rows):
            yield self._window(structure, rows[start - first : start - first + span : self._stride])
            start += self._shift

    def _window(self, structure, rows) -> Chunk:
        _, specs = self._inputs[0]._structure_and_specs()
        holders = []
        for i, spec in enumerate(specs):
            holder = np.empty((1,), object)
            holder[0] = _WindowPart([row[i] for row in rows], spec)
            holders.append(holder)
        return Chunk(structure, holders)

    def _compute_spec(self):
        structure, specs = self._inputs[0]._structure_and_specs()
        return structure, [DatasetSpec(s) for s in specs]

    def _cardinality(self) -> int:
        count = self._inputs[0]._cardinality()
        if count < 0:
            return count
        if self._drop:
            return max(0, (count - (self._size - 1) * self._stride - 1) // self._shift + 1)
        return -(-count // self._shift)
