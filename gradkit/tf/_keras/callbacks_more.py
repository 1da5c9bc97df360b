"""``tf.keras.callbacks``' small callbacks: ``TerminateOnNaN``, ``LambdaCallback``,
``CSVLogger`` and ``SwapEMAWeights`` (Keras 3's semantics)."""

from __future__ import annotations

import collections
import csv
import os
import re

import numpy as np

from gradkit import _errors

from .callbacks import Callback, model_of, print_msg


class TerminateOnNaN(Callback):
    """``tf.keras.callbacks.TerminateOnNaN(raise_error=False)``: after a training batch whose
    ``loss`` log is NaN or infinite, sets ``model.stop_training`` (printing ``Batch i: Invalid
    loss, terminating training``), or with ``raise_error=True`` raises a RuntimeError at once
    (no ``on_train_end`` for the other callbacks)."""

    def __init__(self, raise_error: bool = False):
        super().__init__()
        self.raise_error = raise_error

    def on_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is None or not (np.isnan(loss) or np.isinf(loss)):
            return
        if self.raise_error:
            raise _errors.GradkitRuntimeError(
                f"NaN or Inf loss encountered at batch {batch}. Loss value: {loss}. Terminating training "
                "immediately (TerminateOnNaN(raise_error=True); with raise_error=False training stops after the "
                "batch and every callback's on_train_end runs)."
            )
        print_msg(f"Batch {batch}: Invalid loss, terminating training")
        model_of(self, "on_batch_end").stop_training = True


class LambdaCallback(Callback):
    """``tf.keras.callbacks.LambdaCallback(on_epoch_begin=None, on_epoch_end=None,
    on_train_begin=None, on_train_end=None, on_train_batch_begin=None, on_train_batch_end=None,
    **kwargs)``: a callback whose hooks are the functions given. They are called as the hooks
    are: ``(epoch, logs)``, ``(logs)``, or ``(batch, logs=logs)`` for the batch hooks. Any other
    keyword (``on_test_end=fn``, ...) becomes an attribute, as in Keras, so it replaces that
    hook too."""

    def __init__(
        self,
        on_epoch_begin=None,
        on_epoch_end=None,
        on_train_begin=None,
        on_train_end=None,
        on_train_batch_begin=None,
        on_train_batch_end=None,
        **kwargs,
    ):
        super().__init__()
        self.__dict__.update(kwargs)
        given = {
            "on_epoch_begin": on_epoch_begin,
            "on_epoch_end": on_epoch_end,
            "on_train_begin": on_train_begin,
            "on_train_end": on_train_end,
            "on_train_batch_begin": on_train_batch_begin,
            "on_train_batch_end": on_train_batch_end,
        }
        for name, fn in given.items():
            if fn is not None:
                setattr(self, name, fn)


# Keras' file_utils.is_remote_path: paths Keras opens through tf.io.gfile.
_REMOTE_PATH = re.compile(r"^(/cns|/cfs|/gcs|/hdfs|/readahead|/placer|/tfhub|.*://).*$")


class CSVLogger(Callback):
    """``tf.keras.callbacks.CSVLogger(filename, separator=",", append=False)``: one CSV row per
    epoch, ``epoch`` then the logs' keys sorted (the first epoch's keys; with no ``val_`` key
    among them, a ``val_`` column is added for each, as Keras does; a missing value is ``NA``),
    written and flushed at each epoch's end. The file is opened by ``on_train_begin`` (``append``
    keeps what it has, and writes no header when it is not empty) and closed by ``on_train_end``.
    A 1-D value is written ``"[a, b]"``. Local files only (Keras also writes remote paths
    through ``tf.io.gfile``)."""

    def __init__(self, filename, separator=",", append=False):
        super().__init__()
        self.sep = separator
        self.filename = os.fspath(filename) if isinstance(filename, os.PathLike) else filename
        if isinstance(self.filename, str) and _REMOTE_PATH.match(self.filename):
            raise _errors.GradkitValueError(
                f"tf.keras.callbacks.CSVLogger({filename!r}): a remote path, which Keras writes through "
                "tf.io.gfile; gradkit.tf writes local files only. Log to a local file and copy it afterwards."
            )
        self.append = append
        self.writer = None
        self.keys = None
        self.append_header = True
        self.csv_file = None

    def on_train_begin(self, logs=None):
        if self.append:
            if os.path.exists(self.filename):
                with open(self.filename) as f:
                    self.append_header = not bool(len(f.readline()))
            mode = "a"
        else:
            mode = "w"
        if self.csv_file and not self.csv_file.closed:
            self.csv_file.close()
        # Text mode without newline="": the csv module's "\r\n" row ends are written as they are.
        self.csv_file = open(self.filename, mode)
        self.writer = None
        self.keys = None

    def on_epoch_end(self, epoch, logs=None):
        if self.csv_file is None or self.csv_file.closed:
            raise _errors.GradkitRuntimeError(
                f"CSVLogger.on_epoch_end(epoch={epoch}) came with the file {self.filename!r} not open: "
                "on_train_begin opens it and on_train_end closes it. Call on_train_begin first."
            )
        logs = logs or {}

        def handle_value(k):
            is_zero_dim_ndarray = isinstance(k, np.ndarray) and k.ndim == 0
            if isinstance(k, str):
                return k
            if isinstance(k, collections.abc.Iterable) and not is_zero_dim_ndarray:
                return f'"[{", ".join(map(str, k))}]"'
            return k

        if self.keys is None:
            self.keys = sorted(logs.keys())
            # Keras' guess for an epoch without validation: leave columns for it.
            if self.keys and not any(key.startswith("val_") for key in self.keys):
                self.keys.extend([f"val_{k}" for k in self.keys])

        if not self.writer:

            class CustomDialect(csv.excel):
                delimiter = self.sep

            fieldnames = ["epoch"] + (self.keys or [])
            self.writer = csv.DictWriter(self.csv_file, fieldnames=fieldnames, dialect=CustomDialect)
            if self.append_header:
                self.writer.writeheader()

        row_dict = collections.OrderedDict({"epoch": epoch})
        row_dict.update((key, handle_value(logs.get(key, "NA"))) for key in self.keys)
        self.writer.writerow(row_dict)
        self.csv_file.flush()

    def on_train_end(self, logs=None):
        if self.csv_file and not self.csv_file.closed:
            self.csv_file.close()
        self.writer = None


