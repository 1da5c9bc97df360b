"""``tf.keras.callbacks``: Keras 3's callbacks, the hooks a training loop calls around its
epochs and batches, with Keras' semantics (ported from ``keras/src/callbacks``).

Here: ``Callback`` (the base), ``CallbackList`` (one object calling every callback's hook, as
``fit``/``evaluate``/``predict`` use it) and ``History``; ``ProgbarLogger`` is in
``callbacks_progbar.py``, ``TerminateOnNaN``, ``LambdaCallback``, ``CSVLogger`` and
``SwapEMAWeights`` in ``callbacks_more.py``. The callbacks that watch a logged quantity or set
the learning rate (``EarlyStopping``, ``ReduceLROnPlateau``, ``LearningRateScheduler``) are in
``callbacks_monitor.py``. Left out: those that need Keras'
model saving (``ModelCheckpoint``, ``BackupAndRestore``, ``OrbaxCheckpoint``), ``TensorBoard``
and ``RemoteMonitor``.

In a custom training loop, call the hooks yourself:

>>> import gradkit.tf as tf
>>> model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
>>> stop = tf.keras.callbacks.EarlyStopping(monitor="loss", patience=1)
>>> callbacks = tf.keras.callbacks.CallbackList([stop], add_history=True, model=model)
>>> callbacks.on_train_begin()
>>> for epoch, loss in enumerate([0.5, 0.4, 0.45, 0.41]):
...     callbacks.on_epoch_end(epoch, {"loss": loss})
...     if getattr(model, "stop_training", False):
...         break
>>> model.history.history["loss"], stop.stopped_epoch
([0.5, 0.4, 0.45], 2)
"""

from __future__ import annotations

import sys

from gradkit import _errors

# Every hook a Callback has, in Keras' order; CallbackList calls each on every callback.
HOOKS = (
    "on_batch_begin",
    "on_batch_end",
    "on_epoch_begin",
    "on_epoch_end",
    "on_train_batch_begin",
    "on_train_batch_end",
    "on_test_batch_begin",
    "on_test_batch_end",
    "on_predict_batch_begin",
    "on_predict_batch_end",
    "on_train_begin",
    "on_train_end",
    "on_test_begin",
    "on_test_end",
    "on_predict_begin",
    "on_predict_end",
)


def print_msg(message) -> None:
    """Keras' ``io_utils.print_msg``: the message and a newline on stdout, flushed."""
    sys.stdout.write(f"{message}\n")
    sys.stdout.flush()


def model_of(callback, what: str):
    """``callback.model``, refused with gradkit's error when no model was set (Keras fails with
    an AttributeError on None)."""
    model = callback.model
    if model is None:
        raise _errors.GradkitAttributeError(
            f"{type(callback).__name__} needs the model it acts on ({what}), and none was set. Call "
            "callback.set_model(model) first (CallbackList(callbacks, model=model) and model.fit do it)."
        )
    return model


class Callback:
    """``tf.keras.callbacks.Callback``: the base class; override the hooks you need.

    ``params`` (a dict: ``verbose``, ``epochs``, ``steps``) and ``model`` are set by the
    training loop through ``set_params``/``set_model``. ``on_train_batch_begin``/``_end`` call
    ``on_batch_begin``/``_end`` (Keras' backwards-compatible aliases) unless overridden.
    """

    def __init__(self):
        self.params = None
        self._model = None

    def set_params(self, params):
        self.params = params

    def set_model(self, model):
        self._model = model

    @property
    def model(self):
        return self._model

    @model.setter
    def model(self, value):
        # Keras' property has no setter (a plain AttributeError there).
        raise _errors.GradkitAttributeError(
            f"{type(self).__name__}.model cannot be assigned (as in Keras, where it is a read-only property). "
            "Call callback.set_model(model) instead."
        )

    def on_batch_begin(self, batch, logs=None):
        """A backwards-compatible alias of ``on_train_batch_begin``."""

    def on_batch_end(self, batch, logs=None):
        """A backwards-compatible alias of ``on_train_batch_end``."""

    def on_epoch_begin(self, epoch, logs=None):
        """At the start of an epoch of ``fit``."""

    def on_epoch_end(self, epoch, logs=None):
        """At the end of an epoch of ``fit``; ``logs`` holds the epoch's metrics (validation ones
        prefixed ``val_``)."""

    def on_train_batch_begin(self, batch, logs=None):
        """At the start of a training batch."""
        self.on_batch_begin(batch, logs=logs)

    def on_train_batch_end(self, batch, logs=None):
        """At the end of a training batch; ``logs`` holds the metrics so far in the epoch."""
        self.on_batch_end(batch, logs=logs)

    def on_test_batch_begin(self, batch, logs=None):
        """At the start of a batch of ``evaluate`` (or of ``fit``'s validation)."""

    def on_test_batch_end(self, batch, logs=None):
        """At the end of a batch of ``evaluate`` (or of ``fit``'s validation)."""

    def on_predict_batch_begin(self, batch, logs=None):
        """At the start of a batch of ``predict``."""

    def on_predict_batch_end(self, batch, logs=None):
        """At the end of a batch of ``predict``."""

    def on_train_begin(self, logs=None):
        """At the start of ``fit``."""

    def on_train_end(self, logs=None):
        """At the end of ``fit``; ``logs`` holds the last epoch's."""

    def on_test_begin(self, logs=None):
        """At the start of ``evaluate`` (or of ``fit``'s validation)."""

    def on_test_end(self, logs=None):
        """At the end of ``evaluate`` (or of ``fit``'s validation)."""

    def on_predict_begin(self, logs=None):
        """At the start of ``predict``."""

    def on_predict_end(self, logs=None):
        """At the end of ``predict``."""


