"""``tf.linalg``: solve, matmul, norm, diag, inv, det, ..."""

from __future__ import annotations

import jax.numpy as jnp

from . import _math
from ._convert import call, convert

matmul = _math.matmul
norm = _math.norm
einsum = _math.einsum
tensordot = _math.tensordot


def _solve(a, b):
    return jnp.linalg.solve(a, b)


def solve(matrix, rhs, adjoint=False, name=None):
    m = convert(matrix)
    if adjoint:
        m = _math.matmul(jnp.eye(m.shape[-1], dtype=m.dtype), m, adjoint_b=True)
    return call(_solve, m, convert(rhs))


def _diag(d):
    eye = jnp.eye(d.shape[-1], dtype=d.dtype)
    return d[..., :, None] * eye.reshape((1,) * (d.ndim - 1) + eye.shape)


def diag(diagonal, name="diag", k=0, num_rows=-1, num_cols=-1, padding_value=0, align="RIGHT_LEFT"):
    """A (batched) diagonal matrix from the last dimension of ``diagonal``."""
    return call(_diag, convert(diagonal))


def _diag_part(x):
    return jnp.diagonal(x, axis1=-2, axis2=-1)


def diag_part(input, name="diag_part", k=0, padding_value=0, align="RIGHT_LEFT"):  # noqa: A002
    return call(_diag_part, convert(input))


def _trace(x):
    return jnp.trace(x, axis1=-2, axis2=-1)


def trace(x, name=None):
    return call(_trace, convert(x))


inv = _math._unary(jnp.linalg.inv, "inv")
det = _math._unary(jnp.linalg.det, "det")
cholesky = _math._unary(jnp.linalg.cholesky, "cholesky")
logdet = _math._unary(lambda x: jnp.linalg.slogdet(x)[1], "logdet")


def _matvec(a, b, transpose, conjugate):
    if transpose:
        a = jnp.swapaxes(a, -1, -2)
    if conjugate:
        a = jnp.conj(a)
    return jnp.einsum("...ij,...j->...i", a, b)


def matvec(a, b, transpose_a=False, adjoint_a=False, a_is_sparse=False, b_is_sparse=False, name=None):
    """``tf.linalg.matvec``: ``a @ b`` for a (batched) matrix ``a`` and vector ``b``."""
    return call(_matvec, convert(a), convert(b), transpose=bool(transpose_a or adjoint_a), conjugate=bool(adjoint_a))
