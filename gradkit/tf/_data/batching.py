"""``batch``, ``unbatch``, ``padded_batch`` and ``rebatch``.

``batch`` stacks runs of elements with NumPy: the elements of a chunk (a whole
``from_tensor_slices`` array) become a reshape of it, and only the elements that straddle two
chunks are copied. A batch whose elements differ in shape or dtype raises TensorFlow's
InvalidArgumentError when it is read, as TensorFlow raises it.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from gradkit import _errors

from .chunks import Chunk, concat
from .dataset import Dataset, bool_arg, int_arg
from .options import INFINITE_CARDINALITY, UNKNOWN_CARDINALITY
from .structure import DatasetSpec, as_component, batched, shape_text, unbatched


def _batch_size(value, what: str) -> int:
    size = int_arg(value, f"{what}(batch_size)")
    if size <= 0:
        raise _errors.GradkitInvalidArgumentError(
            f"Batch size must be greater than zero: {what} got batch_size={size}."
        )
    return size


def _no_datasets(chunk: Chunk, what: str) -> None:
    if any(a.dtype == object for a in chunk.arrays):
        raise _errors.GradkitTypeError(
            f"{what} cannot batch a dataset of datasets (window's elements): turn each window into tensors "
            "first, e.g. ds.window(n).flat_map(lambda w: w.batch(n))."
        )


def batches(chunks, sizes, drop_remainder: bool, what: str):
    """The elements of ``chunks`` stacked into batches of ``sizes[0]``, ``sizes[1]``, ... in turn."""
    pending: list = []
    count = 0
    size_cycle = itertools.cycle(sizes)
    size = next(size_cycle)
    for chunk in chunks:
        _no_datasets(chunk, what)
        pending.append(chunk)
        count += len(chunk)
        while count >= size:
            joined = concat(pending, what)
            whole = size if len(sizes) > 1 else count // size * size
            yield Chunk(joined.structure, [a[:whole].reshape(whole // size, size, *a.shape[1:]) for a in joined.arrays])
            pending = [joined.slice(whole)] if whole < count else []
            count -= whole
            size = next(size_cycle) if len(sizes) > 1 else size
    if count and not drop_remainder:
        joined = concat(pending, what)
        yield Chunk(joined.structure, [a[None] for a in joined.arrays])


def _batched_cardinality(count: int, size: int, drop_remainder: bool) -> int:
    if count < 0:
        return count
    return count // size if drop_remainder else math.ceil(count / size)


class Batch(Dataset):
    def __init__(self, dataset: Dataset, batch_size, drop_remainder):
        super().__init__(dataset)
        self._size = _batch_size(batch_size, "tf.data.Dataset.batch")
        self._drop = bool_arg(drop_remainder, "tf.data.Dataset.batch(drop_remainder)")

    def _chunks(self):
        return batches(self._inputs[0]._chunks(), [self._size], self._drop, "tf.data.Dataset.batch")

    def _compute_spec(self):
        structure, specs = self._inputs[0]._structure_and_specs()
        return structure, [batched(s, self._size if self._drop else None) for s in specs]

    def _cardinality(self) -> int:
        return _batched_cardinality(self._inputs[0]._cardinality(), self._size, self._drop)


def unbatched_chunks(chunks, what: str):
    """Each element's components split along their first axis into elements."""
    for chunk in chunks:
        if any(a.ndim < 2 for a in chunk.arrays):  # an element of unknown rank that is a scalar
            raise _errors.GradkitInvalidArgumentError(
                f"Input element must have a non-scalar value in each component ({what} splits each component "
                "along its first axis)."
            )
        sizes = [a.shape[1] for a in chunk.arrays]
        if len(set(sizes)) > 1:
            other = next(i for i, s in enumerate(sizes) if s != sizes[0])
            raise _errors.GradkitInvalidArgumentError(
                f"Input element must have the same batch size in each component. Component 0 had size {sizes[0]} "
                f"but component {other} had size {sizes[other]} ({what})."
            )
        if sizes[0]:
            yield Chunk(chunk.structure, [a.reshape(a.shape[0] * a.shape[1], *a.shape[2:]) for a in chunk.arrays])


