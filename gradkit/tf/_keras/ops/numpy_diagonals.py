"""``keras.ops``' triangles and diagonals: ``tril``, ``triu``, ``diag``, ``diagonal``, ``trace``.

>>> import gradkit.tf as tf
>>> ops = tf.keras.ops
>>> x = ops.reshape(ops.arange(4), (2, 2))
>>> ops.tril(x).numpy().tolist(), ops.diagonal(x).numpy().tolist(), ops.trace(x).numpy().item()
([[0, 0], [2, 3]], [0, 3], 3)
"""

from __future__ import annotations

import jax.numpy as jnp

from gradkit import _errors

from .dispatch import apply, cast, keras_op, tensor
from .numpy_reductions import _accumulated

NAMES = "tril triu diag diagonal trace"


def _tril(x, k):
    return jnp.tril(x, k)


def _triu(x, k):
    return jnp.triu(x, k)


@keras_op
def tril(x, k=0):
    """``keras.ops.tril(x, k=0)``: the entries on and below the ``k``-th diagonal, the rest zero."""
    return apply(_tril, tensor(x), k=int(k))


@keras_op
def triu(x, k=0):
    """``keras.ops.triu(x, k=0)``: the entries on and above the ``k``-th diagonal, the rest zero."""
    return apply(_triu, tensor(x), k=int(k))


def _diag(x, k):
    return jnp.diag(x, k)


@keras_op
def diag(x, k=0):
    """``keras.ops.diag(x, k=0)``: a 1-D ``x`` as the ``k``-th diagonal of a matrix, or a matrix's ``k``-th
    diagonal."""
    x = tensor(x)
    if x.ndim not in (1, 2):
        raise _errors.GradkitValueError(
            f"tf.keras.ops.diag takes a 1-D or 2-D x, but got shape {tuple(x.shape)} (Keras raises ValueError). "
            "For the diagonals of a batch of matrices use tf.keras.ops.diagonal(x, axis1=-2, axis2=-1)."
        )
    return apply(_diag, x, k=int(k))


def _diagonal(x, offset, axis1, axis2):
    return jnp.diagonal(x, offset, axis1, axis2)


@keras_op
def diagonal(x, offset=0, axis1=0, axis2=1):
    """``keras.ops.diagonal(x, offset=0, axis1=0, axis2=1)``: the ``offset``-th diagonal of the matrices
    over ``axis1`` and ``axis2``, as the last axis."""
    return apply(_diagonal, tensor(x), offset=int(offset), axis1=int(axis1), axis2=int(axis2))


def _trace(x, offset, axis1, axis2):
    return jnp.trace(x, offset, axis1, axis2)


@keras_op
def trace(x, offset=0, axis1=0, axis2=1):
    """``keras.ops.trace(x, offset=0, axis1=0, axis2=1)``: the sum along that diagonal (booleans and small
    integers summed as int32)."""
    x = tensor(x)
    x = cast(x, _accumulated(x, None))
    return apply(_trace, x, offset=int(offset), axis1=int(axis1), axis2=int(axis2))
