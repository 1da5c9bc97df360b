"""``tf.train.load_checkpoint``, ``list_variables`` and ``load_variable`` for gradkit's checkpoints:
the saved values by TensorFlow's keys (``model/dense/kernel/.ATTRIBUTES/VARIABLE_VALUE``).

TensorFlow also lists ``_CHECKPOINTABLE_OBJECT_GRAPH``, its serialized object graph; gradkit's
object graph is the paths in the index, so that key is not listed.
"""

from __future__ import annotations

import os

import numpy as np

from gradkit import _errors

from . import files, state_file


def _prefix(ckpt_dir_or_file) -> str:
    path = os.fspath(ckpt_dir_or_file)
    if os.path.isdir(path):
        latest = state_file.latest_checkpoint(path)
        if latest is None:
            raise _errors.GradkitValueError(
                f"Couldn't find 'checkpoint' file or checkpoints in given directory {path}. Pass a checkpoint's "
                "prefix ('.../ckpt-3'), or the directory a tf.train.Checkpoint.save or CheckpointManager wrote into."
            )
        return latest
    return path


class CheckpointReader:
    """``tf.train.load_checkpoint``'s reader: the saved values of one checkpoint by key."""

    def __init__(self, prefix: str):
        self._bundle = files.Bundle(prefix)

    def get_variable_to_shape_map(self) -> dict:
        return {key: list(info["shape"]) for key, info in self._bundle.entries.items()}

    def get_variable_to_dtype_map(self) -> dict:
        from .. import _dtypes

        return {key: _dtypes.as_dtype(info["dtype"]) for key, info in self._bundle.entries.items()}

    def has_tensor(self, key: str) -> bool:
        return key in self._bundle.entries

    def get_tensor(self, key: str):
        """The saved value of ``key`` as a NumPy array (a NumPy scalar for a scalar, as TensorFlow's)."""
        if key not in self._bundle.entries:
            raise _errors.GradkitNotFoundError(
                f"Key {key} not found in checkpoint. tf.train.list_variables(path) lists the keys it holds."
            )
        value = self._bundle.load([key])[key]
        return value[()] if value.ndim == 0 else np.array(value)


def load_checkpoint(ckpt_dir_or_file) -> CheckpointReader:
    """``tf.train.load_checkpoint``: a reader of the checkpoint at a prefix (or the newest in a directory)."""
    return CheckpointReader(_prefix(ckpt_dir_or_file))


def list_variables(ckpt_dir_or_file) -> list:
    """``tf.train.list_variables``: ``(key, shape)`` of every saved value, sorted by key."""
    shapes = load_checkpoint(ckpt_dir_or_file).get_variable_to_shape_map()
    return [(key, shapes[key]) for key in sorted(shapes)]


def load_variable(ckpt_dir_or_file, name: str):
    """``tf.train.load_variable``: the saved value of ``name`` (a key ``list_variables`` gives; a
    trailing ``:0`` is dropped, as TensorFlow does)."""
    if name.endswith(":0"):
        name = name[:-2]
    return load_checkpoint(ckpt_dir_or_file).get_tensor(name)