def _check_unbatchable(specs, what: str) -> None:
    for spec in specs:
        if isinstance(spec, DatasetSpec) or (spec.shape is not None and len(spec.shape) == 0):
            raise _errors.GradkitValueError(
                f"Cannot unbatch an input with scalar components: {what} splits each component along its first "
                "axis, which a scalar (or a dataset) does not have."
            )
    leading = sorted({spec.shape[0] for spec in specs if spec.shape is not None and spec.shape[0] is not None})
    if len(leading) > 1:
        raise _errors.GradkitValueError(
            f"Cannot unbatch an input whose batch sizes are not the same in every component: {what} needs "
            f"components with a matching leading dimension. Encountered both {leading[0]} and {leading[1]}."
        )


class Unbatch(Dataset):
    def __init__(self, dataset: Dataset):
        super().__init__(dataset)
        _check_unbatchable(dataset._structure_and_specs()[1], "tf.data.Dataset.unbatch")

    def _chunks(self):
        return unbatched_chunks(self._inputs[0]._chunks(), "tf.data.Dataset.unbatch")

    def _compute_spec(self):
        structure, specs = self._inputs[0]._structure_and_specs()
        return structure, [unbatched(s) for s in specs]

    def _cardinality(self) -> int:
        count = self._inputs[0]._cardinality()
        if count == INFINITE_CARDINALITY:
            return count
        # TensorFlow's: the leading dimension of any component that knows it (they match), and an
        # unknown count where none does, or where it is 0.
        specs = self._inputs[0]._structure_and_specs()[1]
        known = [s.shape[0] for s in specs if s.shape is not None and s.shape[0] is not None]
        if count < 0 or not known or not known[0]:
            return UNKNOWN_CARDINALITY
        return count * known[0]


class Rebatch(Dataset):
    def __init__(self, dataset: Dataset, batch_size, drop_remainder):
        super().__init__(dataset)
        what = "tf.data.Dataset.rebatch"
        _check_unbatchable(dataset._structure_and_specs()[1], what)
        if hasattr(batch_size, "numpy") and np.ndim(batch_size.numpy()) == 1:  # a tensor of sizes
            batch_size = np.asarray(batch_size.numpy())
        sizes = batch_size if isinstance(batch_size, (list, tuple, np.ndarray)) else [batch_size]
        self._sizes = [_batch_size(s, what) for s in sizes]
        if not self._sizes:
            raise _errors.GradkitValueError(f"{what} got an empty list of batch sizes; pass an int or a list of them.")
        self._drop = bool_arg(drop_remainder, f"{what}(drop_remainder)")

    def _chunks(self):
        what = "tf.data.Dataset.rebatch"
        return batches(unbatched_chunks(self._inputs[0]._chunks(), what), self._sizes, self._drop, what)

    def _compute_spec(self):
        structure, specs = self._inputs[0]._structure_and_specs()
        # TensorFlow's static batch size: known where every batch is dropped or full at one size.
        size = self._sizes[0] if self._drop and len(set(self._sizes)) == 1 else None
        return structure, [batched(unbatched(s), size) for s in specs]

    def _cardinality(self) -> int:
        count = self._inputs[0]._cardinality()
        return count if count == INFINITE_CARDINALITY else UNKNOWN_CARDINALITY


def _padded_shape(value, spec, what: str):
    """A padded shape (None: the spec's shape) checked against the component's spec."""
    if value is None:
        shape = None if spec.shape is None else tuple(spec.shape)
    else:
        try:
            dims = [int(d) if d is not None else None for d in (value.numpy() if hasattr(value, "numpy") else value)]
        except (TypeError, ValueError) as error:
            raise _errors.GradkitValueError(
                f"{what} got the padded shape {value!r}: it must be a list of sizes (None or -1: the longest in the "
                "batch)."
            ) from error
        shape = tuple(None if d is None or d == -1 else d for d in dims)
    if shape is None:
        raise _errors.GradkitValueError(
            f"You must provide `padded_shapes` argument because a component has unknown rank ({what})."
        )
    known = spec.shape
    if known is not None and (
        len(known) != len(shape) or any(p is not None and k is not None and p < k for p, k in zip(shape, known))
    ):
        raise _errors.GradkitValueError(
            f"The padded shape {shape_text(shape)} is not compatible with the shape {shape_text(known)} of the "
            f"corresponding input component ({what}): give it the component's rank and sizes at least its own."
        )
    return shape


