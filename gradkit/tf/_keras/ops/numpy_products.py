"""``keras.ops``' products: ``matmul``, ``dot``, ``einsum``, ``tensordot``, ``outer``, ``inner``.

As on Keras' TensorFlow backend, integer operands are multiplied in float32 and the result cast
back to their promoted dtype (int8 by int8 ``matmul`` gives int32); ``matmul`` follows NumPy's
rules (1-D operands, batch dimensions broadcast).

>>> import gradkit.tf as tf
>>> ops = tf.keras.ops
>>> ops.matmul(tf.ones((2, 3, 4)), tf.ones((4,))).shape, ops.dot(tf.constant([1, 2]), tf.constant([3, 4])).numpy().item()
((2, 3), 11)
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from ... import _math
from .dispatch import apply, cast, keras_op, tensor
from .dtype_rules import result_type

NAMES = "matmul dot einsum tensordot outer inner vdot kron"


def _matmul(a, b):
    if a.ndim == 1 and b.ndim == 1:
        return jnp.dot(a, b)
    if b.ndim == 1:
        return jnp.tensordot(a, b, axes=[[a.ndim - 1], [0]])
    if a.ndim == 1:
        return jnp.tensordot(a, b, axes=[[0], [b.ndim - 2]])
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return jnp.matmul(jnp.broadcast_to(a, batch + a.shape[-2:]), jnp.broadcast_to(b, batch + b.shape[-2:]))


@keras_op
def matmul(x1, x2):
    """``keras.ops.matmul(x1, x2)``: the matrix product, NumPy's rules (batch dimensions broadcast)."""
    x1, x2 = tensor(x1), tensor(x2)
    if x1.dtype == np.int8 and x2.dtype == np.int8 and x1.ndim != 1 and x2.ndim != 1:
        return apply(_matmul, cast(x1, "int32"), cast(x2, "int32"))
    compute, out = result_type(x1.dtype, x2.dtype, float), result_type(x1.dtype, x2.dtype)
    return cast(apply(_matmul, cast(x1, compute), cast(x2, compute)), out)


def _tensordot(a, b, axes):
    return jnp.tensordot(a, b, axes)


@keras_op
def dot(x1, x2):
    """``keras.ops.dot(x1, x2)``: NumPy's ``dot`` (a scalar multiplies; otherwise the last axis of ``x1``
    against the last of a 1-D ``x2`` or its second-to-last)."""
    x1, x2 = tensor(x1), tensor(x2)
    out = result_type(x1.dtype, x2.dtype)
    compute = result_type(out, float)
    x1, x2 = cast(x1, compute), cast(x2, compute)
    if x1.ndim == 0 or x2.ndim == 0:
        return cast(_math.multiply(x1, x2), out)
    axes = ((x1.ndim - 1,), (x2.ndim - 1 if x2.ndim == 1 else x2.ndim - 2,))
    return cast(apply(_tensordot, x1, x2, axes=axes), out)


def _einsum(*operands, subscripts):
    return jnp.einsum(subscripts, *operands)


@keras_op
def einsum(subscripts, *operands, **kwargs):
    """``keras.ops.einsum(subscripts, *operands)``: Einstein summation (integers computed in float32,
    int8 operands in int32)."""
    operands = [tensor(x) for x in operands]
    kinds = {np.dtype(x.dtype).name for x in operands}
    if kinds == {"int8"}:
        compute = out = np.dtype("int32")
    else:
        out = result_type(*kinds)
        compute = np.dtype("float32") if out.kind in "iub" else out
    result = apply(_einsum, *[cast(x, compute) for x in operands], subscripts=str(subscripts))
    return cast(result, out)


def _axes_arg(axes):
    if isinstance(axes, (int, np.integer)):
        return int(axes)
    return tuple(tuple(int(a) for a in np.atleast_1d(group)) for group in axes)


@keras_op
def tensordot(x1, x2, axes=2):
    """``keras.ops.tensordot(x1, x2, axes=2)``: the sum over the last ``axes`` axes of ``x1`` and first of
    ``x2`` (or over the listed pairs of axes)."""
    x1, x2 = tensor(x1), tensor(x2)
    out = result_type(x1.dtype, x2.dtype)
    direct = ("int32", "int64", "float16", "float32", "float64", "bfloat16", "complex64", "complex128")
    compute = out if out.name in direct else result_type(out, float)
    return cast(apply(_tensordot, cast(x1, compute), cast(x2, compute), axes=_axes_arg(axes)), out)


def _outer(a, b):
    return jnp.reshape(a, (-1, 1)) * jnp.reshape(b, (1, -1))


@keras_op
def outer(x1, x2):
    """``keras.ops.outer(x1, x2)``: every entry of ``x1`` (flattened) times every entry of ``x2``."""
    x1, x2 = tensor(x1), tensor(x2)
    dtype = result_type(x1.dtype, x2.dtype)
    return apply(_outer, cast(x1, dtype), cast(x2, dtype))


@keras_op
def inner(x1, x2):
    """``keras.ops.inner(x1, x2)``: the sum over the last axes of both (a scalar multiplies)."""
    x1, x2 = tensor(x1), tensor(x2)
    out = result_type(x1.dtype, x2.dtype)
    compute = result_type(out, float)
    x1, x2 = cast(x1, compute), cast(x2, compute)
    if x1.ndim == 0 or x2.ndim == 0:
        return cast(_math.multiply(x1, x2), out)
    return cast(apply(_tensordot, x1, x2, axes=((x1.ndim - 1,), (x2.ndim - 1,))), out)


def _vdot(a, b):
    return jnp.vdot(a, b)


@keras_op
def vdot(x1, x2):
    """``keras.ops.vdot(x1, x2)``: the dot product of the flattened tensors (``x1`` conjugated)."""
    x1, x2 = tensor(x1), tensor(x2)
    out = result_type(x1.dtype, x2.dtype)
    compute = result_type(out, float)
    return cast(apply(_vdot, cast(x1, compute), cast(x2, compute)), out)


@keras_op
def kron(x1, x2):
    """``keras.ops.kron(x1, x2)``: the Kronecker product (the operand of lower rank padded with
    leading axes of size 1), in the two inputs' promoted dtype."""
    x1, x2 = tensor(x1), tensor(x2)
    dtype = result_type(x1.dtype, x2.dtype)
    return apply(jnp.kron, cast(x1, dtype), cast(x2, dtype))
