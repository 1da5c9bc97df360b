"""``tf.keras.callbacks.ModelCheckpoint``: the model (``.keras``) or its weights (``.weights.h5``)
saved during ``fit``, at each epoch's end or every ``save_freq`` batches, with Keras 3's rules
(ported from ``keras/src/callbacks/model_checkpoint.py``): the file name formatted with
``epoch`` (from 1), ``batch`` and the logs (``"ckpt-{epoch:02d}-{val_loss:.2f}.keras"``), and
with ``save_best_only`` a save only when ``monitor`` improves (``MonitorCallback``'s rules).
"""

from __future__ import annotations

import os
import warnings

import numpy as np

from gradkit import _errors

from .callbacks import print_msg
from .callbacks_monitor import MonitorCallback


class ModelCheckpoint(MonitorCallback):
    """``tf.keras.callbacks.ModelCheckpoint(filepath, monitor="val_loss", verbose=0,
    save_best_only=False, save_weights_only=False, mode="auto", save_freq="epoch",
    initial_value_threshold=None)``; see the module docstring."""

    def __init__(
        self,
        filepath,
        monitor="val_loss",
        verbose=0,
        save_best_only=False,
        save_weights_only=False,
        mode="auto",
        save_freq="epoch",
        initial_value_threshold=None,
    ):
        super().__init__(monitor, mode, initial_value_threshold)
        self.verbose = verbose
        self.filepath = os.fspath(filepath)
        self.save_best_only = save_best_only
        self.save_weights_only = save_weights_only
        self.save_freq = save_freq
        self._batches_seen_since_last_saving = 0
        self._last_batch_seen = None
        self._current_epoch = 0
        if self.save_freq != "epoch" and not isinstance(self.save_freq, int):
            raise _errors.GradkitValueError(
                f"Unrecognized save_freq: {self.save_freq}. Expected save_freq are 'epoch' or integer values"
            )
        if save_weights_only:
            if not self.filepath.endswith(".weights.h5"):
                raise _errors.GradkitValueError(
                    "When using `save_weights_only=True` in `ModelCheckpoint`, the filepath provided must end in "
                    f"`.weights.h5` (Keras weights format). Received: filepath={self.filepath}"
                )
        elif not self.filepath.endswith((".keras", ".h5")):
            raise _errors.GradkitValueError(
                f"The filepath provided must end in `.keras` (Keras model format). Received: filepath={self.filepath}"
            )
        if not save_weights_only and self.filepath.endswith(".h5"):
            raise _errors.GradkitNotImplementedError(
                f"ModelCheckpoint(filepath={self.filepath!r}) would save the whole model in the legacy HDF5 format, "
                "which gradkit.tf does not write. Save it as '.keras', or its weights with save_weights_only=True "
                "and a '.weights.h5' path."
            )

    def on_train_batch_end(self, batch, logs=None):
        if self._should_save_on_batch(batch):
            self._save_model(epoch=self._current_epoch, batch=batch, logs=logs)

    def on_epoch_begin(self, epoch, logs=None):
        self._current_epoch = epoch

    def on_epoch_end(self, epoch, logs=None):
        if self.monitor_op is None:
            self._set_monitor_op()  # once the compiled metrics exist
        if self.save_freq == "epoch":
            self._save_model(epoch=epoch, batch=None, logs=logs)

    def _should_save_on_batch(self, batch) -> bool:
        if self.save_freq == "epoch":
            return False
        if self._last_batch_seen is None or batch <= self._last_batch_seen:
            add_batches = batch + 1  # a new epoch counts its batches from 0 again
        else:
            add_batches = batch - self._last_batch_seen
        self._batches_seen_since_last_saving += add_batches
        self._last_batch_seen = batch
        if self._batches_seen_since_last_saving >= self.save_freq:
            self._batches_seen_since_last_saving = 0
            return True
        return False

    def _should_save_model(self, epoch, logs, filepath) -> bool:
        logs = logs or {}
        if not self.save_best_only:
            if self.verbose > 0:
                print_msg(f"\nEpoch {epoch + 1}: saving model to {filepath}")
            return True
        current = logs.get(self.monitor)
        if current is None:
            warnings.warn(f"Can save best model only with {self.monitor} available.", stacklevel=2)
            return True
        if np.ndim(current) > 0:
            warnings.warn(
                f"Can save best model only when `monitor` is a scalar value. Received: {current}. "
                "Falling back to `save_best_only=False`.",
                stacklevel=2,
            )
            return True
        if self.monitor_op is None:
            self._set_monitor_op()  # a batch-level save before the first epoch's end
        best_str = "None" if self.best is None else f"{self.best:.5f}"
        if self._is_improvement(current, self.best):
            if self.verbose > 0:
                print_msg(
                    f"\nEpoch {epoch + 1}: {self.monitor} improved from {best_str} to {current:.5f}, "
                    f"saving model to {filepath}"
                )
            self.best = current
            return True
        if self.verbose > 0:
            print_msg(f"\nEpoch {epoch + 1}: {self.monitor} did not improve from {best_str}")
        return False

    def _save_model(self, epoch, batch, logs) -> None:
        filepath = self._get_file_path(epoch, batch, logs or {})
        if os.path.isdir(filepath):
            raise _errors.GradkitValueError(
                "Please specify a non-directory filepath for ModelCheckpoint. Filepath used is an existing "
                f"directory: {filepath}"
            )
        if not self._should_save_model(epoch, logs, filepath):
            return
        dirname = os.path.dirname(filepath)
        if dirname:
            os.makedirs(dirname, exist_ok=True)
        if self.save_weights_only:
            self.model.save_weights(filepath, overwrite=True)
        else:
            self.model.save(filepath, overwrite=True)
        if self.verbose > 0:
            print_msg(f"\nEpoch {epoch + 1}: finished saving model to {filepath}")

    def _get_file_path(self, epoch, batch, logs) -> str:
        try:
            if batch is None or "batch" in logs:
                return self.filepath.format(epoch=epoch + 1, **logs)
            return self.filepath.format(epoch=epoch + 1, batch=batch + 1, **logs)
        except KeyError as e:
            raise _errors.GradkitKeyError(
                f'Failed to format this callback filepath: "{self.filepath}". Reason: {e}'
            ) from None