def _padding_value(value, spec, what: str) -> np.ndarray:
    if value is None:
        return np.zeros((), spec.dtype)
    array = as_component(value, f"{what}'s padding_values")
    if array.ndim != 0:
        raise _errors.GradkitValueError(
            f"Invalid `padding_values`. `padding_values` values should be scalars, but got {array.shape} ({what})."
        )
    if array.dtype != spec.dtype:
        raise _errors.GradkitTypeError(
            f"Invalid `padding_values`. `padding_values` values type {array.dtype} does not match type "
            f"{np.dtype(spec.dtype)} of the corresponding input component ({what}): pass a value of that dtype, "
            f"e.g. tf.constant(0, tf.{np.dtype(spec.dtype).name})."
        )
    return array


class PaddedBatch(Dataset):
    def __init__(self, dataset: Dataset, batch_size, padded_shapes, padding_values, drop_remainder):
        super().__init__(dataset)
        what = "tf.data.Dataset.padded_batch"
        self._size = _batch_size(batch_size, what)
        self._drop = bool_arg(drop_remainder, f"{what}(drop_remainder)")
        structure, specs = dataset._structure_and_specs()
        if any(isinstance(s, DatasetSpec) for s in specs):
            raise _errors.GradkitTypeError("`padded_batch` is not supported for datasets of datasets.")
        shapes = [None] * len(specs) if padded_shapes is None else structure.flatten(padded_shapes, what)
        self._shapes = [_padded_shape(v, s, what) for v, s in zip(shapes, specs)]
        if padding_values is None:
            values = [None] * len(specs)
        elif structure.count > 1 and not isinstance(padding_values, (tuple, dict)):
            values = [padding_values] * len(specs)  # one value for every component, as TensorFlow broadcasts it
        else:
            values = structure.flatten(padding_values, what)
        self._values = [_padding_value(v, s, what) for v, s in zip(values, specs)]

    def _chunks(self):
        rows, structure = [], None
        for chunk in self._inputs[0]._chunks():
            structure = chunk.structure
            for row in chunk.rows():
                rows.append(row)
                if len(rows) == self._size:
                    yield self._padded(structure, rows)
                    rows = []
        if rows and not self._drop:
            yield self._padded(structure, rows)

    def _padded(self, structure, rows) -> Chunk:
        arrays = []
        for i, (shape, value) in enumerate(zip(self._shapes, self._values)):
            parts = [np.asarray(row[i]) for row in rows]
            if any(p.ndim != len(shape) for p in parts):
                raise _errors.GradkitInvalidArgumentError(
                    f"tf.data.Dataset.padded_batch: component {i} has an element of rank other than its padded "
                    f"shape's {shape_text(shape)}."
                )
            target = [d if d is not None else max(p.shape[k] for p in parts) for k, d in enumerate(shape)]
            if any(p.shape[k] > target[k] for p in parts for k in range(len(target))):
                raise _errors.GradkitDataLossError(
                    f"Attempted to pad to a smaller size than the input element: component {i} has an element larger "
                    f"than the padded shape {shape_text(shape)} (tf.data.Dataset.padded_batch)."
                )
            out = np.full((len(parts), *target), value, dtype=value.dtype)
            for j, part in enumerate(parts):
                out[(j, *(slice(0, d) for d in part.shape))] = part
            arrays.append(out[None])
        return Chunk(structure, arrays)

    def _compute_spec(self):
        structure, specs = self._inputs[0]._structure_and_specs()
        size = self._size if self._drop else None
        return structure, [batched(type(s)(shape, s.dtype), size) for s, shape in zip(specs, self._shapes)]

    def _cardinality(self) -> int:
        return _batched_cardinality(self._inputs[0]._cardinality(), self._size, self._drop)
