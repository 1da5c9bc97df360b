"""``tf.linalg.tensor_diag``, ``tensor_diag_part`` and ``cross``.

``tensor_diag``/``tensor_diag_part`` are TensorFlow's ``Diag``/``DiagPart`` (the rank-doubling
diagonal of any tensor, not the batched matrix diagonal of ``_linalg_diagonals.py``); ``cross`` is
the cross product of 3-vectors along the last axis. Shapes and dtypes are checked as TensorFlow
checks them (no broadcasting in any of them).

>>> import gradkit.tf as tf
>>> tf.linalg.cross([1.0, 0.0, 0.0], [0.0, 1.0, 0.0]).numpy().tolist()
[0.0, 0.0, 1.0]
"""

from __future__ import annotations

import math

import jax.numpy as jnp

from gradkit import _errors

from . import _linalg_checks as _checks
from ._convert import call, convert, convert_like

# The types TensorFlow's Diag and DiagPart kernels register.
_DIAG_DTYPES = ("bfloat16", "float16", "float32", "float64", "int32", "int64", "complex64", "complex128")
# Cross: real numbers (no complex, no bool).
_CROSS_DTYPES = ("bfloat16", "float16", "float32", "float64", "int8", "int16", "int32", "int64")
_CROSS_DTYPES += ("uint8", "uint16", "uint32", "uint64")


def _tensor_diag(d):
    n = math.prod(d.shape)
    return jnp.diag(d.reshape(n)).reshape(d.shape + d.shape)


def tensor_diag(diagonal, name=None):
    """``tf.linalg.tensor_diag``: ``out[i1..ik, i1..ik] = diagonal[i1..ik]``, zero elsewhere (rank doubles)."""
    d = convert(diagonal)
    _checks.check_dtype("tensor_diag", d, _DIAG_DTYPES, "diagonal")
    if len(d.shape) < 1:
        raise _errors.GradkitValueError(
            "tf.linalg.tensor_diag: diagonal is a scalar, but TensorFlow needs rank >= 1; write tf.reshape(d, [1])."
        )
    return call(_tensor_diag, d)


def _tensor_diag_part(x):
    half = x.shape[: x.ndim // 2]
    n = math.prod(half)
    return jnp.diagonal(x.reshape(n, n)).reshape(half)


def tensor_diag_part(input, name=None):  # noqa: A002
    """``tf.linalg.tensor_diag_part``: ``out[i1..ik] = input[i1..ik, i1..ik]`` for ``input`` of
    shape ``D + D`` (rank halves)."""
    x = convert(input)
    _checks.check_dtype("tensor_diag_part", x, _DIAG_DTYPES)
    shape = tuple(x.shape)
    if len(shape) % 2 or shape[: len(shape) // 2] != shape[len(shape) // 2 :]:
        raise _errors.GradkitValueError(
            f"tf.linalg.tensor_diag_part: input of shape {shape}; TensorFlow needs an even rank and the "
            "shape D + D (the first half of the dimensions equal to the second). For the diagonal of "
            "(batched) matrices use tf.linalg.diag_part."
        )
    return call(_tensor_diag_part, x)


def _cross(a, b):
    return jnp.cross(a, b)


def cross(a, b, name=None):
    """``tf.linalg.cross``: the cross product of 3-vectors along the last axis (same shapes)."""
    a, b = convert_like(a, b, what="tf.linalg.cross")
    _checks.check_dtype("cross", a, _CROSS_DTYPES, "a")
    _checks.check_same_dtype("cross", a, b, "a", "b")
    if tuple(a.shape) != tuple(b.shape) or len(a.shape) < 1 or a.shape[-1] != 3:
        raise _errors.GradkitValueError(
            f"tf.linalg.cross: a of shape {tuple(a.shape)} and b of shape {tuple(b.shape)}; TensorFlow needs "
            "the same shape for both (no broadcasting) with 3 as the last dimension. Broadcast first: "
            "tf.broadcast_to(b, tf.shape(a))."
        )
    return call(_cross, a, b)
