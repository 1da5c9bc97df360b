"""Keras 3's weight regularizers, weight constraints and activity regularizers on layers.

A weight made with ``add_weight(regularizer=..., constraint=...)`` (a layer's
``kernel_regularizer``, ``bias_constraint``, ...) carries them, as Keras' variables do:
``variable.regularizer`` and ``variable.constraint``. ``layer.losses`` lists, after the
``add_loss`` terms, each trainable weight's penalty computed from its current value when
``losses`` is read (so under a tape it is differentiable, and after an optimizer step it is the
new one). The optimizers project a weight by its constraint after every step. A layer's
``activity_regularizer`` adds, at each call, the penalty of each output divided by its batch
size (its first dimension) to ``losses``, as Keras 3 does.

>>> import gradkit.tf as tf
>>> layer = tf.keras.layers.Dense(2, kernel_initializer="ones", kernel_regularizer=tf.keras.regularizers.L2(0.5))
>>> _ = layer(tf.ones([4, 3]))
>>> [float(x) for x in layer.losses]
[3.0]
"""

from __future__ import annotations

import jax.numpy as jnp

from gradkit._tape.tensor import Tensor

from .._convert import call
from . import constraints, regularizers


def weight_options(regularizer, constraint) -> tuple:
    """``add_weight``'s regularizer and constraint as Keras takes them (names, dicts, callables)."""
    return regularizers.get(regularizer), constraints.get(constraint)


def attach(variable, regularizer, constraint) -> None:
    """Keep the weight's regularizer and constraint on it, where Keras keeps them."""
    variable.__dict__["regularizer"] = regularizer
    variable.__dict__["_constraint"] = constraint


def regularization_losses(trainable_weights) -> list:
    """Each trainable weight's penalty, from its current value, in the weights' order."""
    found = []
    for variable in trainable_weights:
        regularizer = getattr(variable, "__dict__", {}).get("regularizer")
        if regularizer is not None:
            found.append(regularizer(variable))
    return found


def _per_example(loss, batch_size):
    # Keras' ops.divide_no_nan: a batch of size 0 gives 0.
    size = jnp.asarray(batch_size, loss.dtype)
    return jnp.where(size == 0, jnp.zeros_like(loss), loss / jnp.where(size == 0, 1, size))


def activity_losses(regularizer, outputs) -> list:
    """The activity penalties of a call's outputs: each tensor's, divided by its batch size."""
    flat = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
    found = []
    for output in flat:
        if not isinstance(output, Tensor):
            continue
        loss = regularizer(output)
        if len(output.shape) > 0:
            loss = call(_per_example, loss, batch_size=int(output.shape[0]))
        found.append(loss)
    return found


def keep_options(layer, **options) -> None:
    """A layer's ``kernel_regularizer=``, ``bias_constraint=``, ... as Keras keeps them (made by
    ``regularizers.get``/``constraints.get``), read when its weights are made and by ``get_config``."""
    for key, value in options.items():
        setattr(layer, key, (regularizers.get if key.endswith("_regularizer") else constraints.get)(value))


def attach_to_weights(layer, *names, recurrent_kernel="recurrent") -> None:
    """Give each built weight ``name`` (``"kernel"``, ``"bias"``) the layer's ``name_regularizer``
    and ``name_constraint`` (the recurrent kernel's options are ``recurrent_regularizer``, ...)."""
    prefixes = {"recurrent_kernel": recurrent_kernel}
    for name in names:
        variable = getattr(layer, name, None)
        if variable is not None:
            prefix = prefixes.get(name, name)
            attach(variable, getattr(layer, f"{prefix}_regularizer"), getattr(layer, f"{prefix}_constraint"))
