"""``layer.stateless_call(trainable_variables, non_trainable_variables, *args)``: Keras 3's call
with weights given as values, the way to run a model on "fast weights" (MAML) or from a
functional training loop.

The layer's Variables are set to the given values for the call and set back after it, whatever
happens. A gradient flows to the values given (assignment is differentiable in gradkit), and the
layer's Variables are as they were: their values and the losses they hold.

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

from gradkit import _errors

from .._convert import wrap
from .layer_losses import LayerLosses


def stateless_call(layer, trainable_variables, non_trainable_variables, args, kwargs, return_losses=False):
    """See the module docstring; ``Layer.stateless_call`` calls it."""
    if not layer.built:
        raise _errors.GradkitValueError(
            f"To call stateless_call, {type(layer).__name__} must be built (its variables must have been "
            "created already), as in Keras. Build it by calling it on some data first."
        )
    own_trainable, own_non_trainable = list(layer.trainable_variables), list(layer.non_trainable_variables)
    for given, own, what in (
        (trainable_variables, own_trainable, "trainable_variables"),
        (non_trainable_variables, own_non_trainable, "non_trainable_variables"),
    ):
        if len(given) != len(own):
            raise _errors.GradkitValueError(
                f"Argument `{what}` must be a list of tensors corresponding 1:1 to {type(layer).__name__}()."
                f"{what}. Received list with length {len(given)}, but expected {len(own)} variables "
                "(Keras raises the same ValueError)."
            )
    variables = own_trainable + own_non_trainable
    before = [v.value for v in variables]
    holders = [layer, *(sub for sub in layer._keras_flatten_layers() if isinstance(sub, LayerLosses))]
    held_losses = [holder.__dict__.pop("_keras_losses", None) for holder in holders]
    try:
        for variable, value in zip(variables, list(trainable_variables) + list(non_trainable_variables)):
            variable.assign(value)
        outputs = layer.call(*args, **kwargs)
        losses = list(layer.losses) if return_losses else None
        updated = [wrap(v.value) for v in own_non_trainable]
    finally:
        for variable, value in zip(variables, before):
            variable.assign(value)
        for holder, kept in zip(holders, held_losses):
            holder.__dict__.pop("_keras_losses", None)
            if kept is not None:
                holder.__dict__["_keras_losses"] = kept
    if return_losses:
        return outputs, updated, losses
    return outputs, updated