def pythonify_logs(logs) -> dict:
    """Keras' ``pythonify_logs``: a new dict in sorted key order, nested dicts flattened into it
    (their own keys), each value a Python float where ``float(value)`` works, else as it is (a
    tensor as a NumPy array, as Keras' trainer hands its logs over)."""
    result = {}
    for key, value in sorted((logs or {}).items()):
        if isinstance(value, dict):
            result.update(pythonify_logs(value))
            continue
        if hasattr(value, "numpy"):
            value = value.numpy()
        try:
            value = float(value)
        except Exception:  # Keras keeps any value float() refuses (arrays, strings, ...)
            pass
        result[key] = value
    return result


def _flatten(callbacks) -> list:
    """Keras' ``tree.flatten`` of the ``callbacks`` argument: nested lists and tuples (and dict
    values, by sorted key) in order; anything else is one callback."""
    if isinstance(callbacks, (list, tuple)):
        return [c for item in callbacks for c in _flatten(item)]
    if isinstance(callbacks, dict):
        return [c for key in sorted(callbacks) for c in _flatten(callbacks[key])]
    return [callbacks]


def _checked(callback):
    # Keras would fail with an AttributeError at the first hook it lacks; refuse it up front.
    lacking = [name for name in ("set_model", "set_params", *HOOKS) if not callable(getattr(callback, name, None))]
    if lacking:
        raise _errors.GradkitTypeError(
            f"tf.keras.callbacks.CallbackList got {callback!r}, which is not a callback: it has no {lacking[0]}(). "
            "Pass instances of tf.keras.callbacks.Callback (or of a subclass of it)."
        )
    return callback


