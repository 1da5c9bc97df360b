"""Keras 3's training loop on ``tf.keras.Model``: ``compile``, ``fit``, ``evaluate``,
``predict``, ``train_on_batch``, ``test_on_batch``, ``predict_on_batch``.

Each step is Keras' own ``train_step``/``test_step``/``predict_step`` (a subclass may
override them, and ``compute_loss``/``compute_metrics``, as Keras' guide "Customizing what
happens in fit()" does): the forward pass and loss on a ``tf.GradientTape``, the gradient
applied by the compiled optimizer, the loss tracker and compiled metrics updated. Unless
``run_eagerly=True``, each step runs as one ``tf.function`` (``gk.jit``), so same-shaped
batches compile once (a smaller last batch compiles once more). Callbacks and ``History``
are Keras'. The data are arrays, a ``tf.data.Dataset``, a ``PyDataset`` or a generator of
batches (``training_epochs.py``); a model with several outputs takes its losses and metrics per output
(``training_compile.py``).
"""

from __future__ import annotations

import inspect
import warnings

import jax
import numpy as np

from gradkit import _errors
from gradkit._tape.tensor import Tensor

from ..._core import key_order
from .. import _function, _math, _tape
from . import callbacks as callbacks_module
from . import metrics as metrics_module
from . import optimizer_registry, optimizers
from .base_layer import _NO_TRAINING, nested_values
from .callbacks import pythonify_logs
from .training_compile import CompileLoss, CompileMetrics
from .training_data import as_arrays, train_validation_split, unpack_x_y_sample_weight, weights_with_classes
from .training_epochs import EpochIterator, is_batched


class _CompileState:
    """What ``compile`` set up; kept apart from the model's attributes, so that its metrics
    are not also found among the metrics the model holds as attributes."""

    def __init__(self, loss, metrics, weighted_metrics, loss_weights, output_names):
        self.loss = None if loss is None else CompileLoss(loss, loss_weights, output_names)
        self.metrics = (
            None
            if metrics is None and weighted_metrics is None
            else CompileMetrics(metrics, weighted_metrics, output_names, loss)
        )
        self.loss_tracker = metrics_module.Mean(name="loss")


def _takes(method, parameter: str) -> bool:
    try:
        return parameter in inspect.signature(method).parameters
    except (TypeError, ValueError):
        return False


def _attribute_metrics(obj) -> list:
    """The metrics an object holds as attributes (directly or in lists, tuples and dicts)."""
    return [m for value in vars(obj).values() for m in nested_values(value) if isinstance(m, metrics_module.Metric)]


class _CompiledMetrics:
    """``model.compiled_metrics`` (see ``Trainer.compiled_metrics``)."""

    def __init__(self, model):
        self._model = model

    def update_state(self, y, y_pred, sample_weight=None):
        warnings.warn(
            "`model.compiled_metrics()` is deprecated. Instead, use e.g.:\n```\nfor metric in self.metrics:\n"
            "    metric.update_state(y, y_pred)\n```\n",
            stacklevel=2,
        )
        for metric in self._model.metrics:
            if isinstance(metric, metrics_module.Mean):
                metric.update_state(y_pred, sample_weight=sample_weight)
            else:
                metric.update_state(y, y_pred, sample_weight=sample_weight)