class SwapEMAWeights(Callback):
    """``tf.keras.callbacks.SwapEMAWeights(swap_on_epoch=False)``: with an optimizer made with
    ``use_ema=True``, the model's weights and their moving averages are swapped at
    ``on_test_begin``/``on_predict_begin`` and swapped back at the matching end, so evaluation
    sees the averaged weights; with ``swap_on_epoch`` also from each epoch's end to the next
    epoch's start (for callbacks after it), the averages set to those weights after the last
    epoch (``fit``'s ``finalize_variable_values`` then keeps them).

    Keras' ``on_predict_end`` tests its flag the wrong way round and leaves the averages in
    the model after ``predict``; here it swaps back, as ``on_test_end`` does.
    """

    def __init__(self, swap_on_epoch=False):
        super().__init__()
        self.swap_on_epoch = swap_on_epoch
        self._ema_weights_in_model = False

    def _ema_optimizers(self) -> list:
        optimizer = getattr(model_of(self, "swapping weights"), "optimizer", None)
        optimizer = getattr(optimizer, "inner_optimizer", optimizer)  # a LossScaleOptimizer's
        if hasattr(optimizer, "optimizers"):  # a MultiOptimizer: those with use_ema
            with_ema = [opt for opt in optimizer.optimizers if getattr(opt, "use_ema", False)]
            if not with_ema:
                raise _errors.GradkitValueError(
                    "SwapEMAWeights must be used when at least one inner optimizer has `use_ema=True` set. "
                    "Received a MultiOptimizer with all inner optimizers having `use_ema=False`. Make at least one "
                    "of them with use_ema=True."
                )
            return [self._checked(opt) for opt in with_ema]
        return [self._checked(optimizer)]

    @staticmethod
    def _checked(optimizer):
        use_ema = getattr(optimizer, "use_ema", None)
        if not use_ema or not getattr(optimizer, "_averages", None):
            why = (
                "its moving averages are made at its first step (or by optimizer.build(model.trainable_variables)) "
                "and there are none yet"
                if use_ema
                else "the model's optimizer keeps no moving averages: make it with use_ema=True"
            )
            raise _errors.GradkitValueError(
                f"SwapEMAWeights must be used when `use_ema=True` is set on the optimizer. Received: "
                f"use_ema={use_ema} (optimizer {optimizer!r}): {why}."
            )
        return optimizer

    @staticmethod
    def _pairs(optimizer) -> list:
        # The optimizer's (Variable, moving average) pairs, in the order it made them.
        return [(v, average) for ref, average in optimizer._averages.values() if (v := ref()) is not None]

    def _swap_variables(self):
        for optimizer in self._ema_optimizers():
            for variable, average in self._pairs(optimizer):
                value = variable.numpy()
                variable.assign(average.value)
                average.assign(value)

    def _finalize_ema_values(self):
        for optimizer in self._ema_optimizers():
            for variable, average in self._pairs(optimizer):
                average.assign(variable.value)

    def on_epoch_begin(self, epoch, logs=None):
        if self.swap_on_epoch and self._ema_weights_in_model:
            self._swap_variables()
            self._ema_weights_in_model = False

    def on_epoch_end(self, epoch, logs=None):
        if self.swap_on_epoch and not self._ema_weights_in_model:
            last = epoch == self._epochs() - 1  # read first: a refusal leaves the weights as they are
            self._swap_variables()
            self._ema_weights_in_model = True
            # fit ends with finalize_variable_values (averages into the weights): after the last
            # epoch the averages must hold what the model now has, the averaged weights.
            if last:
                self._finalize_ema_values()

    def _epochs(self) -> int:
        if not self.params or "epochs" not in self.params:
            raise _errors.GradkitKeyError(
                f"SwapEMAWeights(swap_on_epoch=True) reads params['epochs'] to find the last epoch, and its params "
                f"are {self.params!r}. Hand it the training parameters: CallbackList(callbacks, epochs=..., ...) "
                "or callback.set_params({'epochs': ..., ...}) (model.fit does it)."
            )
        return self.params["epochs"]

    def on_test_begin(self, logs=None):
        if not self._ema_weights_in_model:
            self._swap_variables()
            self._ema_weights_in_model = True

    def on_test_end(self, logs=None):
        if self._ema_weights_in_model:
            self._swap_variables()
            self._ema_weights_in_model = False

    def on_predict_begin(self, logs=None):
        self.on_test_begin(logs)

    def on_predict_end(self, logs=None):
        self.on_test_end(logs)
