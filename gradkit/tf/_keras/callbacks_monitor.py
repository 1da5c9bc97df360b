"""``tf.keras.callbacks``' callbacks that watch a logged quantity or set the learning rate:
``EarlyStopping``, ``ReduceLROnPlateau`` and ``LearningRateScheduler``, with Keras 3's rules
(ported from ``keras/src/callbacks``).

``MonitorCallback`` (Keras' internal base) decides what counts as an improvement: ``mode``
``"min"``/``"max"``, or ``"auto"``, which minimizes a ``loss``/``val_loss`` and otherwise asks
the compiled metrics for their direction (``metric_direction``). Values are compared as Keras'
``ops.less``/``ops.greater`` compare them: a Python float as float32, a NumPy value in its dtype.

The learning rate is read as ``float(optimizer.learning_rate)`` and set with
``optimizer.learning_rate = value`` (the optimizer assigns it into its float32 Variable, and
refuses it with Keras' TypeError when the rate is a ``LearningRateSchedule``); a
``MultiOptimizer``'s inner optimizers are each read and set, logged as ``learning_rate_<name>``.
"""

from __future__ import annotations

import warnings

import numpy as np

from gradkit import _errors

from .callbacks import Callback, model_of, print_msg
from .loss_registry import OBJECTS as _LOSS_OBJECTS
from .metrics import MeanMetricWrapper

# The direction Keras 3 gives each of its metric classes (their ``_direction``); gradkit's
# metrics, written under the same names, get it from here.
_UP = frozenset(
    (
        "Accuracy BinaryAccuracy CategoricalAccuracy SparseCategoricalAccuracy TopKCategoricalAccuracy "
        "SparseTopKCategoricalAccuracy Precision Recall AUC SensitivityAtSpecificity SpecificityAtSensitivity "
        "PrecisionAtRecall RecallAtPrecision FBetaScore F1Score IoU BinaryIoU MeanIoU OneHotIoU OneHotMeanIoU "
        "PearsonCorrelation ConcordanceCorrelation CosineSimilarity R2Score"
    ).split()
)
_DOWN = frozenset(
    (
        "BinaryCrossentropy CategoricalCrossentropy SparseCategoricalCrossentropy Hinge SquaredHinge "
        "CategoricalHinge MeanSquaredError MeanAbsoluteError MeanAbsolutePercentageError MeanSquaredLogarithmicError "
        "RootMeanSquaredError LogCoshError KLDivergence Poisson"
    ).split()
)
_LOSS_IDS = {id(obj) for obj in _LOSS_OBJECTS.values()}


def metric_direction(metric):
    """``"up"``, ``"down"`` or None: the metric's ``_direction`` when it has one (a Keras metric,
    or a subclass setting it as Keras' do), else that of the Keras class gradkit's metric class
    stands for, else ``"down"`` for a ``MeanMetricWrapper`` of one of Keras' losses."""
    direction = getattr(metric, "_direction", None)
    if direction is not None:
        return direction
    for cls in type(metric).__mro__:
        if cls.__module__.startswith("gradkit.tf._keras."):
            if cls.__name__ in _UP:
                return "up"
            if cls.__name__ in _DOWN:
                return "down"
    if isinstance(metric, MeanMetricWrapper):
        fn = getattr(metric, "_fn", None)
        if id(fn) in _LOSS_IDS or id(type(fn)) in _LOSS_IDS:
            return "down"
    return None


def _as_keras_tensor(x):
    """``x`` as Keras' ``convert_to_tensor`` makes it before comparing: a Python float is
    float32 and an int int32 (not NumPy's float64/int64); NumPy values and tensors keep their
    dtype (np.float64, a float subclass, included)."""
    if isinstance(x, np.generic):
        return np.asarray(x)
    if isinstance(x, bool):
        return np.bool_(x)
    if isinstance(x, int):
        return np.asarray(x, np.int32) if -(2**31) <= x < 2**31 else np.asarray(x)
    if isinstance(x, float):
        return np.float32(x)
    return np.asarray(x.numpy() if hasattr(x, "numpy") else x)


def _keras_compare(op, a, b) -> bool:
    """``bool(ops.less(a, b))`` (or greater): both converted as Keras does, an integer operand
    cast to the other's float dtype (Keras' result_type), then compared."""
    a, b = _as_keras_tensor(a), _as_keras_tensor(b)
    if np.issubdtype(a.dtype, np.floating) and not np.issubdtype(b.dtype, np.floating):
        b = b.astype(a.dtype)
    elif np.issubdtype(b.dtype, np.floating) and not np.issubdtype(a.dtype, np.floating):
        a = a.astype(b.dtype)
    return bool(op(a, b))


