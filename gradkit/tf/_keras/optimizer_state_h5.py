"""A compiled model's optimizer state in a ``.keras`` archive: the ``optimizer/vars`` group of
its ``model.weights.h5``, in Keras 3's order.

Keras writes the optimizer's variables as datasets ``0``, ``1``, ...: ``iterations`` (int64),
the learning rate's variable (unless it is a schedule), with ``use_ema`` the moving average of
each trainable weight, with ``gradient_accumulation_steps`` each weight's gradient accumulator,
then what the optimizer's ``build`` made for the weights, and last Nadam's ``u_product``. Keras'
``build`` makes the slots by kinds: each call of ``add_optimizer_variables`` interleaves its
kinds weight by weight (Adam's momentum and velocity of the first weight, then of the second,
...), and a later call appends its own run (Adam's ``velocity_hat``, RMSprop's ``momentum``
and ``average_gradient``). gradkit keeps each weight's slots in Keras' kind order, so the
archive's state is gradkit's, regrouped.

gradkit writes and reads the state of SGD, Adam, AdamW, RMSprop, Adagrad, Adadelta, Adamax,
Nadam, Ftrl, Lion, Lamb, Adafactor, Muon and ScheduleFreeAdamW (any options), and of an
optimizer of your own (the variables its ``build`` made, in that order). An optimizer
wrapping others (LossScaleOptimizer, MultiOptimizer) is saved before its first step only (its
state is then ``iterations`` and the rate, as Keras writes it too); after steps, saving refuses.
"""

from __future__ import annotations

import warnings

import numpy as np

from gradkit import _errors
from gradkit._core.variable import Variable

from .optimizer_muon import Muon
from .optimizer_schedule_free import ScheduleFreeAdamW
from .optimizers import SGD, Adagrad, Adam, Adamax, Nadam, RMSprop
from .optimizers_more import Adadelta, Adafactor, Ftrl, Lamb, Lion

GROUP = "optimizer"
_ALL = None  # a run holding every slot of each weight (Muon's count differs weight by weight)


def _slot_runs(optimizer):
    """The number of slots of each weight in each of Keras' ``add_optimizer_variables`` runs, in
    order (``_ALL``: all of them), or None for an optimizer whose layout gradkit does not know."""
    if isinstance(optimizer, Adam):
        return [2, 1] if optimizer.amsgrad else [2]
    if isinstance(optimizer, RMSprop):
        return [1] + [1] * (optimizer.momentum > 0) + [1] * bool(optimizer.centered)
    if isinstance(optimizer, (SGD, Adagrad, Adadelta, Adamax, Nadam, Ftrl, Lion, Lamb, Adafactor)):
        return [_ALL]
    if isinstance(optimizer, (Muon, ScheduleFreeAdamW)):
        return [_ALL]
    return None


def _head(optimizer) -> list:
    head = [optimizer._iterations]
    if isinstance(optimizer._learning_rate, Variable):
        head.append(optimizer._learning_rate)
    return head


def _per_weight(table: dict, trainable_variables):
    """Each weight's entry of ``table`` (``id`` -> (a weak reference, the Variable)), or None when
    one is missing."""
    out = []
    for variable in trainable_variables:
        hit = table.get(id(variable))
        if hit is None or hit[0]() is not variable:
            return None
        out.append(hit[1])
    return out


def _slots(optimizer, trainable_variables, runs):
    per_weight = []
    for variable in trainable_variables:
        hit = optimizer._slots.get(id(variable))
        if hit is None or hit[0]() is not variable:
            return None
        per_weight.append(hit[1])
    if _ALL not in runs and any(len(slots) != sum(runs) for slots in per_weight):
        return None
    out, start = [], 0
    for size in runs:
        for slots in per_weight:
            out.extend(slots if size is _ALL else slots[start : start + size])
        start += 0 if size is _ALL else size
    return out


def keras_variables(optimizer, trainable_variables):
    """The optimizer's variables in Keras' order for a model with these trainable weights, or
    None when gradkit cannot lay them out as Keras does."""
    if getattr(optimizer, "_custom_update", False):
        # An optimizer of your own: Keras writes the variables its build made, in the order made.
        return _head(optimizer) + (list(optimizer.__dict__.get("_custom_slots", ())) if optimizer.built else [])
    runs = _slot_runs(optimizer)
    if runs is None:
        # Keras writes a wrapper's own variables and then its inner optimizers' ones: laid out
        # here only while it has none of its own yet.
        unused = not optimizer.built and int(np.asarray(optimizer.iterations.numpy())) == 0
        return _head(optimizer) if unused else None
    if not optimizer.built:
        return _head(optimizer)
    trainable_variables = list(trainable_variables)
    out = _head(optimizer)
    if optimizer.use_ema:
        averages = _per_weight(optimizer._averages, trainable_variables)
        if averages is None:
            return None
        out.extend(averages)
    if optimizer.gradient_accumulation_steps:
        accumulators = _per_weight(optimizer._accumulators, trainable_variables)
        if accumulators is None:
            return None
        out.extend(accumulators)
    slots = _slots(optimizer, trainable_variables, runs)
    if slots is None:
        return None
    out.extend(slots)
    if optimizer._shared is not None:
        out.append(optimizer._shared)
    return out


def save(optimizer, trainable_variables, h5file) -> None:
    """Write the ``optimizer/vars`` group into the open h5py file."""
    variables = keras_variables(optimizer, trainable_variables)
    if variables is None:
        raise _errors.GradkitNotImplementedError(
            f"model.save: the optimizer {type(optimizer).__name__} ('{optimizer.name}') has taken steps, and gradkit "
            "writes the state of Keras' single optimizers in Keras' layout, not of one wrapping others (nor of "
            "Variables it updates outside model.trainable_variables). Save the weights with model.save_weights('model.weights.h5') and the training "
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
                f"Skipping variable loading for optimizer '{optimizer.name}': gradkit reads the saved state of "
                f"Keras' single optimizers, not {type(optimizer).__name__}'s; it starts afresh.",
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
