"""``tf.VariableAggregation``, ``tf.VariableSynchronization`` and ``tf.AggregationMethod``, and
the checks of ``tf.Variable(..., synchronization=, aggregation=)``.

They tell TensorFlow's distribution strategies how to combine a Variable's replicas and its
graph builder how to add up gradients. gradkit keeps one copy of each Variable and adds
gradients inside XLA, so they change no result: a Variable reports what it was given, as
TensorFlow's does (an ON_READ Variable is not trainable unless asked, as in TensorFlow).

>>> import gradkit.tf as tf
>>> v = tf.Variable(1.0, aggregation=tf.VariableAggregation.MEAN)
>>> v.aggregation, v.synchronization
(<VariableAggregationV2.MEAN: 2>, <VariableSynchronization.AUTO: 0>)
"""

from __future__ import annotations

import enum

from gradkit import _errors


class VariableAggregationV2(enum.Enum):
    """``tf.VariableAggregation``: how a distributed Variable's replicas combine their updates."""

    NONE = 0
    SUM = 1
    MEAN = 2
    ONLY_FIRST_REPLICA = 3


class VariableSynchronization(enum.Enum):
    """``tf.VariableSynchronization``: when a distributed Variable's replicas are brought together."""

    AUTO = 0
    NONE = 1
    ON_WRITE = 2
    ON_READ = 3


class AggregationMethod:
    """``tf.AggregationMethod``: how TensorFlow's graph builder adds up the gradients that reach one
    tensor. gradkit's gradients are added inside XLA, the same sum whichever is chosen."""

    ADD_N = 0
    DEFAULT = ADD_N
    EXPERIMENTAL_TREE = 1
    EXPERIMENTAL_ACCUMULATE_N = 2


def _option(enum_type, value, what: str, name):
    if isinstance(value, enum_type):
        return value
    try:
        return enum_type(value)
    except (ValueError, TypeError):
        choices = ", ".join(f"tf.{enum_type.__name__.removesuffix('V2')}.{m.name}" for m in enum_type)
        raise _errors.GradkitValueError(
            f"Invalid variable {what} mode: {value!r} for variable: {name}; TensorFlow refuses it too. "
            f"Pass one of {choices} (or its number)."
        ) from None


def aggregation_option(aggregation, name) -> VariableAggregationV2:
    """``aggregation=`` as TensorFlow reads it: None is NONE, a member or its number is taken."""
    if aggregation is None:
        return VariableAggregationV2.NONE
    return _option(VariableAggregationV2, aggregation, "aggregation", name)


def synchronization_option(synchronization, name) -> VariableSynchronization:
    """``synchronization=`` as TensorFlow reads it: None is AUTO, a member or its number is taken."""
    if synchronization is None:
        return VariableSynchronization.AUTO
    return _option(VariableSynchronization, synchronization, "synchronization", name)