class MonitorCallback(Callback):
    """Keras' base of the callbacks that watch ``monitor`` in the epoch logs: ``mode``
    (``"auto"``, ``"min"``, ``"max"``; another is warned about and taken as ``"auto"``),
    ``baseline`` and ``min_delta`` (an improvement must beat the reference by more than
    ``abs(min_delta)``)."""

    def __init__(self, monitor="val_loss", mode="auto", baseline=None, min_delta=0):
        super().__init__()
        if mode not in ["auto", "min", "max"]:
            warnings.warn(f"{type(self).__name__} mode '{mode}' is unknown, fallback to auto mode.", stacklevel=3)
            mode = "auto"
        self.monitor = monitor
        self.mode = mode
        self.best = baseline
        self.min_delta = abs(min_delta)
        self.monitor_op = None  # np.less or np.greater, chosen at the first epoch's end

    def _compiled_metrics(self) -> list:
        # Keras looks into the compiled metrics' containers only (its CompileMetrics/MetricsList:
        # here any item of model.metrics holding a list of metrics), not at the loss tracker.
        found = []
        for m in getattr(self.model, "metrics", None) or []:
            inner = getattr(m, "metrics", None)
            if isinstance(inner, (list, tuple)):
                found.extend(inner)
        return found

    def _set_monitor_op(self):
        if self.mode == "min":
            self.monitor_op = np.less
        elif self.mode == "max":
            self.monitor_op = np.greater
        else:
            metric_name = self.monitor.removeprefix("val_")
            if metric_name == "loss":
                self.monitor_op = np.less
            for m in self._compiled_metrics():
                if getattr(m, "name", None) == metric_name:
                    direction = metric_direction(m)
                    if direction is not None:
                        self.monitor_op = np.greater if direction == "up" else np.less
            if self.monitor_op is None:
                raise _errors.GradkitValueError(
                    f"{type(self).__name__} callback received monitor={self.monitor}, but Keras isn't able to "
                    "automatically determine whether that metric should be maximized or minimized. Pass "
                    "`mode='max'` in order to monitor based on the highest metric value, or pass `mode='min'` in "
                    "order to use the lowest value."
                )
        if self.monitor_op is np.less:
            self.min_delta *= -1

    def _is_improvement(self, monitor_value, reference_value):
        if reference_value is None:
            return True
        return _keras_compare(self.monitor_op, monitor_value - self.min_delta, reference_value)