class Trainer:
    """The training-loop methods of ``tf.keras.Model`` (a mixin: see the module docstring)."""

    optimizer = None
    loss = None
    compiled = False
    stop_training = False
    history = None
    run_eagerly = False
    jit_compile = False
    steps_per_execution = 1
    train_function = None
    test_function = None
    predict_function = None
    output_names = None  # a functional model names its outputs (its output layers)

    # -- compile ---------------------------------------------------------------------------
    def compile(
        self,
        optimizer="rmsprop",
        loss=None,
        loss_weights=None,
        metrics=None,
        weighted_metrics=None,
        run_eagerly=False,
        steps_per_execution=1,
        jit_compile="auto",
        auto_scale_loss=True,
    ):
        """Keras' ``compile``: the optimizer (an instance or a name), the loss (an instance, a
        function or a name) and the metrics ``fit``/``evaluate`` use. ``jit_compile`` is
        accepted: every step not run eagerly is one XLA program here."""
        if (
            isinstance(steps_per_execution, bool)
            or not isinstance(steps_per_execution, (int, np.integer))
            or (steps_per_execution < 1)
        ):
            raise _errors.GradkitValueError(
                f"tf.keras.Model.compile(steps_per_execution={steps_per_execution!r}): Keras takes a positive int."
            )
        # Keras runs that many steps in one compiled call for speed; gradkit runs them one per call
        # (each a compiled program), which gives the same weights and History, and calls the batch
        # callbacks at every step.
        self.steps_per_execution = int(steps_per_execution)
        given = {
            "optimizer": optimizer,
            "loss": loss,
            "loss_weights": loss_weights,
            "metrics": metrics,
            "weighted_metrics": weighted_metrics,
            "run_eagerly": run_eagerly,
            "steps_per_execution": int(steps_per_execution),
            "jit_compile": jit_compile,
            "auto_scale_loss": auto_scale_loss,
        }
        self.optimizer = optimizer_registry.get(optimizer)
        if not isinstance(self.optimizer, optimizers.Optimizer):
            raise _errors.GradkitTypeError(
                f"tf.keras.Model.compile: optimizer is {optimizer!r}, which is not a tf.keras optimizer. Pass an "
                "instance (tf.keras.optimizers.Adam(1e-3)) or a name ('adam', 'sgd', ...)."
            )
        previous = self.__dict__.get("_keras_compile_state")
        self.__dict__["_keras_compile_state"] = _CompileState(
            loss, metrics, weighted_metrics, loss_weights, self.output_names
        )
        if previous is not None:
            # As Keras, compiling again without a loss (or without metrics) keeps the ones compiled
            # before (freeze some layers, then recompile with only a new optimizer).
            state = self._keras_compile_state
            if loss is None:
                state.loss, loss = previous.loss, self.loss
            if metrics is None and weighted_metrics is None:
                state.metrics = previous.metrics
        # As given, for tf.keras.models.clone_model to compile a clone alike (Keras' compile
        # config); kept in the compile state, where the model's metrics are not looked for.
        self._keras_compile_state.given = given
        self.loss = loss
        if jit_compile is True and run_eagerly:
            warnings.warn(
                "If `run_eagerly` is True, then `jit_compile` cannot also be True. Disabling `jit_compile`.",
                stacklevel=2,
            )
        self.run_eagerly = bool(run_eagerly)
        self.jit_compile = not self.run_eagerly and jit_compile is not False
        if self._keras_compile_state.loss is not None:
            self._keras_compile_state.loss.batches_weighted_by_size = self.run_eagerly
        self.stop_training = False
        self.compiled = True
        self.train_function = self.test_function = self.predict_function = None

    def _compile_state(self, method: str) -> _CompileState:
        state = self.__dict__.get("_keras_compile_state")
        if state is None:
            raise _errors.GradkitValueError(
                f"You must call `compile()` before using the model (tf.keras.Model.{method}): "
                "model.compile(optimizer=..., loss=..., metrics=[...])."
            )
        return state

    # -- metrics ---------------------------------------------------------------------------
    @property
    def metrics(self) -> list:
        """The loss tracker and compiled metrics (after ``compile``), then the metrics the
        model and its layers hold as attributes."""
        out: list = []
        state = self.__dict__.get("_keras_compile_state")
        if state is not None:
            out.append(state.loss_tracker)
            if state.metrics is not None:
                out.append(state.metrics)
            if state.loss is not None:
                out += state.loss.metrics  # each output's loss, with several
        out += _attribute_metrics(self)
        for layer in self._keras_flatten_layers():
            out += _attribute_metrics(layer)
        return out

    @property
    def metrics_names(self) -> list:
        return [m.name for m in self.metrics]

    def get_compile_config(self) -> dict:
        """Keras' ``get_compile_config()``: ``compile``'s arguments, serialized as a ``.keras``
        file keeps them (``{}`` before ``compile``)."""
        from . import model_config

        return model_config.get_compile_config(self)

    def compile_from_config(self, config: dict) -> None:
        """Keras' ``compile_from_config(config)``: ``compile`` with the arguments
        ``get_compile_config()`` gave."""
        from . import model_config

        model_config.compile_from_config(self, config)

    def reset_metrics(self) -> None:
        for m in self.metrics:
            m.reset_state()

    def get_metrics_result(self) -> dict:
        """Each metric's result by name (the compiled metrics' each under its own name)."""
        out: dict = {}
        for m in self.metrics:
            result = m.result()
            if isinstance(result, dict):
                out.update(result)
            else:
                out[m.name] = result
        return out

    # -- the steps -------------------------------------------------------------------------
    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        """The compiled loss plus every loss the model collected (``add_loss``, weight
        regularizers)."""
        del x, training
        state = self._compile_state("compute_loss")
        terms = []
        if state.loss is not None:
            terms.append(state.loss(y, y_pred, sample_weight))
        for extra in self.losses:
            terms.append(_math.reduce_sum(extra))
        if not terms:
            raise _errors.GradkitValueError("No loss to compute. Provide a `loss` argument in `compile()`.")
        total = terms[0]
        for term in terms[1:]:
            total = total + term
        return total

    def compiled_loss(self, y, y_pred, sample_weight=None, regularization_losses=None):
        """Keras 2's ``self.compiled_loss(y, y_pred)`` in a custom ``train_step``, kept by Keras 3
        (deprecated) as ``compute_loss(y=y, y_pred=y_pred, sample_weight=sample_weight)``."""
        warnings.warn(
            "`model.compiled_loss()` is deprecated. Instead, use `model.compute_loss(x, y, y_pred, sample_weight, "
            "training)`.",
            stacklevel=2,
        )
        return self.compute_loss(x=None, y=y, y_pred=y_pred, sample_weight=sample_weight)

    @property
    def compiled_metrics(self):
        """Keras 2's ``self.compiled_metrics.update_state(y, y_pred)``, kept by Keras 3 (deprecated):
        it updates every metric of ``self.metrics`` as Keras 3 does, a ``Mean`` (the loss tracker
        among them) with ``y_pred``, any other with ``(y, y_pred)``."""
        return _CompiledMetrics(self)

    def _compute_loss(self, x, y, y_pred, sample_weight, training):
        if _takes(self.compute_loss, "training"):
            return self.compute_loss(x, y, y_pred, sample_weight, training=training)
        return self.compute_loss(x, y, y_pred, sample_weight)

    def compute_metrics(self, x, y, y_pred, sample_weight=None) -> dict:
        del x
        state = self._compile_state("compute_metrics")
        if state.metrics is not None:
            state.metrics.update_state(y, y_pred, sample_weight)
        return self.get_metrics_result()

    def _track_loss(self, loss, x) -> None:
        first = next(a for a in jax.tree_util.tree_leaves(x, is_leaf=lambda t: isinstance(t, Tensor)))
        self._compile_state("fit").loss_tracker.update_state(loss, sample_weight=first.shape[0])

    def train_step(self, data) -> dict:
        """One step of Keras' training loop on a batch ``(x, y, sample_weight)``."""
        x, y, sample_weight = unpack_x_y_sample_weight(data)
        with _tape.GradientTape() as tape:
            y_pred = self._step_call(x, True)
            loss = self._compute_loss(x, y, y_pred, sample_weight, True)
            self._track_loss(loss, x)
            if self.optimizer is not None:
                loss = self.optimizer.scale_loss(loss)
        weights = self.trainable_weights
        if weights:
            gradients = tape.gradient(loss, weights)
            self.optimizer.apply_gradients(zip(gradients, weights))
        else:
            warnings.warn("The model does not have any trainable weights.", stacklevel=2)
        return self.compute_metrics(x, y, y_pred, sample_weight=sample_weight)

    def test_step(self, data) -> dict:
        x, y, sample_weight = unpack_x_y_sample_weight(data)
        y_pred = self._step_call(x, False)
        loss = self._compute_loss(x, y, y_pred, sample_weight, False)
        self._track_loss(loss, x)
        return self.compute_metrics(x, y, y_pred, sample_weight=sample_weight)

    def predict_step(self, data):
        x, _, _ = unpack_x_y_sample_weight(data)
        return self._step_call(x, False)

    def _step_call(self, x, training: bool):
        # As Keras' trainer: a call() without a `training` parameter is called without it, so the
        # layers inside see training=None and keep their defaults (a BatchNormalization uses its
        # moving statistics, a Dropout passes its inputs) in fit as in evaluate and predict.
        if type(self)._keras_training is _NO_TRAINING:
            return self(x)
        return self(x, training=training)

    def _compiled(self, step):
        return step if self.run_eagerly else _function.function(step)

    def make_train_function(self, force=False):
        if self.train_function is None or force:
            self.train_function = self._compiled(lambda data: self.train_step(data))
        return self.train_function

    def make_test_function(self, force=False):
        if self.test_function is None or force:
            self.test_function = self._compiled(lambda data: self.test_step(data))
        return self.test_function

    def make_predict_function(self, force=False):
        if self.predict_function is None or force:
            self.predict_function = self._compiled(lambda data: self.predict_step(data))
        return self.predict_function

    # -- the loops -------------------------------------------------------------------------
    def fit(
        self,
        x=None,
        y=None,
        batch_size=None,
        epochs=1,
        verbose="auto",
        callbacks=None,
        validation_split=0.0,
        validation_data=None,
        shuffle=True,
        class_weight=None,
        sample_weight=None,
        initial_epoch=0,
        steps_per_epoch=None,
        validation_steps=None,
        validation_batch_size=None,
        validation_freq=1,
    ):
        """Keras' ``fit``: arrays, a ``tf.data.Dataset``, a ``PyDataset`` or a generator of batches (see
        ``training_epochs.py``); returns the ``History`` callback."""
        self._compile_state("fit")
        if validation_split and validation_data is None:
            if is_batched(x):
                kind = "tf.data.Dataset" if hasattr(x, "element_spec") else type(x).__name__
                raise _errors.GradkitValueError(
                    f"Argument `validation_split` is only supported for tensors or NumPy arrays, not a {kind}: pass "
                    "validation_data instead (e.g. dataset.take(n) and dataset.skip(n))."
                )
            arrays = (as_arrays(x, "x"), as_arrays(y, "y"), as_arrays(sample_weight, "sample_weight"))
            (x, y, sample_weight), validation_data = train_validation_split(arrays, validation_split)
        epochs_of_data = EpochIterator(
            x, y, sample_weight, batch_size, steps_per_epoch, shuffle, class_weight, "the training data"
        )
        validation = None
        if validation_data is not None:
            val_x, val_y, val_sample_weight = unpack_x_y_sample_weight(validation_data)
            # One iterator for every epoch's validation, as Keras caches it: a generator given
            # with validation_steps continues where the last validation stopped.
            validation = EpochIterator(
                val_x,
                val_y,
                val_sample_weight,
                None if is_batched(val_x) else validation_batch_size or batch_size,
                validation_steps,
                False,
                None,
                "validation_data",
            )
        epochs_of_data.reset()
        callbacks = _callback_list(self, callbacks, verbose, epochs_of_data.num_batches, epochs, add_history=True)
        self.stop_training = False
        train = self.make_train_function()
        callbacks.on_train_begin()
        training_logs = None
        logs: dict = {}
        for epoch in range(initial_epoch, epochs):
            self.reset_metrics()
            callbacks.on_epoch_begin(epoch)
            for step, batch in epochs_of_data:
                callbacks.on_train_batch_begin(step)
                logs = train(batch)
                callbacks.on_train_batch_end(step, pythonify_logs(logs))
                if self.stop_training:
                    break
            epoch_logs = dict(self._metrics_result_or(logs))
            if validation is not None and _should_eval(epoch, validation_freq):
                val_logs = self._evaluate_epoch(validation, callbacks)
                epoch_logs.update({f"val_{name}": value for name, value in val_logs.items()})
            epoch_logs = pythonify_logs(epoch_logs)
            callbacks.on_epoch_end(epoch, epoch_logs)
            training_logs = epoch_logs
            if self.stop_training:
                break
        if epochs > 0:
            self.optimizer.finalize_variable_values(self.trainable_weights)
        callbacks.on_train_end(logs=training_logs)
        return self.history

    def evaluate(
        self,
        x=None,
        y=None,
        batch_size=None,
        verbose="auto",
        sample_weight=None,
        steps=None,
        callbacks=None,
        return_dict=False,
    ):
        """Keras' ``evaluate``: the loss and metrics over the data (a float, a list in
        ``metrics_names`` order, or with ``return_dict`` a dict)."""
        self._compile_state("evaluate")
        data = EpochIterator(x, y, sample_weight, batch_size, steps, False, None, "the evaluation data")
        logs = self._evaluate_epoch(data, _callback_list(self, callbacks, verbose, data.num_batches))
        return logs if return_dict else self._flatten_in_order(logs)

    def _evaluate_epoch(self, data: EpochIterator, callbacks) -> dict:
        data.reset()
        test = self.make_test_function()
        callbacks.on_test_begin()
        logs: dict = {}
        self.reset_metrics()
        for step, batch in data:
            callbacks.on_test_batch_begin(step)
            logs = test(batch)
            callbacks.on_test_batch_end(step, pythonify_logs(logs))
        logs = pythonify_logs(self._metrics_result_or(logs))
        callbacks.on_test_end(logs)
        return logs

    def predict(self, x, batch_size=None, verbose="auto", steps=None, callbacks=None):
        """The model's outputs (``training=False``) as NumPy arrays, computed a batch at a time."""
        data = EpochIterator(x, None, None, batch_size, steps, False, None, "x")
        callbacks = _callback_list(self, callbacks, verbose, data.num_batches)
        step_fn = self.make_predict_function()
        callbacks.on_predict_begin()
        outputs = []
        for step, batch in data:
            callbacks.on_predict_batch_begin(step)
            out = _to_numpy(step_fn(batch))
            outputs.append(out)
            callbacks.on_predict_batch_end(step, {"outputs": out})
        callbacks.on_predict_end()
        if not outputs:
            raise _errors.GradkitValueError(
                "tf.keras.Model.predict got no batches (an empty or exhausted input); pass data with at least one batch."
            )
        joined = jax.tree_util.tree_map(lambda *parts: np.concatenate(parts, axis=0), *outputs)
        return key_order.in_order(key_order.key_orders(outputs[0]), joined)

    def train_on_batch(self, x, y=None, sample_weight=None, class_weight=None, return_dict=False):
        self._compile_state("train_on_batch")
        x, y, sample_weight = as_arrays(x, "x"), as_arrays(y, "y"), as_arrays(sample_weight, "sample_weight")
        sample_weight = weights_with_classes(y, sample_weight, class_weight)
        train = self.make_train_function()
        self.reset_metrics()
        logs = pythonify_logs(train((x, y, sample_weight)))
        return logs if return_dict else self._flatten_in_order(logs)

    def test_on_batch(self, x, y=None, sample_weight=None, return_dict=False):
        self._compile_state("test_on_batch")
        x, y, sample_weight = as_arrays(x, "x"), as_arrays(y, "y"), as_arrays(sample_weight, "sample_weight")
        test = self.make_test_function()
        self.reset_metrics()
        logs = pythonify_logs(test((x, y, sample_weight)))
        return logs if return_dict else self._flatten_in_order(logs)

    def predict_on_batch(self, x):
        return _to_numpy(self.make_predict_function()((as_arrays(x, "x"),)))

    # -- helpers ---------------------------------------------------------------------------
    def _metrics_result_or(self, logs):
        """The metrics' results, where the step's logs have the same names at their top level
        (a custom step returning other names, or the compiled metrics' results nested under
        ``compile_metrics``, keeps its own last logs, as in Keras)."""
        results = self.get_metrics_result()
        if isinstance(logs, dict) and set(logs) == set(results):
            return results
        return logs

    def _flatten_in_order(self, logs: dict):
        names = []
        for m in self.metrics:
            names += [sub.name for sub in m.metrics] if isinstance(m, CompileMetrics) else [m.name]
        out = [logs[name] for name in names if name in logs]
        out += [logs[key] for key in sorted(logs) if key not in names]
        return out[0] if len(out) == 1 else out


