"""A compiled model's optimizer state in a ``.keras`` archive: the ``optimizer/vars`` group of
its ``model.weights.h5``, in Keras 3's order.

Keras writes the optimizer's variables as datasets ``0``, ``1``, ...: ``iterations`` (int64),
the learning rate's variable (unless it is a schedule), then what its ``build`` made for the
model's trainable weights. gradkit writes and reads that state for the optimizers whose state
lines up with Keras' variable for variable: SGD (with or without momentum) and Adam/AdamW
(without ``amsgrad``): per weight, Keras' momentum (and velocity), without ``use_ema`` or
``gradient_accumulation_steps``. Another optimizer is saved before its first step only (its
state is then ``iterations`` and the rate, as Keras writes it too); after steps, saving refuses.
"""

from __future__ import annotations

import warnings

import numpy as np

from gradkit import _errors
from gradkit._core.variable import Variable

from .optimizers import SGD, Adam

GROUP = "optimizer"


def _slots_line_up(optimizer) -> bool:
    if not isinstance(optimizer, (SGD, Adam)) or getattr(optimizer, "amsgrad", False):
        return False
    return not (optimizer.use_ema or optimizer.gradient_accumulation_steps or optimizer._shared is not None)


def _head(optimizer) -> list:
    head = [optimizer._iterations]
    if isinstance(optimizer._learning_rate, Variable):
        head.append(optimizer._learning_rate)
    return head


def keras_variables(optimizer, trainable_variables):
    """The optimizer's variables in Keras' order for a model with these trainable weights, or
    None when gradkit cannot lay them out as Keras does."""
    if not optimizer.built:
        return _head(optimizer)
    if not _slots_line_up(optimizer):
        return None
    out = _head(optimizer)
    for variable in trainable_variables:
        slots, _ = optimizer._slot_variables(variable)
        out.extend(slots)
    return out


def save(optimizer, trainable_variables, h5file) -> None:
    """Write the ``optimizer/vars`` group into the open h5py file."""
    variables = keras_variables(optimizer, trainable_variables)
    if variables is None:
        raise _errors.GradkitNotImplementedError(
            f"model.save: the optimizer {type(optimizer).__name__} ('{optimizer.name}') has taken steps, and gradkit "
            "writes the state of SGD and Adam/AdamW (without amsgrad, use_ema, gradient_accumulation_steps) in "
            "Keras' layout only. Save the weights with model.save_weights('model.weights.h5') and the training "
            "state with tf.train.Checkpoint(model=model, optimizer=model.optimizer).save(prefix)."
        )
    group = h5file.require_group(GROUP).create_group("vars")
    group.attrs["name"] = optimizer.name
    for i, v in enumerate(variables):
        value = np.asarray(v.numpy())
        group[str(i)] = value.astype(np.int64) if v is optimizer._iterations else value


def load(optimizer, trainable_variables, h5file) -> None:
    """Read the ``optimizer/vars`` group into the (built) optimizer; Keras' warning, and nothing
    read, when its count differs from the optimizer's."""
    group = h5file[GROUP]["vars"] if GROUP in h5file and "vars" in h5file[GROUP] else {}
    variables = keras_variables(optimizer, trainable_variables)
    if variables is None:
        if len(group) > len(_head(optimizer)):
            warnings.warn(
                f"Skipping variable loading for optimizer '{optimizer.name}': gradkit reads the saved state of SGD "
                f"and Adam/AdamW (without amsgrad) only, not {type(optimizer).__name__}'s; it starts afresh.",
                stacklevel=3,
            )
            return
        variables = _head(optimizer)
    if len(group) != len(variables):
        warnings.warn(
            f"Skipping variable loading for optimizer '{optimizer.name}', because it has {len(variables)} variables "
            f"whereas the saved optimizer has {len(group)} variables. ",
            stacklevel=3,
        )
        return
    values = []
    for i, v in enumerate(variables):
        value = np.asarray(group[str(i)][()])
        if tuple(value.shape) != tuple(v.shape):
            raise _errors.GradkitValueError(
                f"The saved optimizer state holds an array of shape {tuple(value.shape)} where '{optimizer.name}' "
                f"keeps {v.name!r} of shape {tuple(v.shape)}: the model is not the one saved."
            )
        values.append(value.astype(np.dtype(v.dtype)))
    for v, value in zip(variables, values):
        v.assign(value)
