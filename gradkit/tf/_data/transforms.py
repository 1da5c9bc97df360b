"""The steps that keep, drop, repeat or count elements: ``take``, ``skip``, ``repeat``,
``shard``, ``enumerate``, ``cache``, ``prefetch``/``with_options`` (which change nothing) and
``tf.data.experimental.assert_cardinality`` (which states the count and checks it when read).

Each works on whole chunks (slices of them), so none copies an element. Cardinalities are
TensorFlow's: known counts are computed, an endless input stays endless, an unknown one unknown.
"""

from __future__ import annotations

import numpy as np

from gradkit import _errors
from gradkit._op_errors import FailedPreconditionError

from .chunks import Chunk
from .dataset import Dataset, int_arg
from .options import AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY
from .structure import LEAF, Structure, canonical

_INT64 = canonical(np.int64)


class Passthrough(Dataset):
    """The same elements (``prefetch``: nothing to read ahead; ``with_options``: options kept)."""

    def __init__(self, dataset: Dataset, what: str, buffer_size):
        super().__init__(dataset)
        if buffer_size is not None:
            size = int_arg(buffer_size, f"tf.data.Dataset.{what}(buffer_size)")
            if size < AUTOTUNE:
                raise _errors.GradkitInvalidArgumentError(
                    f"tf.data.Dataset.{what} got buffer_size={size}: buffer_size must be >= 0, or -1 "
                    "(tf.data.AUTOTUNE) for auto-tuning."
                )

    def _chunks(self):
        return self._inputs[0]._chunks()

    def _compute_spec(self):
        return self._inputs[0]._structure_and_specs()

    def _cardinality(self) -> int:
        return self._inputs[0]._cardinality()


class Take(Dataset):
    def __init__(self, dataset: Dataset, count):
        super().__init__(dataset)
        self._count = int_arg(count, "tf.data.Dataset.take(count)")

    def _chunks(self):
        left = self._count
        if left < 0:  # -1: all of them, as in TensorFlow
            yield from self._inputs[0]._chunks()
            return
        if left == 0:
            return
        for chunk in self._inputs[0]._chunks():
            if len(chunk) >= left:
                yield chunk if len(chunk) == left else chunk.slice(0, left)
                return
            yield chunk
            left -= len(chunk)

    def _compute_spec(self):
        return self._inputs[0]._structure_and_specs()

    def _cardinality(self) -> int:
        count = self._inputs[0]._cardinality()
        if self._count < 0:
            return count
        if count == INFINITE_CARDINALITY:
            return self._count
        return UNKNOWN_CARDINALITY if count == UNKNOWN_CARDINALITY else min(count, self._count)


class Skip(Dataset):
    def __init__(self, dataset: Dataset, count):
        super().__init__(dataset)
        self._count = int_arg(count, "tf.data.Dataset.skip(count)")

    def _chunks(self):
        left = self._count
        if left < 0:  # -1: all of them (the input is still read to its end, as TensorFlow reads it)
            for _ in self._inputs[0]._chunks():
                pass
            return
        for chunk in self._inputs[0]._chunks():
            if left >= len(chunk):
                left -= len(chunk)
                continue
            yield chunk.slice(left) if left else chunk
            left = 0

    def _compute_spec(self):
        return self._inputs[0]._structure_and_specs()

    def _cardinality(self) -> int:
        count = self._inputs[0]._cardinality()
        if count < 0:
            return count
        return 0 if self._count < 0 else max(0, count - self._count)


class Repeat(Dataset):
    def __init__(self, dataset: Dataset, count):
        super().__init__(dataset)
        self._count = -1 if count is None else int_arg(count, "tf.data.Dataset.repeat(count)")

    def _chunks(self):
        passes = 0
        while self._count < 0 or passes < self._count:
            empty = True
            for chunk in self._inputs[0]._chunks():
                empty = False
                yield chunk
            if empty:  # an empty dataset repeated forever is empty, as in TensorFlow
                return
            passes += 1

    def _compute_spec(self):
        return self._inputs[0]._structure_and_specs()

    def _cardinality(self) -> int:
        count = self._inputs[0]._cardinality()
        if self._count == 0 or count == 0:
            return 0
        if self._count < 0:
            return INFINITE_CARDINALITY
        return count if count < 0 else count * self._count