class EarlyStopping(MonitorCallback):
    """``tf.keras.callbacks.EarlyStopping(monitor="val_loss", min_delta=0, patience=0,
    verbose=0, mode="auto", baseline=None, restore_best_weights=False, start_from_epoch=0)``.

    At each epoch's end (from ``start_from_epoch`` on) it compares ``logs[monitor]`` with the
    best so far; after ``patience`` epochs without an improvement (and not at epoch 0) it sets
    ``model.stop_training = True``. With a ``baseline`` the wait restarts only when the value
    beats the baseline too. With ``restore_best_weights`` it keeps ``model.get_weights()`` of
    the best epoch and sets them back at ``on_train_end``. A missing ``monitor`` is warned about
    (Keras' warning) and the epoch skipped.
    """

    def __init__(
        self,
        monitor="val_loss",
        min_delta=0,
        patience=0,
        verbose=0,
        mode="auto",
        baseline=None,
        restore_best_weights=False,
        start_from_epoch=0,
    ):
        super().__init__(monitor, mode, min_delta=min_delta)
        self.patience = patience
        self.verbose = verbose
        self.baseline = baseline
        self.wait = 0
        self.stopped_epoch = 0
        self.restore_best_weights = restore_best_weights
        self.best_weights = None
        self.best_epoch = 0
        self.start_from_epoch = start_from_epoch

    def on_train_begin(self, logs=None):
        # The callback may be reused across fit calls.
        self.wait = 0
        self.stopped_epoch = 0
        self.best = None
        self.best_weights = None
        self.best_epoch = 0

    def on_epoch_end(self, epoch, logs=None):
        if self.monitor_op is None:
            self._set_monitor_op()  # once the compiled metrics exist
        current = self.get_monitor_value(logs)
        if current is None or epoch < self.start_from_epoch:
            return
        if self.restore_best_weights and self.best_weights is None:
            # Nothing kept yet: the weights now are the best seen.
            self.best_weights = model_of(self, "on_epoch_end").get_weights()
            self.best_epoch = epoch

        self.wait += 1
        if self._is_improvement(current, self.best):
            self.best = current
            self.best_epoch = epoch
            if self.restore_best_weights:
                self.best_weights = model_of(self, "on_epoch_end").get_weights()
            # The wait restarts only when the value beats the baseline too.
            if self.baseline is None or self._is_improvement(current, self.baseline):
                self.wait = 0
            return

        if self.wait >= self.patience and epoch > 0:
            self.stopped_epoch = epoch
            model_of(self, "on_epoch_end").stop_training = True

    def on_train_end(self, logs=None):
        if self.stopped_epoch > 0 and self.verbose > 0:
            print_msg(f"Epoch {self.stopped_epoch + 1}: early stopping")
        if self.restore_best_weights and self.best_weights is not None:
            if self.verbose > 0:
                print_msg(f"Restoring model weights from the end of the best epoch: {self.best_epoch + 1}.")
            model_of(self, "on_train_end").set_weights(self.best_weights)

    def get_monitor_value(self, logs):
        logs = logs or {}
        monitor_value = logs.get(self.monitor)
        if monitor_value is None:
            warnings.warn(
                f"Early stopping conditioned on metric `{self.monitor}` which is not available. "
                f"Available metrics are: {','.join(list(logs.keys()))}",
                stacklevel=2,
            )
        return monitor_value


def _optimizer(callback):
    optimizer = getattr(model_of(callback, "reading the learning rate"), "optimizer", None)
    if optimizer is None:
        raise _errors.GradkitAttributeError(
            f"{type(callback).__name__} reads and sets model.optimizer's learning rate, and the model has no "
            "optimizer. Compile the model (model.compile(optimizer=...)) or set model.optimizer = optimizer."
        )
    return optimizer


def _learning_rate(optimizer) -> float:
    """The optimizer's rate now, as a Python float (a schedule's at the current step)."""
    lr = optimizer.learning_rate
    return float(np.asarray(lr.numpy() if hasattr(lr, "numpy") else lr))


def _log_learning_rates(optimizer, logs: dict) -> None:
    # Keras' entries: one per inner optimizer of a MultiOptimizer, else "learning_rate".
    if hasattr(optimizer, "optimizers"):
        for opt in optimizer.optimizers:
            logs[f"learning_rate_{opt.name}"] = _learning_rate(opt)
    else:
        logs["learning_rate"] = _learning_rate(optimizer)


