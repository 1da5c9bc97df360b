"""Keras 3's stateless API: ``layer.stateless_call``, ``optimizer.stateless_apply`` and
``metric.stateless_update_state`` / ``stateless_result`` / ``stateless_reset_state``, each run on
state given as values and returning the new values, the way a JAX-style training loop (or a
MAML step on "fast weights") drives a model.

The Variables are set to the given values for the call and set back after it, whatever
happens (``values_set``). A gradient flows to the values given (assignment is differentiable in
gradkit), and the layer's, optimizer's or metric's Variables are as they were. A Dropout or RNN
layer's random seed state is not among a layer's Variables (Keras counts it among
``non_trainable_variables``): its draws advance the layer's own generator.

>>> import numpy as np, gradkit.tf as tf
>>> layer = tf.keras.layers.Dense(1, use_bias=False, kernel_initializer="ones")
>>> x = tf.constant([[1.0, 2.0]])
>>> _ = layer(x)
>>> kernel = tf.constant([[3.0], [4.0]])
>>> with tf.GradientTape() as tape:
...     tape.watch(kernel)
...     y, _ = layer.stateless_call([kernel], [], x)
>>> float(y[0, 0]), tape.gradient(y, kernel).numpy().ravel().tolist(), layer.kernel.numpy().ravel().tolist()
(11.0, [1.0, 2.0], [1.0, 1.0])
"""

from __future__ import annotations

import contextlib

from gradkit import _errors

from .._convert import wrap
from .layer_losses import LayerLosses


@contextlib.contextmanager
def values_set(variables, values):
    """``variables`` hold ``values`` inside the block, and their own values again after it."""
    before = [v.value for v in variables]
    try:
        for variable, value in zip(variables, values):
            variable.assign(value)
        yield
    finally:
        for variable, value in zip(variables, before):
            variable.assign(value)


def _check_lengths(given, own, argument, owner, what=None) -> None:
    if len(given) != len(own):
        raise _errors.GradkitValueError(
            f"Argument `{argument}` must be a list of tensors corresponding 1:1 to {owner}.{what or argument}. "
            f"Received list with length {len(given)}, but expected {len(own)} variables (Keras raises the same "
            "ValueError)."
        )


def _values(variables) -> list:
    return [wrap(v.value) for v in variables]


def stateless_call(layer, trainable_variables, non_trainable_variables, args, kwargs, return_losses=False):
    """``Layer.stateless_call``; see the module docstring."""
    if not layer.built:
        raise _errors.GradkitValueError(
            f"To call stateless_call, {type(layer).__name__} must be built (its variables must have been "
            "created already), as in Keras. Build it by calling it on some data first."
        )
    owner = f"{type(layer).__name__}()"
    own_trainable, own_non_trainable = list(layer.trainable_variables), list(layer.non_trainable_variables)
    _check_lengths(trainable_variables, own_trainable, "trainable_variables", owner)
    _check_lengths(non_trainable_variables, own_non_trainable, "non_trainable_variables", owner)
    holders = [layer, *(sub for sub in layer._keras_flatten_layers() if isinstance(sub, LayerLosses))]
    held_losses = [holder.__dict__.pop("_keras_losses", None) for holder in holders]
    try:
        with values_set(own_trainable + own_non_trainable, list(trainable_variables) + list(non_trainable_variables)):
            outputs = layer.call(*args, **kwargs)
            losses = list(layer.losses) if return_losses else None
            updated = _values(own_non_trainable)
    finally:
        for holder, kept in zip(holders, held_losses):
            holder.__dict__.pop("_keras_losses", None)
            if kept is not None:
                holder.__dict__["_keras_losses"] = kept
    if return_losses:
        return outputs, updated, losses
    return outputs, updated


def stateless_apply(optimizer, optimizer_variables, grads, trainable_variables):
    """``Optimizer.stateless_apply``: ``(new_trainable_values, new_optimizer_values)``."""
    built = [ref() for ref in getattr(optimizer, "_built", ())]
    if not optimizer.built or not built or any(v is None for v in built):
        raise _errors.GradkitValueError(
            f"To call `stateless_apply`, {type(optimizer).__name__} must be built (its variables must have been "
            "created), as in Keras. Build it via `optimizer.build(trainable_variables)`."
        )
    own = optimizer.variables
    _check_lengths(optimizer_variables, own, "optimizer_variables", f"{type(optimizer).__name__}()", "variables")
    _check_lengths(trainable_variables, built, "trainable_variables", "the Variables the optimizer was built with")
    with values_set(built + own, list(trainable_variables) + list(optimizer_variables)):
        optimizer.apply(grads)
        return _values(built), _values(own)


def stateless_update_state(metric, metric_variables, args, kwargs):
    """``Metric.stateless_update_state``: the metric's new state values."""
    own = metric.variables
    _check_lengths(metric_variables, own, "metric_variables", f"{type(metric).__name__}()", "variables")
    with values_set(own, metric_variables):
        metric.update_state(*args, **kwargs)
        return _values(own)


def stateless_result(metric, metric_variables):
    """``Metric.stateless_result``: the result of the state given."""
    own = metric.variables
    _check_lengths(metric_variables, own, "metric_variables", f"{type(metric).__name__}()", "variables")
    with values_set(own, metric_variables):
        return wrap(metric.result())


def stateless_reset_state(metric):
    """``Metric.stateless_reset_state``: the values ``reset_state`` would give the state."""
    own = metric.variables
    with values_set(own, [v.value for v in own]):
        metric.reset_state()
        return _values(own)
