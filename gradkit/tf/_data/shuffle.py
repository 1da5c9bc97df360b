"""``Dataset.shuffle``: TensorFlow's buffered shuffle.

The first ``buffer_size`` elements fill a buffer; then for each further element a uniformly
drawn slot of the buffer is given out and the element takes its place; when the input ends,
what is left in the buffer comes out in a uniformly random order. ``buffer_size=1`` keeps the
order; a buffer at least as large as the dataset gives a uniform permutation. The draws are
NumPy's (Philox), not TensorFlow's, so the orders differ from TensorFlow's for the same seeds.

Seeds follow TensorFlow's rules for a dataset's seed: with ``seed=None`` the dataset draws its
seed off ``tf.random``'s global key when it is made (reproducible after ``tf.random.set_seed``,
as TensorFlow's op counter makes it); with an op seed, the pair (global seed, op seed) fixes it,
so two datasets shuffled with the same seeds give the same orders, as in TensorFlow (where
``tf.random``'s draws with an op seed differ from call to call, a dataset's do not). Each pass
(each epoch) draws a new order unless ``reshuffle_each_iteration=False``.

Elements are tracked by where they sit in the input's chunks, so a pass draws slot indices in
one NumPy call per chunk, and gives its elements out with one gather per chunk.
"""

from __future__ import annotations

import collections
import zlib

import jax
import numpy as np

from gradkit import _errors
from gradkit.nn import initializers

from .. import _graph_helpers, _random
from .chunks import gather
from .dataset import Dataset, bool_arg, int_arg
from .options import UNKNOWN_CARDINALITY


def _seed_words(seed) -> list:
    """Two 32-bit words that fix the dataset's orders (see the module docstring)."""
    with jax.ensure_compile_time_eval():
        if seed is None:
            key = initializers.next_key()
        else:
            op_seed = int_arg(seed, "tf.data.Dataset.shuffle(seed)")
            global_seed = _random._global_seed[0]
            key = jax.random.key(_random._DEFAULT_GLOBAL_SEED if global_seed is None else global_seed)
            key = jax.random.fold_in(key, zlib.crc32(b"tf.data.Dataset.shuffle"))
            key = jax.random.fold_in(key, op_seed & 0xFFFFFFFF)
        return [int(w) for w in np.asarray(jax.random.key_data(key)).ravel()]


class Shuffle(Dataset):
    def __init__(self, dataset: Dataset, buffer_size, seed, reshuffle_each_iteration):
        super().__init__(dataset)
        size = int_arg(buffer_size, "tf.data.Dataset.shuffle(buffer_size)")
        if size <= 0 and size != UNKNOWN_CARDINALITY:
            raise _errors.GradkitInvalidArgumentError(
                f"buffer_size must be greater than zero or UNKNOWN_CARDINALITY: tf.data.Dataset.shuffle got {size}. "
                "Pass the number of elements to draw from (at least the dataset's size for a uniform shuffle)."
            )
        self._buffer = None if size == UNKNOWN_CARDINALITY else size  # UNKNOWN: the whole dataset
        reshuffle = True if reshuffle_each_iteration is None else reshuffle_each_iteration
        self._reshuffle = bool_arg(reshuffle, "tf.data.Dataset.shuffle(reshuffle_each_iteration)")
        self._words = _seed_words(seed)
        self._passes = 0

    def _rng(self) -> np.random.Generator:
        pass_index = self._passes if self._reshuffle else 0
        self._passes += 1
        key = np.array([(self._words[0] << 32) | self._words[1], pass_index], np.uint64)
        return np.random.Generator(np.random.Philox(key=key))

    def _chunks(self):
        if self._reshuffle and _graph_helpers.inside_function():
            raise _errors.GradkitNotImplementedError(
                "A dataset shuffled with reshuffle_each_iteration=True was iterated inside a tf.function. TensorFlow "
                "draws a new order at each call; gradkit reads a dataset iterated inside a tf.function while the "
                "function is traced, so every call would train on the same order. Iterate the dataset outside and "
                "pass each batch in (for x, y in dataset: train_step(x, y)), or shuffle with "
                "reshuffle_each_iteration=False for one fixed order."
            )
        rng = self._rng()
        capacity = self._buffer
        slot_chunk: list = []  # which stored chunk each buffer slot's element is in
        slot_row: list = []  # and its row there
        store: dict = {}  # chunk id -> chunk, while an element of it is in the buffer
        held = collections.Counter()  # chunk id -> its elements in the buffer
        for cid, chunk in enumerate(self._inputs[0]._chunks()):
            n = len(chunk)
            store[cid] = chunk
            filled = n if capacity is None else min(capacity - len(slot_chunk), n)
            slot_chunk += [cid] * filled
            slot_row += range(filled)
            held[cid] += filled
            rest = n - filled
            if rest:
                out_chunk, out_row = [0] * rest, [0] * rest
                for j, slot in enumerate(rng.integers(0, capacity, size=rest).tolist()):
                    out_chunk[j], out_row[j] = slot_chunk[slot], slot_row[slot]
                    slot_chunk[slot], slot_row[slot] = cid, filled + j
                held[cid] += rest
                yield from gather(store, out_chunk, out_row)
                held.subtract(out_chunk)
                for gone in {c for c in out_chunk if held[c] <= 0}:
                    del held[gone], store[gone]
        order = rng.permutation(len(slot_chunk)).tolist()
        yield from gather(store, [slot_chunk[i] for i in order], [slot_row[i] for i in order])

    def _compute_spec(self):
        return self._inputs[0]._structure_and_specs()

    def _cardinality(self) -> int:
        return self._inputs[0]._cardinality()
