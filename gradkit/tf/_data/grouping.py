"""``group_by_window``: elements grouped by a key, each group of ``window_size`` handed to
``reduce_func`` as a dataset, whose elements come out.

As TensorFlow does: ``key_func`` gives each element an int64 scalar key; a key's group is
reduced as soon as it holds the window size (``window_size``, or ``window_size_func(key)`` for
each element); at the end of the input the groups left are reduced in the order of their keys.
The cardinality is unknown.
"""

from __future__ import annotations

import numpy as np

from gradkit import _errors

from . import functions
from .chunks import Chunk, concat, mismatch
from .dataset import Dataset, int_arg
from .mapping import _placeholders, placeholder_specs_agreed
from .structure import as_component, canonical, to_public

_WHAT = "tf.data.Dataset.group_by_window"


class _Group(Dataset):
    """One group's elements, as the dataset ``reduce_func`` gets."""

    def __init__(self, chunks: list, spec):
        super().__init__()
        self._parts, self._spec_of_group = chunks, spec

    def _chunks(self):
        if self._parts and mismatch(self._parts) is None:
            yield concat(self._parts, _WHAT)
        else:  # elements of different shapes (a spec with unknown sizes): a chunk each
            yield from self._parts

    def _compute_spec(self):
        return self._spec_of_group

    def _cardinality(self) -> int:
        return len(self._parts)


class GroupByWindow(Dataset):
    def __init__(self, dataset: Dataset, key_func, reduce_func, window_size, window_size_func):
        super().__init__(dataset)
        if (window_size is None) == (window_size_func is None):
            raise _errors.GradkitValueError(
                "Either the `window_size` argument or the `window_size_func` argument must be specified "
                f"({_WHAT} got {'both' if window_size is not None else 'neither'}): pass one of them."
            )
        for func, name in ((key_func, "key_func"), (reduce_func, "reduce_func"), (window_size_func, None)):
            if name is not None and not callable(func):
                raise _errors.GradkitTypeError(f"{_WHAT} got a {type(func).__name__} as `{name}`: pass a function.")
        self._key_func = functions.frozen(key_func)
        self._reduce_func = functions.frozen(reduce_func)
        if window_size is not None:
            size = int_arg(window_size, f"{_WHAT}(window_size)")
            self._size_func = lambda key: size
        else:
            self._size_func = functions.frozen(window_size_func)

    def _key(self, structure, row) -> int:
        key = as_component(functions.call_on_row(self._key_func, structure, row), "what `key_func` returned")
        if key.shape != () or key.dtype != canonical(np.int64):
            raise _errors.GradkitValueError(
                "Invalid `key_func`. `key_func` must return a single `tf.int64` scalar tensor but it returned a "
                f"{key.dtype} tensor of shape {key.shape} ({_WHAT}). Return tf.cast(key, tf.int64)."
            )
        return int(key)

    def _window_size(self, key: int) -> int:
        key_tensor = to_public(np.array(key, canonical(np.int64)))
        size = int_arg(functions.call(self._size_func, key_tensor), f"{_WHAT}: window_size_func's result")
        if size <= 0:
            raise _errors.GradkitInvalidArgumentError(
                f"Window size must be greater than zero, but got {size} ({_WHAT}). Give a positive window size."
            )
        return size

    def _reduced(self, key: int, group: list, spec) -> Dataset:
        key_tensor = to_public(np.array(key, canonical(np.int64)))
        made = functions.call(self._reduce_func, (key_tensor, _Group(group, spec)))
        if not isinstance(made, Dataset):
            raise _errors.GradkitTypeError(
                "Invalid `reduce_func`. `reduce_func` must return a single `tf.data.Dataset` object but it returned "
                f"a {type(made).__name__} ({_WHAT}). Make a dataset of the window, e.g. lambda key, window: "
                "window.batch(n)."
            )
        return made

    def _chunks(self):
        spec = self._inputs[0]._structure_and_specs()
        groups: dict = {}
        for chunk in self._inputs[0]._chunks():
            for i, row in enumerate(chunk.rows()):
                key = self._key(chunk.structure, row)
                size = self._window_size(key)
                group = groups.setdefault(key, [])
                group.append(chunk.slice(i, i + 1).as_structure(spec[0]))
                if len(group) >= size:
                    del groups[key]
                    yield from self._reduced(key, group, spec)._chunks()
        for key in sorted(groups):
            yield from self._reduced(key, groups[key], spec)._chunks()

    def _compute_spec(self):
        """The element_spec of the datasets ``reduce_func`` makes of windows of 1, 2 and 3
        placeholder elements, keyed 0, 1 and 2 (what the window's size or key decides is
        unknown); of those it takes, if two or more (bucket_by_sequence_length with one boundary
        has keys 0 and 1 only); else from the first window's."""
        structure, specs = self._inputs[0]._structure_and_specs()
        made = []
        for size, fill in ((1, 0), (2, 1), (3, 2)):
            try:
                rows = [Chunk.of_element(structure, _placeholders(specs, size, fill)) for _ in range(size)]
                made.append(self._reduced(fill, rows, (structure, specs))._structure_and_specs())
            except Exception:  # noqa: BLE001  (a key or window placeholders do not suit: leave it out)
                continue
        if len(made) < 2:
            made = None
        if (agreed := placeholder_specs_agreed(made)) is not None:
            return agreed
        for chunk in self._chunks():
            return functions.result_spec(chunk.slice(0, 1))
        raise _errors.GradkitValueError(
            f"{_WHAT}: gradkit could not call reduce_func on placeholder windows to learn the element_spec of the "
            "datasets it makes, and the dataset gives none, so it has no window to call it on."
        )


def group_by_window(key_func, reduce_func, window_size=None, window_size_func=None):
    """``tf.data.experimental.group_by_window``: for ``dataset.apply``."""
    return lambda dataset: GroupByWindow(dataset, key_func, reduce_func, window_size, window_size_func)