class Shard(Dataset):
    def __init__(self, dataset: Dataset, num_shards, index):
        super().__init__(dataset)
        self._shards = int_arg(num_shards, "tf.data.Dataset.shard(num_shards)")
        self._index = int_arg(index, "tf.data.Dataset.shard(index)")
        if self._shards < 1:
            raise _errors.GradkitInvalidArgumentError(
                f"Number of shards must be greater than zero (currently num_shards = {self._shards})."
            )
        if not 0 <= self._index < self._shards:
            raise _errors.GradkitInvalidArgumentError(
                f"Index must be between 0 and {self._shards - 1} (currently index = {self._index})."
            )

    def _chunks(self):
        seen = 0
        for chunk in self._inputs[0]._chunks():
            first = (self._index - seen) % self._shards
            if first < len(chunk):
                yield chunk.slice(first, None) if self._shards == 1 else chunk.take(slice(first, None, self._shards))
            seen += len(chunk)

    def _compute_spec(self):
        return self._inputs[0]._structure_and_specs()

    def _cardinality(self) -> int:
        count = self._inputs[0]._cardinality()
        if count < 0:
            return count
        return count // self._shards + (1 if self._index < count % self._shards else 0)


class Enumerate(Dataset):
    def __init__(self, dataset: Dataset, start):
        super().__init__(dataset)
        self._start = int_arg(start, "tf.data.Dataset.enumerate(start)")

    def _chunks(self):
        next_index = self._start
        for chunk in self._inputs[0]._chunks():
            counts = np.arange(next_index, next_index + len(chunk), dtype=np.int64).astype(_INT64)
            next_index += len(chunk)
            yield Chunk(Structure.tuple_of([LEAF, chunk.structure]), [counts, *chunk.arrays])

    def _compute_spec(self):
        from .._function import TensorSpec

        structure, specs = self._inputs[0]._structure_and_specs()
        return Structure.tuple_of([LEAF, structure]), [TensorSpec((), _INT64), *specs]

    def _cardinality(self) -> int:
        return self._inputs[0]._cardinality()


class Cache(Dataset):
    """The first pass read to its end is kept (its chunks: nothing is copied) and given again by
    every later pass; a pass given up before the end keeps nothing, as TensorFlow's in-memory
    cache does."""

    def __init__(self, dataset: Dataset):
        super().__init__(dataset)
        self._kept = None

    def _chunks(self):
        if self._kept is not None:
            yield from self._kept
            return
        seen = []
        for chunk in self._inputs[0]._chunks():
            seen.append(chunk)
            yield chunk
        self._kept = seen

    def _compute_spec(self):
        return self._inputs[0]._structure_and_specs()

    def _cardinality(self) -> int:
        return self._inputs[0]._cardinality()


class CardinalityMismatchError(_errors.GradkitError, FailedPreconditionError):
    """What TensorFlow raises as ``tf.errors.FailedPreconditionError`` when a dataset given to
    ``assert_cardinality`` has another number of elements than it was told."""

    def __init__(self, message: str):
        if not message.startswith(_errors.PREFIX):
            message = _errors.PREFIX + message
        FailedPreconditionError.__init__(self, None, None, message)


class AssertCardinality(Dataset):
    """``tf.data.experimental.assert_cardinality(n)``: the input's elements, its cardinality
    stated as ``n``; read past ``n`` elements, or ending before them, it raises TensorFlow's
    FailedPreconditionError (the elements before that are given, as TensorFlow gives them)."""

    def __init__(self, dataset: Dataset, expected):
        super().__init__(dataset)
        self._expected = int_arg(expected, "tf.data.experimental.assert_cardinality(expected_cardinality)")

    def _chunks(self):
        expected, count = self._expected, 0
        for chunk in self._inputs[0]._chunks():
            if expected != INFINITE_CARDINALITY and count + len(chunk) > expected:
                # TensorFlow raises when asked for the first element past ``expected`` (a negative count
                # other than INFINITE_CARDINALITY is exceeded by the first element).
                allowed = max(expected - count, 0)
                if allowed:
                    yield chunk.slice(0, allowed)
                raise self._mismatch(f"at least {_elements(count + allowed + 1)}")
            count += len(chunk)
            yield chunk
        if count != expected:
            raise self._mismatch(f"only {_elements(count)}")

    def _mismatch(self, found: str) -> CardinalityMismatchError:
        if self._expected == INFINITE_CARDINALITY:
            expected = "an infinite number of elements"
        else:
            expected = _elements(self._expected)
        return CardinalityMismatchError(
            f"Input dataset was expected to contain {expected} but contained {found}. The count given to "
            "tf.data.experimental.assert_cardinality must be the dataset's true number of elements; drop the "
            "assertion to let it be unknown (tf.data.UNKNOWN_CARDINALITY), or take(n) to cut the dataset to n."
        )

    def _compute_spec(self):
        return self._inputs[0]._structure_and_specs()

    def _cardinality(self) -> int:
        return self._expected


def _elements(count: int) -> str:
    return f"{count} element" if count == 1 else f"{count} elements"
