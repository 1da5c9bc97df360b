"""``keras.ops``' triangles and diagonals: ``tril``, ``triu``, ``diag``, ``diagonal``, ``trace``,
``diagflat``; ``vander``; and ``slogdet`` (``linalg_ops``', which Keras lists under ``keras.ops.numpy``).

>>> import gradkit.tf as tf
>>> ops = tf.keras.ops
>>> x = ops.reshape(ops.arange(4), (2, 2))
>>> ops.tril(x).numpy().tolist(), ops.diagonal(x).numpy().tolist(), ops.trace(x).numpy().item()
([[0, 0], [2, 3]], [0, 3], 3)
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from ... import _array
from .dispatch import apply, cast, keras_op, tensor
from .dtype_rules import result_type
from .linalg_ops import slogdet  # noqa: F401 - keras.ops.numpy.slogdet
from .numpy_reductions import _accumulated

NAMES = "tril triu diag diagonal trace diagflat vander slogdet"


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
    return jnp.trace(x, offset, axis1, axis2, dtype=x.dtype)  # jnp's default widens int32 to int64 with x64


@keras_op
def trace(x, offset=0, axis1=0, axis2=1):
    """``keras.ops.trace(x, offset=0, axis1=0, axis2=1)``: the sum along that diagonal (booleans and small
    integers summed as int32)."""
    x = tensor(x)
    x = cast(x, _accumulated(x, None))
    return apply(_trace, x, offset=int(offset), axis1=int(axis1), axis2=int(axis2))


@keras_op
def diagflat(x, k=0):
    """``keras.ops.diagflat(x, k=0)``: the flattened ``x`` as the ``k``-th diagonal of a square matrix."""
    return diag(_array.reshape(tensor(x), [-1]), k)


def _vander(x, powers):
    return jnp.power(x[:, None], powers[None, :])


@keras_op
def vander(x, N=None, increasing=False):  # noqa: N803 - Keras' argument name
    """``keras.ops.vander(x, N=None, increasing=False)``: the Vandermonde matrix of a 1-D ``x``, columns
    the powers ``N - 1`` down to 0 (up, with ``increasing``); computed in float32 (or wider), in ``x``'s dtype."""
    x = tensor(x)
    if x.ndim != 1:
        raise _errors.GradkitValueError(
            f"tf.keras.ops.vander takes a 1-D x, but got shape {tuple(x.shape)} (Keras raises ValueError)."
        )
    if N is not None and (not isinstance(N, (int, np.integer)) or N < 0):
        raise _errors.GradkitValueError(f"tf.keras.ops.vander takes N a non-negative int (Keras' rule), but got {N!r}.")
    n = x.shape[0] if N is None else int(N)
    powers = np.arange(n) if increasing else np.arange(n - 1, -1, -1)
    compute = result_type(x.dtype, "float32")
    out = apply(_vander, cast(x, compute), tensor(powers.astype(compute)))
    return cast(out, x.dtype)