def _callback_list(model, callbacks, verbose, steps: int, epochs: int = 1, add_history: bool = False):
    """The callbacks as one ``CallbackList`` with Keras' defaults (a progress bar unless
    ``verbose=0``, ``History`` for ``fit``); a ``CallbackList`` given is used as it is."""
    if isinstance(callbacks, callbacks_module.CallbackList):
        return callbacks
    verbose = 1 if verbose == "auto" else verbose
    return callbacks_module.CallbackList(
        callbacks,
        add_history=add_history,
        add_progbar=verbose != 0,
        verbose=verbose,
        epochs=epochs,
        steps=steps,
        model=model,
    )


def _to_numpy(outputs):
    arrays = jax.tree_util.tree_map(
        lambda t: np.asarray(t.numpy() if isinstance(t, Tensor) else t),
        outputs,
        is_leaf=lambda t: isinstance(t, Tensor),
    )
    return key_order.in_order(key_order.key_orders(outputs), arrays)  # a dict output as the model gives it


def _should_eval(epoch: int, validation_freq) -> bool:
    epoch = epoch + 1  # one-indexed, as users count epochs
    if isinstance(validation_freq, int):
        return epoch % validation_freq == 0
    if isinstance(validation_freq, list):
        return epoch in validation_freq
    raise _errors.GradkitValueError(
        f"Expected `validation_freq` to be a list or int. Received: validation_freq={validation_freq} of the type "
        f"{type(validation_freq)}."
    )
