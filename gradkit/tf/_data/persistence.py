"""``dataset.save(path)`` and ``tf.data.Dataset.load(path)``: a pipeline's elements written once
and read back as a dataset, with the saved ``element_spec`` and cardinality.

The directory holds the elements (NumPy's ``.npz``, compressed for ``compression="GZIP"``) and
their structure and specs; it is gradkit's own format, not TensorFlow's snapshot files, so a
directory TensorFlow saved is not read (and the other way round). The elements come back in
the order they were saved.

>>> import tempfile, gradkit.tf as tf
>>> path = tempfile.mkdtemp()
>>> tf.data.Dataset.range(3).map(lambda x: x * 2).save(path)
>>> [int(x) for x in tf.data.Dataset.load(path)]
[0, 2, 4]
"""

from __future__ import annotations

import os
import pickle

import numpy as np

from gradkit import _errors

from .._function import TensorSpec
from .chunks import Chunk
from .dataset import Dataset
from .options import INFINITE_CARDINALITY
from .structure import DatasetSpec, Structure, canonical

_ELEMENTS = "elements.npz"
_SPEC = "element_spec.pickle"


def save(dataset, path, compression=None, shard_func=None, checkpoint_args=None):
    """Write every element of ``dataset`` under the directory ``path``."""
    if shard_func is not None:
        raise _errors.GradkitNotImplementedError(
            "dataset.save(shard_func=...): gradkit writes one shard and reads the elements back in order; TensorFlow "
            "interleaves the shards it reads. Save without shard_func."
        )
    if compression not in (None, "GZIP", "NONE", ""):
        raise _errors.GradkitValueError(
            f"dataset.save got compression={compression!r}; TensorFlow takes 'GZIP' or None (also 'NONE')."
        )
    if dataset._cardinality() == INFINITE_CARDINALITY:
        raise _errors.GradkitValueError(
            "dataset.save got an infinite dataset (repeat() without a count); it would never finish writing. Take "
            "a finite part first: dataset.take(n).save(path)."
        )
    structure, specs = dataset._structure_and_specs()
    if any(isinstance(spec, DatasetSpec) for spec in specs):
        raise _errors.GradkitTypeError(
            "dataset.save got elements holding datasets (from window); write them as tensors first, e.g. "
            "dataset.flat_map(lambda w: w.batch(size)).save(path)."
        )
    arrays, count = {}, 0
    for chunk in dataset._chunks():
        if len(chunk):
            for j, array in enumerate(chunk.as_structure(structure).arrays):
                arrays[f"c{count}_{j}"] = np.asarray(array)
            count += 1
    os.makedirs(os.fspath(path), exist_ok=True)
    write = np.savez_compressed if compression == "GZIP" else np.savez
    write(os.path.join(os.fspath(path), _ELEMENTS), **arrays)
    with open(os.path.join(os.fspath(path), _SPEC), "wb") as f:
        pickle.dump({"structure": structure, "specs": specs, "chunks": count}, f)


def load(path, element_spec=None, compression=None, reader_func=None):
    """The dataset saved under ``path`` by ``dataset.save``."""
    if reader_func is not None:
        raise _errors.GradkitNotImplementedError(
            "tf.data.Dataset.load(reader_func=...): gradkit saves one shard, read in order. Load without reader_func."
        )
    spec_file = os.path.join(os.fspath(path), _SPEC)
    if not os.path.exists(spec_file):
        raise _errors.GradkitNotFoundError(
            f"tf.data.Dataset.load found no dataset saved by gradkit under {os.fspath(path)!r} (no {_SPEC}). Save "
            "it with dataset.save(path) first; a directory TensorFlow wrote is not gradkit's format."
        )
    return Loaded(os.fspath(path), element_spec)


def _same_spec(element_spec, structure, specs) -> bool:
    """Whether ``element_spec`` is the saved one (dtypes as gradkit stores them: int64 as int32
    without JAX's 64-bit mode)."""
    given_structure, given = Structure.split(element_spec)
    if given_structure != structure or len(given) != len(specs):
        return False
    return all(
        isinstance(g, TensorSpec) and canonical(g.dtype) == s.dtype and tuple(g.shape or ()) == tuple(s.shape or ())
        for g, s in zip(given, specs)
    )


class Loaded(Dataset):
    def __init__(self, path: str, element_spec=None):
        super().__init__()
        with open(os.path.join(path, _SPEC), "rb") as f:
            saved = pickle.load(f)  # noqa: S301 - a file gradkit wrote, as TensorFlow reads its own spec
        self._path, self._saved = path, saved
        if element_spec is not None and not _same_spec(element_spec, saved["structure"], saved["specs"]):
            raise _errors.GradkitValueError(
                f"tf.data.Dataset.load got element_spec={element_spec!r}, but the dataset under {path!r} was saved "
                f"with {saved['structure'].pack(saved['specs'])!r}. Leave element_spec out to use the saved one."
            )
        with np.load(os.path.join(path, _ELEMENTS)) as stored:
            self._count = sum(len(stored[f"c{k}_0"]) for k in range(saved["chunks"]))

    def _chunks(self):
        structure, specs = self._saved["structure"], self._saved["specs"]
        with np.load(os.path.join(self._path, _ELEMENTS)) as stored:
            for k in range(self._saved["chunks"]):
                yield Chunk(structure, [stored[f"c{k}_{j}"] for j in range(len(specs))])

    def _compute_spec(self):
        return self._saved["structure"], self._saved["specs"]

    def _cardinality(self) -> int:
        return self._count
