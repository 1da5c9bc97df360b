"""``tf.keras.constraints``: Keras 3's weight projections, each one recorded op of the weight.

A constraint maps a weight to its projection (``NonNeg``: ``max(w, 0)``; the norm constraints
rescale slices of ``w`` along ``axis``); optimizers apply a Variable's constraint after each
update, as Keras does. Norms have derivative 0 at an all-zero slice (its projection is zero).

>>> import gradkit.tf as tf
>>> tf.keras.constraints.NonNeg()(tf.constant([-1.0, 2.0])).numpy().tolist()
[0.0, 2.0]
>>> tf.keras.constraints.MaxNorm(2.0).get_config()
{'max_value': 2.0, 'axis': 0}
"""

from __future__ import annotations

import jax.numpy as jnp

from .._convert import call
from . import object_registry
from .optimizer_rules import tf_maximum

EPSILON = 1e-7  # keras.backend.epsilon()


def _axis(axis):
    return tuple(axis) if isinstance(axis, (list, tuple)) else axis


def _floating(w):
    # Keras' ops.sqrt makes the norm of an integer weight float32, and the result with it.
    return w if jnp.issubdtype(w.dtype, jnp.inexact) else w.astype(jnp.float32)


def _norms(w, axis):
    square_sum = jnp.sum(jnp.square(w), axis=axis, keepdims=True)
    positive = square_sum > 0
    return jnp.where(positive, jnp.sqrt(jnp.where(positive, square_sum, 1)), 0)


def _clip(x, low, high):
    # TensorFlow's clip_by_value passes the gradient at the bounds too.
    return jnp.where(x < low, low, jnp.where(x > high, high, x)).astype(x.dtype)


def _max_norm(w, max_value, axis):
    w = _floating(w)
    norms = _norms(w, axis)
    return w * (_clip(norms, 0, max_value) / (EPSILON + norms))


def _min_max_norm(w, min_value, max_value, rate, axis):
    w = _floating(w)
    norms = _norms(w, axis)
    desired = rate * _clip(norms, min_value, max_value) + (1 - rate) * norms
    return w * (desired / (EPSILON + norms))


def _unit_norm(w, axis):
    w = _floating(w)
    return w / (EPSILON + _norms(w, axis))


def _non_neg(w):
    return tf_maximum(w, jnp.zeros((), w.dtype))


class Constraint:
    """``tf.keras.constraints.Constraint``: the base class; returns the weight unchanged."""

    def __call__(self, w):
        return w

    def get_config(self):
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class MaxNorm(Constraint):
    """``tf.keras.constraints.MaxNorm(max_value=2, axis=0)``: slices along ``axis`` rescaled to
    a norm of at most ``max_value``."""

    def __init__(self, max_value=2, axis=0):
        self.max_value, self.axis = max_value, axis

    def __call__(self, w):
        return call(_max_norm, w, max_value=float(self.max_value), axis=_axis(self.axis))

    def get_config(self):
        return {"max_value": self.max_value, "axis": self.axis}


class NonNeg(Constraint):
    """``tf.keras.constraints.NonNeg()``: ``max(w, 0)``."""

    def __call__(self, w):
        return call(_non_neg, w)


class UnitNorm(Constraint):
    """``tf.keras.constraints.UnitNorm(axis=0)``: slices along ``axis`` rescaled to norm 1."""

    def __init__(self, axis=0):
        self.axis = axis

    def __call__(self, w):
        return call(_unit_norm, w, axis=_axis(self.axis))

    def get_config(self):
        return {"axis": self.axis}


class MinMaxNorm(Constraint):
    """``tf.keras.constraints.MinMaxNorm(min_value=0.0, max_value=1.0, rate=1.0, axis=0)``: slices
    along ``axis`` rescaled toward a norm in ``[min_value, max_value]`` at ``rate``."""

    def __init__(self, min_value=0.0, max_value=1.0, rate=1.0, axis=0):
        self.min_value, self.max_value, self.rate, self.axis = min_value, max_value, rate, axis

    def __call__(self, w):
        return call(
            _min_max_norm,
            w,
            min_value=float(self.min_value),
            max_value=float(self.max_value),
            rate=float(self.rate),
            axis=_axis(self.axis),
        )

    def get_config(self):
        return {"min_value": self.min_value, "max_value": self.max_value, "rate": self.rate, "axis": self.axis}


max_norm, min_max_norm, non_neg, unit_norm = MaxNorm, MinMaxNorm, NonNeg, UnitNorm

# Keras' ALL_OBJECTS_DICT.
OBJECTS = object_registry.table((Constraint, MaxNorm, MinMaxNorm, NonNeg, UnitNorm))


def serialize(constraint):
    """``tf.keras.constraints.serialize``, as Keras writes it."""
    return object_registry.serialize(constraint, Constraint, "keras.constraints", "constraints")


def deserialize(config, custom_objects=None):
    """``tf.keras.constraints.deserialize``: the constraint a name or ``serialize``'s dict describes."""
    return object_registry.deserialize(config, OBJECTS, custom_objects, "constraints")


def get(identifier):
    """``tf.keras.constraints.get``: from a name, a ``serialize`` dict, or a callable."""
    return object_registry.get(identifier, OBJECTS, "constraints", "constraint")