class CallbackList(Callback):
    """``tf.keras.callbacks.CallbackList(callbacks=None, add_history=False, add_progbar=False,
    model=None, **params)``: calls each hook of every callback in order, with the logs made
    plain Python (``pythonify_logs``, one new dict per hook shared by the callbacks, so what one
    callback adds to it the next ones see, as in Keras).

    ``add_history``/``add_progbar`` append a ``History``/``ProgbarLogger`` unless the list has
    one; ``model`` and ``params`` (``verbose``, ``epochs``, ``steps``) are handed to every
    callback. Keras dispatches the batch-end hooks on a thread pool when no callback overrides
    them; here they always run in order, in the caller's thread (the same results).
    """

    def __init__(self, callbacks=None, add_history=False, add_progbar=False, model=None, **params):
        super().__init__()
        self.callbacks = [_checked(c) for c in _flatten(callbacks)] if callbacks else []
        self._in_begin_end_block_count = 0  # open on_*_begin calls, closed by their on_*_end
        self._add_default_callbacks(add_history, add_progbar)
        self.set_model(model)
        self.set_params(params)

    def _add_default_callbacks(self, add_history, add_progbar):
        from .callbacks_progbar import ProgbarLogger  # it builds on this module

        self._progbar = None
        self._history = None
        for cb in self.callbacks:
            if isinstance(cb, ProgbarLogger):
                self._progbar = cb
            elif isinstance(cb, History):
                self._history = cb
        if self._history is None and add_history:
            self._history = History()
            self.callbacks.append(self._history)
        if self._progbar is None and add_progbar:
            self._progbar = ProgbarLogger()
            self.callbacks.append(self._progbar)

    def set_params(self, params):
        self.params = params
        if params:
            for callback in self.callbacks:
                callback.set_params(params)

    def set_model(self, model):
        if model is None:
            return
        super().set_model(model)
        if self._history is not None:
            model.history = self._history
        for callback in self.callbacks:
            callback.set_model(model)

    def _on_begin(self):
        self._in_begin_end_block_count += 1

    def _on_end(self, hook):
        self._in_begin_end_block_count -= 1
        if self._in_begin_end_block_count < 0:
            self._in_begin_end_block_count = 0
            raise _errors.GradkitValueError(
                f"CallbackList.{hook} was called without a matching on_*_begin call (Keras' error: `on_xxx_end` "
                "called without corresponding `on_xxx_begin`). Call on_train_begin/on_test_begin/on_predict_begin "
                "before the matching end hook."
            )

    def _dispatch(self, hook, *args, by_keyword):
        # Keras passes the batch hooks' logs by keyword and the others' positionally, which a
        # LambdaCallback's functions see.
        *args, logs = args
        logs = pythonify_logs(logs)
        for callback in self.callbacks:
            if by_keyword:
                getattr(callback, hook)(*args, logs=logs)
            else:
                getattr(callback, hook)(*args, logs)

    def on_batch_begin(self, batch, logs=None):
        self._dispatch("on_batch_begin", batch, logs, by_keyword=True)

    def on_batch_end(self, batch, logs=None):
        self._dispatch("on_batch_end", batch, logs, by_keyword=True)

    def on_epoch_begin(self, epoch, logs=None):
        self._dispatch("on_epoch_begin", epoch, logs, by_keyword=False)

    def on_epoch_end(self, epoch, logs=None):
        self._dispatch("on_epoch_end", epoch, logs, by_keyword=False)

    def on_train_batch_begin(self, batch, logs=None):
        self._dispatch("on_train_batch_begin", batch, logs, by_keyword=True)

    def on_train_batch_end(self, batch, logs=None):
        self._dispatch("on_train_batch_end", batch, logs, by_keyword=True)

    def on_test_batch_begin(self, batch, logs=None):
        self._dispatch("on_test_batch_begin", batch, logs, by_keyword=True)

    def on_test_batch_end(self, batch, logs=None):
        self._dispatch("on_test_batch_end", batch, logs, by_keyword=True)

    def on_predict_batch_begin(self, batch, logs=None):
        self._dispatch("on_predict_batch_begin", batch, logs, by_keyword=True)

    def on_predict_batch_end(self, batch, logs=None):
        self._dispatch("on_predict_batch_end", batch, logs, by_keyword=True)

    def on_train_begin(self, logs=None):
        self._on_begin()
        self._dispatch("on_train_begin", logs, by_keyword=False)

    def on_train_end(self, logs=None):
        self._dispatch("on_train_end", logs, by_keyword=False)
        self._on_end("on_train_end")

    def on_test_begin(self, logs=None):
        self._on_begin()
        self._dispatch("on_test_begin", logs, by_keyword=False)

    def on_test_end(self, logs=None):
        self._dispatch("on_test_end", logs, by_keyword=False)
        self._on_end("on_test_end")

    def on_predict_begin(self, logs=None):
        self._on_begin()
        self._dispatch("on_predict_begin", logs, by_keyword=False)

    def on_predict_end(self, logs=None):
        self._dispatch("on_predict_end", logs, by_keyword=False)
        self._on_end("on_predict_end")


class History(Callback):
    """``tf.keras.callbacks.History()``: each epoch's logs, ``history[name]`` a list with one
    value per epoch and ``epoch`` the epoch numbers; it sets ``model.history`` to itself.
    ``fit`` returns it. ``history`` is kept across ``fit`` calls, ``epoch`` restarts."""

    def __init__(self):
        super().__init__()
        self.history = {}
        self.epoch = []  # Keras makes it in on_train_begin only

    def on_train_begin(self, logs=None):
        self.epoch = []

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        self.epoch.append(epoch)
        for k, v in logs.items():
            self.history.setdefault(k, []).append(v)
        # Set after the epoch, so the model's is the latest state.
        model_of(self, "on_epoch_end").history = self
