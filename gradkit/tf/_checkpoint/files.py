"""A checkpoint's files, under TensorFlow's names: ``<prefix>.index`` and
``<prefix>.data-00000-of-00001``.

TensorFlow writes a tensor bundle (a LevelDB table of protocol buffers), which needs its own
readers; gradkit writes the same two files in formats Python reads with the standard library
and NumPy: the index is a small JSON object (each value's key, path, shape and dtype) and the
data file a NumPy ``.npz`` archive of the arrays. So a directory of gradkit checkpoints lists as
TensorFlow's does, ``tf.train.latest_checkpoint`` finds the same names, and a checkpoint can be
inspected without gradkit. Each file is written under a temporary name and renamed into place
(data first, index last), so an interrupted save leaves no index without its data.
"""

from __future__ import annotations

import glob
import json
import os
import tempfile

import numpy as np

from gradkit import _errors

INDEX = ".index"
DATA = ".data-00000-of-00001"
FORMAT = "gradkit.checkpoint"
VERSION = 1


def _storable(array: np.ndarray) -> np.ndarray:
    """NumPy's own dtypes as they are; ml_dtypes' (bfloat16, float8) as unsigned integers of their
    size, which ``.npz`` stores without pickling."""
    if array.dtype.kind == "V" or type(array.dtype).__module__.startswith("ml_dtypes"):
        return array.view(f"u{array.dtype.itemsize}")
    return array


def _atomic_write(path: str, write) -> None:
    directory = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(path) + ".", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def write(prefix: str, records: list) -> None:
    """Write a checkpoint at ``prefix``: ``records`` are dicts with ``key``, ``path``, ``value`` (a
    NumPy array) and, for an optimizer slot, ``slot`` (variable path, optimizer path, name)."""
    directory = os.path.dirname(prefix)
    if directory:
        os.makedirs(directory, exist_ok=True)
    arrays, entries = {}, {}
    for i, record in enumerate(sorted(records, key=lambda r: r["key"])):
        value = np.asarray(record["value"])
        member = f"a{i}"
        arrays[member] = _storable(value)
        entry = {"path": list(record["path"]), "shape": list(value.shape), "dtype": value.dtype.name, "array": member}
        if record.get("other_paths"):
            entry["other_paths"] = [list(p) for p in record["other_paths"]]
        if record.get("slot") is not None:
            var_path, optimizer_path, name = record["slot"]
            entry["slot"] = {"variable": list(var_path), "optimizer": list(optimizer_path), "name": name}
        entries[record["key"]] = entry
    index = {"format": FORMAT, "version": VERSION, "data": os.path.basename(prefix) + DATA, "entries": entries}
    _atomic_write(prefix + DATA, lambda f: np.savez(f, **arrays))
    _atomic_write(prefix + INDEX, lambda f: f.write(json.dumps(index, indent=1).encode()))


def exists(prefix: str) -> bool:
    return os.path.isfile(prefix + INDEX)


def delete(prefix: str) -> None:
    """Remove a checkpoint's files (its index and every data shard), as TensorFlow's manager does."""
    escaped = glob.escape(prefix)
    for pattern in (escaped + INDEX, escaped + ".data-?????-of-?????"):
        for name in glob.glob(pattern):
            try:
                os.remove(name)
            except FileNotFoundError:
                pass


def _foreign(prefix: str, why: str) -> Exception:
    return _errors.CheckpointFormatError(
        f"{prefix!r} is not a checkpoint gradkit wrote: {why}. gradkit reads only the checkpoints it writes "
        "(TensorFlow's own checkpoints are a binary tensor bundle it does not read). To bring TensorFlow's "
        "weights over, load them in TensorFlow and copy the arrays: gk_model.set_weights(tf_model.get_weights()), "
        "or save them there with model.save_weights('model.weights.h5') and read that file with gradkit's "
        "model.load_weights."
    )


class Bundle:
    """A checkpoint read from disk: ``entries``, key -> {path, shape, dtype, slot?}; ``load(keys)``
    reads the arrays."""

    def __init__(self, prefix: str):
        self.prefix = prefix
        index_path = prefix + INDEX
        if not os.path.isfile(index_path):
            raise _errors.GradkitNotFoundError(
                f"Unsuccessful TensorSliceReader constructor: Failed to find any matching files for {prefix} "
                f"(no {os.path.basename(index_path)!r} there). Pass the prefix a save returned ('.../ckpt-1'), or "
                "tf.train.latest_checkpoint(directory)."
            )
        with open(index_path, "rb") as f:
            raw = f.read()
        try:
            index = json.loads(raw.decode())
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise _foreign(prefix, "its .index file is not gradkit's JSON index") from None
        if not isinstance(index, dict) or index.get("format") != FORMAT:
            raise _foreign(prefix, "its .index file does not say it is a gradkit checkpoint")
        if index.get("version") != VERSION:
            raise _errors.CheckpointFormatError(
                f"{prefix!r} was written by a gradkit checkpoint format version {index.get('version')!r}, and this "
                f"gradkit reads version {VERSION}. Read it with the gradkit that wrote it."
            )
        self.entries: dict = index["entries"]
        self._data = os.path.join(os.path.dirname(prefix), index.get("data", os.path.basename(prefix) + DATA))

    def load(self, keys) -> dict:
        """The arrays of ``keys``, with their dtypes."""
        keys = list(keys)
        if not keys:
            return {}
        try:
            archive = np.load(self._data, allow_pickle=False)
        except FileNotFoundError:
            raise _errors.GradkitNotFoundError(
                f"The checkpoint {self.prefix!r} has its index but not its data file {self._data!r}: it was "
                "moved or deleted. Restore from another checkpoint."
            ) from None
        except (OSError, ValueError) as e:
            raise _errors.CheckpointFormatError(
                f"The data file of checkpoint {self.prefix!r} cannot be read ({e}): it is damaged or not gradkit's."
            ) from None
        out = {}
        with archive:
            for key in keys:
                entry = self.entries[key]
                try:
                    array = archive[entry["array"]]
                except KeyError:
                    raise _errors.CheckpointFormatError(
                        f"The data file of checkpoint {self.prefix!r} has no array for {key!r}: it does not belong "
                        "to this index (damaged or replaced). Restore from another checkpoint."
                    ) from None
                dtype = np.dtype(entry["dtype"])
                out[key] = array.view(dtype) if array.dtype != dtype else array
        return out