class ReduceLROnPlateau(MonitorCallback):
    """``tf.keras.callbacks.ReduceLROnPlateau(monitor="val_loss", factor=0.1, patience=10,
    verbose=0, mode="auto", min_delta=1e-4, cooldown=0, min_lr=0.0)``.

    At each epoch's end it logs the rate (``learning_rate``) and, after ``patience`` epochs
    without an improvement of ``logs[monitor]``, multiplies it by ``factor`` (not below
    ``min_lr``; a rate already at ``min_lr`` in float32 is left alone), then waits ``cooldown``
    epochs before counting again. Other keyword arguments are accepted and ignored, as Keras 3
    does. A ``factor >= 1`` is refused (Keras' ValueError).
    """

    def __init__(
        self,
        monitor="val_loss",
        factor=0.1,
        patience=10,
        verbose=0,
        mode="auto",
        min_delta=1e-4,
        cooldown=0,
        min_lr=0.0,
        **kwargs,
    ):
        super().__init__(monitor, mode, min_delta=min_delta)
        if factor >= 1.0:
            raise _errors.GradkitValueError(
                f"ReduceLROnPlateau does not support a factor >= 1.0. Received factor={factor}. The new rate is "
                "lr * factor: pass a factor below 1, such as 0.1 or 0.5."
            )
        self.factor = factor
        self.min_lr = min_lr
        self.patience = patience
        self.verbose = verbose
        self.cooldown = cooldown
        self.cooldown_counter = 0
        self.wait = 0

    def _reset(self):
        self.best = None
        self.cooldown_counter = 0
        self.wait = 0

    def _reduce_optimizer_lr(self, optimizer, epoch, name=""):
        old_lr = _learning_rate(optimizer)
        # In float32, as the rate is kept: a rate stored as min_lr is not above it.
        if old_lr > np.float32(self.min_lr):
            new_lr = max(old_lr * self.factor, self.min_lr)
            optimizer.learning_rate = new_lr  # a schedule refuses it (Keras' TypeError)
            if self.verbose > 0:
                name_str = f" {name}" if name else ""
                print_msg(f"\nEpoch {epoch + 1}: ReduceLROnPlateau reducing{name_str} learning rate to {new_lr}.")
            return True
        return False

    def on_train_begin(self, logs=None):
        self._reset()

    def on_epoch_end(self, epoch, logs=None):
        if self.monitor_op is None:
            self._set_monitor_op()  # once the compiled metrics exist
        logs = logs or {}
        optimizer = _optimizer(self)
        _log_learning_rates(optimizer, logs)
        current = logs.get(self.monitor)
        if current is None:
            warnings.warn(
                f"Learning rate reduction is conditioned on metric `{self.monitor}` which is not available. "
                f"Available metrics are: {','.join(list(logs.keys()))}.",
                stacklevel=2,
            )
            return
        if self.in_cooldown():
            self.cooldown_counter -= 1
            self.wait = 0
        if self._is_improvement(current, self.best):
            self.best = current
            self.wait = 0
        elif not self.in_cooldown():
            self.wait += 1
            if self.wait >= self.patience:
                if hasattr(optimizer, "optimizers"):
                    # Every inner optimizer is tried (no short cut), as in Keras.
                    reduced = [self._reduce_optimizer_lr(opt, epoch, f"{opt.name}") for opt in optimizer.optimizers]
                    reduced = any(reduced)
                else:
                    reduced = self._reduce_optimizer_lr(optimizer, epoch)
                if reduced:
                    self.cooldown_counter = self.cooldown
                    self.wait = 0

    def in_cooldown(self):
        return self.cooldown_counter > 0


class LearningRateScheduler(Callback):
    """``tf.keras.callbacks.LearningRateScheduler(schedule, verbose=0)``: at each epoch's start
    sets the rate to ``schedule(epoch, lr)`` (``lr`` the rate now, a float), or to
    ``schedule(epoch)`` when that call raises TypeError (a one-argument schedule); logs the
    rate as ``learning_rate`` at the epoch's end. The schedule must return a Python or NumPy
    float (Keras' ValueError otherwise, also for an int or a tensor)."""

    def __init__(self, schedule, verbose=0):
        super().__init__()
        self.schedule = schedule
        self.verbose = verbose

    def _update_optimizer_lr(self, optimizer, epoch):
        if not hasattr(optimizer, "learning_rate"):
            raise _errors.GradkitValueError(
                f'Optimizer must have a "learning_rate" attribute; {optimizer!r} has none. LearningRateScheduler '
                "sets model.optimizer.learning_rate: use a tf.keras optimizer."
            )
        try:
            learning_rate = self.schedule(epoch, _learning_rate(optimizer))
        except TypeError:
            # Keras' fallback for a schedule of the epoch only (whatever raised the TypeError).
            learning_rate = self.schedule(epoch)
        if not isinstance(learning_rate, (float, np.float32, np.float64)):
            raise _errors.GradkitValueError(
                f"The output of the `schedule` function should be a float. Got: {learning_rate} "
                f"({type(learning_rate).__name__}). Return a Python float, e.g. float(...) of the value."
            )
        optimizer.learning_rate = learning_rate  # a schedule refuses it (Keras' TypeError)
        return learning_rate

    def on_epoch_begin(self, epoch, logs=None):
        optimizer = _optimizer(self)
        if hasattr(optimizer, "optimizers"):
            for opt in optimizer.optimizers:
                learning_rate = self._update_optimizer_lr(opt, epoch)
                if self.verbose > 0:
                    print_msg(
                        f"\nEpoch {epoch + 1}: LearningRateScheduler setting {opt.name} learning rate to "
                        f"{learning_rate}."
                    )
        else:
            learning_rate = self._update_optimizer_lr(optimizer, epoch)
            if self.verbose > 0:
                print_msg(f"\nEpoch {epoch + 1}: LearningRateScheduler setting learning rate to {learning_rate}.")

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        _log_learning_rates(_optimizer(self), logs)
