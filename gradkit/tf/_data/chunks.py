"""Chunks: how elements travel through a pipeline.

A dataset gives its elements as chunks, runs of consecutive elements of one structure whose
components are stacked along a new first axis. ``from_tensor_slices`` gives its arrays as one
chunk (views, no copy), so ``batch`` of it is a reshape, ``take``/``skip`` are slices and
``shuffle`` is one gather per run of draws; element-by-element steps (``map``, a generator)
give chunks of one element each. Elements come out one by one only where they leave the
pipeline.
"""

from __future__ import annotations

import numpy as np

from gradkit import _errors

from .structure import Structure


class Chunk:
    """Consecutive elements of one structure, each component stacked along a first axis."""

    __slots__ = ("structure", "arrays")

    def __init__(self, structure: Structure, arrays: list):
        self.structure, self.arrays = structure, arrays

    @classmethod
    def of_element(cls, structure: Structure, components: list) -> Chunk:
        """One element (its components, without the element axis) as a chunk."""
        return cls(structure, [c[None] for c in components])

    def __len__(self) -> int:
        return self.arrays[0].shape[0]

    def rows(self):
        """The elements, each as the list of its components."""
        for i in range(len(self)):
            yield [a[i] for a in self.arrays]

    def slice(self, start, stop=None) -> Chunk:
        return Chunk(self.structure, [a[start:stop] for a in self.arrays])

    def take(self, index) -> Chunk:
        return Chunk(self.structure, [a[index] for a in self.arrays])

    def as_structure(self, structure: Structure) -> Chunk:
        """The same elements in ``structure``, an equal one (a dict's keys in another order, an
        OrderedDict for a dict): their components are the same, in sorted-key order, and they come
        out in the dataset's own key order, as TensorFlow gives them."""
        return self if self.structure is structure else Chunk(structure, self.arrays)


def mismatch(chunks: list) -> tuple | None:
    """``(component, first chunk, other chunk)`` where the chunks' elements differ in structure,
    dtype or shape, or None where they can be stacked together."""
    first = chunks[0]
    for other in chunks[1:]:
        if other.structure != first.structure:
            return (None, first, other)
        for i, (a, b) in enumerate(zip(first.arrays, other.arrays)):
            if a.dtype != b.dtype or a.shape[1:] != b.shape[1:]:
                return (i, first, other)
    return None


def concat(chunks: list, what: str) -> Chunk:
    """The chunks as one, their elements in order (``what`` names the step for the error)."""
    if len(chunks) == 1:
        return chunks[0]
    found = mismatch(chunks)
    if found is not None:
        component, first, other = found
        index = sum(len(c) for c in chunks[: chunks.index(other)])
        if component is None:
            raise _errors.GradkitInvalidArgumentError(
                f"{what}: elements of different structures ({first.structure.describe()} and element {index}'s "
                f"{other.structure.describe()}); every element of a dataset must have the same structure. Make the "
                "function given to map (or the generator) return one structure."
            )
        a, b = first.arrays[component], other.arrays[component]
        raise _errors.GradkitInvalidArgumentError(
            f"{what}: cannot batch tensors with different shapes in component {component}. First element had shape "
            f"{list(a.shape[1:])} ({a.dtype}) and element {index} had shape {list(b.shape[1:])} ({b.dtype}). "
            "Use padded_batch to pad them to one shape, or make them one shape first (map with tf.image.resize, "
            "tf.pad, ...)."
        )
    return Chunk(chunks[0].structure, [np.concatenate(parts, axis=0) for parts in zip(*(c.arrays for c in chunks))])


class Cursor:
    """Reads a stream of chunks by counts of elements."""

    __slots__ = ("_chunks", "_current", "_offset")

    def __init__(self, chunks):
        self._chunks = iter(chunks)
        self._current = None
        self._offset = 0

    def next_up_to(self, count: int) -> Chunk | None:
        """The next elements, at least one and at most ``count``, as one chunk (fewer where the
        current chunk ends first); None when the stream is exhausted."""
        while self._current is None or self._offset >= len(self._current):
            self._current = next(self._chunks, None)
            self._offset = 0
            if self._current is None:
                return None
        start = self._offset
        self._offset = min(start + count, len(self._current))
        if start == 0 and self._offset == len(self._current):
            return self._current
        return self._current.slice(start, self._offset)

    def close(self) -> None:
        close = getattr(self._chunks, "close", None)
        if close is not None:
            close()


def gather(store: dict, chunk_ids: list, rows: list):
    """The elements ``store[chunk_ids[i]][rows[i]]``, in order, as chunks: one where they stack
    together, else one per element."""
    ids = np.asarray(chunk_ids)
    index = np.asarray(rows)
    if ids.size == 0:
        return []
    first = int(ids[0])
    if (ids == first).all():
        return [store[first].take(index)]
    unique = [int(i) for i in np.unique(ids)]
    sources = [store[i] for i in unique]
    if mismatch(sources) is not None:
        return [store[int(c)].slice(int(r), int(r) + 1) for c, r in zip(ids, index)]
    order = np.argsort(ids, kind="stable")
    pieces = [store[i].take(index[ids == i]) for i in unique]
    joined = concat(pieces, "shuffle")
    inverse = np.empty_like(order)
    inverse[order] = np.arange(order.size)
    return [joined.take(inverse)]
