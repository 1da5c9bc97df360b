"""``tf.keras.callbacks.ProgbarLogger``: the lines ``fit``/``evaluate``/``predict`` print,
as Keras' verbose=2 progress bar prints them (verbose=1 prints the same line once per epoch,
not a live bar)."""

from __future__ import annotations

import math
import time

import numpy as np

from gradkit import _errors

from .callbacks import Callback, print_msg


def _format_time(time_per_unit: float, unit_name: str) -> str:
    """Keras' Progbar's time per step: ``' 3ms/step'``, ``' 12us/step'``, ``' 2s/step'``."""
    if time_per_unit >= 1 or time_per_unit == 0:
        return f" {time_per_unit:.0f}s/{unit_name}"
    if time_per_unit >= 1e-3:
        return f" {time_per_unit * 1000.0:.0f}ms/{unit_name}"
    return f" {time_per_unit * 1000000.0:.0f}us/{unit_name}"


def _format_value(value, verbose: int) -> str:
    """A logged value as Keras' Progbar prints it: 4 decimals, or 4 significant digits in
    exponent form when small (verbose 2 tests ``value > 1e-3``, verbose 1 ``abs(value)``)."""
    if not isinstance(value, float):
        try:
            value = np.mean(value)
        except Exception:  # a value that is not a number (Keras' Progbar fails on it): as it is
            return f" {value}"
    big = abs(value) > 1e-3 if verbose == 1 else value > 1e-3
    return f" {value:.4f}" if big else f" {value:.4e}"


class _EpochLine:
    """Keras' ``Progbar`` reduced to its last line: at the end of an epoch (or of ``evaluate``
    or ``predict``) ``4/4 - 0s - 3ms/step - loss: 0.1234 - val_loss: 0.2345``, as Keras prints
    with ``verbose=2``. With ``verbose=1`` Keras redraws a bar after each batch; gradkit prints
    the same final line instead. Every logged value is shown as it came (no averaging: Keras'
    ProgbarLogger treats all metrics as stateful)."""

    def __init__(self, target, verbose):
        self.target = target
        self.verbose = verbose
        self._values: dict = {}  # name -> last value, in the order the names were first seen
        self._start = time.time()
        self._time_after_first_step = None

    def _step_duration(self, current: int, now: float) -> float:
        # Keras' estimate: the first step (compilation) left out once there are more.
        if not current:
            return 0
        if self._time_after_first_step is not None and current > 1:
            per_step = (now - self._time_after_first_step) / (current - 1)
        else:
            per_step = (now - self._start) / current
        if current == 1:
            self._time_after_first_step = now
        return per_step

    def update(self, current: int, values, finalize: bool) -> None:
        for k, v in values:
            self._values[k] = v
        now = time.time()
        per_step = self._step_duration(current, now)
        if not (finalize and self.verbose in (1, 2) and self.target):
            return
        digits = int(math.log10(self.target)) + 1
        info = f"{current:{digits}d}/{self.target} - {now - self._start:.0f}s -{_format_time(per_step, 'step')}"
        for k, v in self._values.items():
            info += f" - {k}:{_format_value(v, self.verbose)}"
        print_msg(info)


class ProgbarLogger(Callback):
    """``tf.keras.callbacks.ProgbarLogger()``: prints ``Epoch i/n`` at each epoch's start (when
    ``epochs > 1``) and the epoch's line at its end (see ``_EpochLine``), from ``params``'
    ``verbose`` (``"auto"`` is 1; 0 prints nothing), ``epochs`` and ``steps`` (``None``: the
    batches seen). Validation inside ``fit`` is silent; ``evaluate`` and ``predict`` print
    their line at their end."""

    def __init__(self):
        super().__init__()
        self.seen = 0
        self.progbar = None
        self.target = None
        self.verbose = 1
        self.epochs = 1
        self._called_in_fit = False

    def set_params(self, params):
        for key in ("verbose", "epochs", "steps"):
            if key not in params:
                raise _errors.GradkitKeyError(
                    f"ProgbarLogger.set_params got {sorted(params)!r}, without {key!r} (Keras' KeyError). Pass "
                    "verbose, epochs and steps (steps=None when unknown), e.g. "
                    "CallbackList(callbacks, verbose=1, epochs=10, steps=None)."
                )
        verbose = params["verbose"]
        self.verbose = 1 if verbose == "auto" else verbose
        self.epochs = params["epochs"]
        self.target = params["steps"]

    def on_train_begin(self, logs=None):
        self._called_in_fit = True  # within fit, validation prints nothing

    def on_test_begin(self, logs=None):
        if not self._called_in_fit:
            self._reset_progbar()
            self._maybe_init_progbar()

    def on_predict_begin(self, logs=None):
        self._reset_progbar()
        self._maybe_init_progbar()

    def on_epoch_begin(self, epoch, logs=None):
        self._reset_progbar()
        self._maybe_init_progbar()
        if self.verbose and self.epochs > 1:
            print_msg(f"Epoch {epoch + 1}/{self.epochs}")

    def on_train_batch_end(self, batch, logs=None):
        self._update_progbar(batch, logs)

    def on_test_batch_end(self, batch, logs=None):
        if not self._called_in_fit:
            self._update_progbar(batch, logs)

    def on_predict_batch_end(self, batch, logs=None):
        self._update_progbar(batch, None)  # not the predictions

    def on_epoch_end(self, epoch, logs=None):
        self._finalize_progbar(logs)

    def on_test_end(self, logs=None):
        if not self._called_in_fit:
            self._finalize_progbar(logs)

    def on_predict_end(self, logs=None):
        self._finalize_progbar(logs)

    def _reset_progbar(self):
        self.seen = 0
        self.progbar = None

    def _maybe_init_progbar(self):
        if self.progbar is None:
            self.progbar = _EpochLine(self.target, self.verbose)

    def _update_progbar(self, batch, logs=None):
        self._maybe_init_progbar()
        self.seen = batch + 1  # one-based
        if self.verbose == 1:  # Keras updates its live bar with the batch's logs
            self.progbar.update(self.seen, list((logs or {}).items()), finalize=False)

    def _finalize_progbar(self, logs):
        self._maybe_init_progbar()  # Keras fails here without a begin hook first
        if self.target is None:
            self.target = self.seen  # kept for the next epochs, as Keras does
            self.progbar.target = self.target
        self.progbar.update(self.target, list((logs or {}).items()), finalize=True)
