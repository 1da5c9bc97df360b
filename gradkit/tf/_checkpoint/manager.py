"""``tf.train.CheckpointManager``: numbered checkpoints in one directory, the oldest deleted beyond
``max_to_keep``, TensorFlow's bookkeeping (the ``checkpoint`` file with timestamps) step for step,
so a manager picks up the checkpoints an earlier run (of gradkit) left in its directory."""

from __future__ import annotations

import collections
import os
import time

import numpy as np

from gradkit import _errors

from . import files, state_file
from .checkpoint import Checkpoint


def _number(value) -> int:
    """An integer from an int, a Variable or a tensor (a step counter, a checkpoint number)."""
    if hasattr(value, "numpy"):
        value = value.numpy()
    array = np.asarray(value)
    if array.ndim != 0 or array.dtype.kind not in "iu":
        raise _errors.GradkitTypeError(
            f"tf.train.CheckpointManager needs an integer here (a checkpoint number or step), but got "
            f"{value!r}. Pass an int or an integer tf.Variable such as optimizer.iterations."
        )
    return int(array)


class CheckpointManager:
    """``tf.train.CheckpointManager(checkpoint, directory, max_to_keep, keep_checkpoint_every_n_hours=None,
    checkpoint_name="ckpt", step_counter=None, checkpoint_interval=None, init_fn=None)``.

    ``save()`` writes ``directory/ckpt-N`` (N from the checkpoint's ``save_counter``, or
    ``checkpoint_number``), records it in ``directory/checkpoint`` and deletes the oldest managed
    checkpoints beyond ``max_to_keep`` (one preserved every ``keep_checkpoint_every_n_hours``);
    ``latest_checkpoint`` and ``checkpoints`` list what is kept, read back from the directory when a
    manager is made there again.
    """

    def __init__(
        self,
        checkpoint,
        directory,
        max_to_keep,
        keep_checkpoint_every_n_hours=None,
        checkpoint_name="ckpt",
        step_counter=None,
        checkpoint_interval=None,
        init_fn=None,
        last_checkpoint_step=None,
    ):
        if not isinstance(checkpoint, Checkpoint):
            raise _errors.GradkitTypeError(
                f"tf.train.CheckpointManager manages a tf.train.Checkpoint, but got {type(checkpoint).__name__}. "
                "Wrap the objects first: tf.train.CheckpointManager(tf.train.Checkpoint(model=model), directory, "
                "max_to_keep=3)."
            )
        if max_to_keep is not None and max_to_keep <= 0:
            raise _errors.GradkitValueError(
                f"Expected a positive integer or `None` for `max_to_keep`, got {max_to_keep}. None keeps every "
                "checkpoint."
            )
        self._checkpoint = checkpoint
        self._max_to_keep = max_to_keep
        self._keep_checkpoint_every_n_hours = keep_checkpoint_every_n_hours
        self._directory = os.fspath(directory)
        self._checkpoint_prefix = os.path.join(self._directory, checkpoint_name)
        self._init_fn = init_fn
        if checkpoint_interval is not None:
            if step_counter is None:
                raise _errors.GradkitValueError(
                    "`step_counter` should be passed if `checkpoint_interval` is not None: the manager reads it to "
                    "tell how many steps passed since the last checkpoint (pass optimizer.iterations)."
                )
            self._last_checkpoint_step = last_checkpoint_step
            self._step_counter = step_counter
        self._checkpoint_interval = checkpoint_interval
        recovered = state_file.get_checkpoint_state(self._directory)
        now = time.time()
        self._maybe_delete: collections.OrderedDict = collections.OrderedDict()
        if recovered is None:
            self._latest_checkpoint = None
            self._last_preserved_timestamp = now - 1.0
        else:
            self._latest_checkpoint = recovered.model_checkpoint_path
            self._last_preserved_timestamp = min(recovered.last_preserved_timestamp, now)
            timestamps = recovered.all_model_checkpoint_timestamps or [self._last_preserved_timestamp] * len(
                recovered.all_model_checkpoint_paths
            )
            for filename, timestamp in zip(recovered.all_model_checkpoint_paths, timestamps):
                timestamp = min(timestamp, now)
                if timestamp > self._last_preserved_timestamp:
                    self._maybe_delete[filename] = timestamp

    @property
    def directory(self):
        return self._directory

    @property
    def checkpoint_interval(self):
        return self._checkpoint_interval

    @property
    def latest_checkpoint(self):
        """The prefix of the newest checkpoint in ``directory`` (None when there is none)."""
        return self._latest_checkpoint

    @property
    def checkpoints(self) -> list:
        """The managed checkpoints, oldest first (those preserved by ``keep_checkpoint_every_n_hours``
        are not listed, as in TensorFlow)."""
        return list(self._maybe_delete)

    @property
    def checkpoint(self):
        """The ``tf.train.Checkpoint`` this manager saves."""
        return self._checkpoint

    def _sweep(self) -> None:
        if not self._max_to_keep:
            return
        while len(self._maybe_delete) > self._max_to_keep:
            filename, timestamp = self._maybe_delete.popitem(last=False)
            hours = self._keep_checkpoint_every_n_hours
            if hours and timestamp - hours * 3600.0 >= self._last_preserved_timestamp:
                self._last_preserved_timestamp = timestamp
                continue
            files.delete(filename)

    def _record_state(self) -> None:
        state_file.update(
            self._directory,
            self._latest_checkpoint,
            list(self._maybe_delete),
            list(self._maybe_delete.values()),
            self._last_preserved_timestamp,
        )

    def save(self, checkpoint_number=None, check_interval=True, options=None):
        """Save a checkpoint and manage the directory. Returns its path, or None when
        ``checkpoint_interval`` says it is not time yet."""
        if self._checkpoint_interval is not None:
            step = _number(self._step_counter)
            if self._last_checkpoint_step is not None:
                if step == self._last_checkpoint_step:
                    return None
                if check_interval and step < self._last_checkpoint_step + self._checkpoint_interval:
                    return None
            self._last_checkpoint_step = step
        self._checkpoint._refuse_traced("save")
        counter = self._checkpoint.save_counter
        counter.assign_add(1)
        number = counter if checkpoint_number is None else checkpoint_number
        path = self._checkpoint._write(f"{self._checkpoint_prefix}-{_number(number)}")
        self._maybe_delete.pop(path, None)
        self._maybe_delete[path] = time.time()
        self._latest_checkpoint = path
        self._record_state()
        self._sweep()
        self._record_state()
        return path

    def restore_or_initialize(self):
        """Restore the newest checkpoint of ``directory`` and return its path; with none, call
        ``init_fn`` (if given) and return None."""
        if self._latest_checkpoint is not None:
            self._checkpoint.restore(self._latest_checkpoint)
            if self._checkpoint_interval is not None:
                self._last_checkpoint_step = _number(self._step_counter)
            return self._latest_checkpoint
        if self._init_fn is not None:
            self._init_fn()
        return None

    def sync(self):
        """Nothing to wait for: gradkit writes checkpoints synchronously."""
        return None
