"""``tf.keras.regularizers``: Keras 3's weight penalties, each one recorded op of its input.

A regularizer is called on a weight (or a layer's output) and returns a scalar penalty in the
input's dtype. The factors are cast to that dtype as Keras casts them (through float32), and
``L1``/``OrthogonalRegularizer`` keep their factor as a float32 tensor, so their configs read
it back rounded to float32, as in Keras.

>>> import gradkit.tf as tf
>>> float(tf.keras.regularizers.L2(2.0)(tf.ones((5, 5))))
50.0
>>> tf.keras.regularizers.L1(0.1).get_config()
{'l1': 0.10000000149011612}
"""

from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np

from gradkit import _errors
from gradkit._tape.tensor import Tensor

from .._convert import call, convert
from .._math import _tf_abs
from . import object_registry
from .optimizer_rules import keras_cast, tf_minimum

EPSILON = 1e-7  # keras.backend.epsilon()


def _validate_float(value, name: str) -> float:
    """Keras' ``validate_float_arg``: a finite, non-negative int or float."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (float, int))
        or math.isinf(value)
        or math.isnan(value)
        or value < 0
    ):
        raise _errors.GradkitValueError(
            f"Invalid value for argument {name}: expected a non-negative float. Received: {name}={value!r} (Keras "
            f"raises ValueError too). Pass a number >= 0, e.g. {name}=0.01."
        )
    return float(value)


def _penalty(x, l1, l2):
    """``l1 * sum(|x|) + l2 * sum(x**2)``, each term only where its factor is not 0, as Keras adds them."""
    regularization = jnp.zeros((), x.dtype)
    if l1 != 0.0:
        regularization = regularization + _l1(x, l1)
    if l2 != 0.0:
        regularization = regularization + _l2(x, l2)
    return regularization


def _l1(x, l1):
    return keras_cast(l1, x.dtype) * jnp.sum(_tf_abs(x))


def _l2(x, l2):
    return keras_cast(l2, x.dtype) * jnp.sum(jnp.square(x))


def _normalize(x, axis):
    """Keras' ``ops.normalize``: ``x * min(rsqrt(sum(x**2)), 1 / epsilon)``; a zero vector stays
    zero, with derivative 0 from its norm (TensorFlow's rsqrt gradient for a zero upstream)."""
    square_sum = jnp.sum(jnp.square(x), axis=axis, keepdims=True)
    positive = square_sum > 0
    inverse = jnp.where(positive, 1 / jnp.sqrt(jnp.where(positive, square_sum, 1)), jnp.inf)
    return x * tf_minimum(inverse, jnp.asarray(1.0 / EPSILON, x.dtype))


def _orthogonal(x, factor, rows):
    if rows:
        x = _normalize(x, 1)
        product, size = x @ x.T, x.shape[0]
    else:
        x = _normalize(x, 0)
        product, size = x.T @ x, x.shape[1]
    off_diagonal = product * (1.0 - jnp.eye(size, dtype=x.dtype))
    pairs = size * (size - 1.0) / 2.0
    return jnp.asarray(factor, jnp.float32) * 0.5 * jnp.sum(_tf_abs(off_diagonal)) / pairs


class Regularizer:
    """``tf.keras.regularizers.Regularizer``: the base class; a penalty of 0.0 until a subclass
    defines ``__call__``."""

    def __call__(self, x):
        return 0.0

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def get_config(self):
        raise _errors.GradkitNotImplementedError(
            f"{self} does not implement get_config() (as in Keras): a Regularizer subclass that is serialized "
            "defines get_config() returning its constructor's arguments."
        )


class L1L2(Regularizer):
    """``tf.keras.regularizers.L1L2(l1=0.0, l2=0.0)``: ``l1 * sum(|x|) + l2 * sum(x**2)``."""

    def __init__(self, l1=0.0, l2=0.0):
        self.l1 = _validate_float(0.0 if l1 is None else l1, "l1")
        self.l2 = _validate_float(0.0 if l2 is None else l2, "l2")

    def __call__(self, x):
        if self.l1 == 0.0 and self.l2 == 0.0:
            # Keras' penalty is then a constant: no path from x (its gradient is None).
            return Tensor.concrete(jnp.zeros((), convert(x).dtype))
        return call(_penalty, x, l1=self.l1, l2=self.l2)

    def get_config(self):
        return {"l1": self.l1, "l2": self.l2}


class L1(Regularizer):
    """``tf.keras.regularizers.L1(l1=0.01)``: ``l1 * sum(|x|)``."""

    def __init__(self, l1=0.01):
        self.l1 = convert(_validate_float(0.01 if l1 is None else l1, "l1"))  # a float32 tensor, as Keras keeps it

    def __call__(self, x):
        return call(_l1, x, l1=float(self.l1))

    def get_config(self):
        return {"l1": float(self.l1)}


class L2(Regularizer):
    """``tf.keras.regularizers.L2(l2=0.01)``: ``l2 * sum(x**2)``."""

    def __init__(self, l2=0.01):
        self.l2 = _validate_float(0.01 if l2 is None else l2, "l2")

    def __call__(self, x):
        return call(_l2, x, l2=self.l2)

    def get_config(self):
        return {"l2": self.l2}


class OrthogonalRegularizer(Regularizer):
    """``tf.keras.regularizers.OrthogonalRegularizer(factor=0.01, mode="rows")``: ``factor`` times
    half the mean absolute dot product of distinct L2-normalized rows (or columns) of a matrix."""

    def __init__(self, factor=0.01, mode="rows"):
        self.factor = convert(_validate_float(factor, "factor"))  # a float32 tensor, as Keras keeps it
        if mode not in {"rows", "columns"}:
            raise _errors.GradkitValueError(
                f'Invalid value for argument `mode`. Expected one of {{"rows", "columns"}}. Received: mode={mode!r} '
                "(Keras raises ValueError too)."
            )
        self.mode = mode

    def __call__(self, inputs):
        x = convert(inputs)
        if len(x.shape) != 2:
            raise _errors.GradkitValueError(
                f"Inputs to OrthogonalRegularizer must have rank 2. Received: inputs.shape={tuple(x.shape)} (Keras "
                "raises ValueError too). Apply it to a matrix, such as a Dense kernel."
            )
        if np.dtype(x.dtype) != np.float32:
            raise _errors.GradkitTypeError(
                f"OrthogonalRegularizer got a {np.dtype(x.dtype).name} matrix: Keras multiplies it by its float32 "
                "factor, which TensorFlow refuses for any other dtype (InvalidArgumentError). Apply it to a float32 "
                "weight."
            )
        return call(_orthogonal, x, factor=float(self.factor), rows=self.mode == "rows")

    def get_config(self):
        return {"factor": float(self.factor), "mode": self.mode}


l1, l2, l1_l2, orthogonal_regularizer = L1, L2, L1L2, OrthogonalRegularizer

# Keras' ALL_OBJECTS_DICT (its snake_case of L1L2 is 'l1l2').
OBJECTS = object_registry.table((Regularizer, L1, L2, L1L2, OrthogonalRegularizer))


def serialize(regularizer):
    """``tf.keras.regularizers.serialize``, as Keras writes it."""
    return object_registry.serialize(regularizer, Regularizer, "keras.regularizers", "regularizers")


def deserialize(config, custom_objects=None):
    """``tf.keras.regularizers.deserialize``: the regularizer a name or ``serialize``'s dict describes."""
    return object_registry.deserialize(config, OBJECTS, custom_objects, "regularizers")


def get(identifier):
    """``tf.keras.regularizers.get``: from a name, a ``serialize`` dict, or a callable."""
    return object_registry.get(identifier, OBJECTS, "regularizers", "regularizer")
