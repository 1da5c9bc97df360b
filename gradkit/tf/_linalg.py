"""``tf.linalg``: solve, matmul, norm, inv, det, slogdet, eigh, qr, triangular_solve, band_part, ..."""

from __future__ import annotations

import collections

import jax
import jax.numpy as jnp
import jax.scipy.linalg  # noqa: F401  (jax.scipy.linalg.solve_triangular)

from gradkit import _errors

from . import _linalg_checks as _checks
from . import _linalg_half, _math
from ._convert import call, convert, convert_like, known_value
from ._linalg_checks import TRIANGULAR
from ._linalg_svd import _off_diagonal_reciprocal

# TensorFlow's result types, whose fields name the results (qr(x).q).
_LogMatrixDeterminant = collections.namedtuple("LogMatrixDeterminant", ["sign", "log_abs_determinant"])
_Qr = collections.namedtuple("Qr", ["q", "r"])

matmul = _math.matmul
norm = _math.norm
einsum = _math.einsum
tensordot = _math.tensordot


@_linalg_half.via_float32
def _solve(a, b, adjoint):
    if adjoint:
        a = jnp.conj(jnp.swapaxes(a, -1, -2))
    return jnp.linalg.solve(a, b)


def solve(matrix, rhs, adjoint=False, name=None):
    """``tf.linalg.solve``: ``x`` with ``matrix @ x == rhs`` (``adjoint``: ``matrix^H @ x == rhs``);
    ``rhs`` is a (batch of) matrices with ``matrix``'s batch dimensions, as TensorFlow requires."""
    matrix, rhs = convert_like(matrix, rhs, what="tf.linalg.solve")
    _checks.check_matrix("solve", matrix, what="matrix")
    _checks.check_rhs("solve", matrix, rhs)
    return call(_solve, matrix, rhs, adjoint=bool(adjoint))


def _trace(x):
    return jnp.trace(x, axis1=-2, axis2=-1, dtype=x.dtype)  # TensorFlow's: in the input's dtype


def trace(x, name=None):
    return call(_trace, convert(x))


@_linalg_half.via_float32
def _inv(x, adjoint):
    y = jnp.linalg.inv(x)
    return jnp.conj(jnp.swapaxes(y, -1, -2)) if adjoint else y


def inv(input, adjoint=False, name=None):  # noqa: A002
    """``tf.linalg.inv``: the inverse of each (batched) square matrix (of its adjoint with ``adjoint``)."""
    x = convert(input)
    _checks.check_matrix("inv", x)
    return call(_inv, x, adjoint=bool(adjoint))


@_linalg_half.via_float32
def _det(x):
    if x.shape[-1] == 0:  # 1 for each 0x0 matrix (jax's derivative rule cannot index one)
        return jnp.ones(x.shape[:-2], x.dtype) + jnp.sum(x, axis=(-2, -1))
    return jnp.linalg.det(x)


def det(input, name=None):  # noqa: A002
    """``tf.linalg.det``: the determinant of each (batched) square matrix."""
    x = convert(input)
    _checks.check_matrix("det", x)
    return call(_det, x)


@_linalg_half.via_float32
def _cholesky(a):
    # TensorFlow reads only the lower triangle; its gradient is symmetric (that of the
    # symmetrized matrix, which equals the lower triangle's Hermitian matrix in value here).
    symmetric = (a + jnp.conj(jnp.swapaxes(a, -1, -2))) / 2
    read = symmetric + jax.lax.stop_gradient(_lower_hermitian(a) - symmetric)
    return jax.lax.linalg.cholesky(read, symmetrize_input=False)


def cholesky(input, name=None):  # noqa: A002
    """``tf.linalg.cholesky``: the lower Cholesky factor, from the lower triangle of ``input``."""
    x = convert(input)
    _checks.check_matrix("cholesky", x)
    return call(_cholesky, x)


def _logdet(a):
    # The Cholesky factor's diagonal is real and positive: TensorFlow's log det is real, float32
    # for complex64.
    diagonal = jnp.diagonal(_cholesky(a), axis1=-2, axis2=-1).real
    return 2.0 * jnp.sum(jnp.log(diagonal), axis=-1)


def logdet(matrix, name=None):
    """``tf.linalg.logdet``: ``log det`` of a Hermitian positive-definite matrix, by its Cholesky
    factor (NaN where it is not positive definite), as TensorFlow computes it."""
    x = convert(matrix)
    _checks.check_matrix("logdet", x, what="matrix")
    return call(_logdet, x)


def _matvec(a, b, transpose, conjugate):
    if transpose:
        a = jnp.swapaxes(a, -1, -2)
    if conjugate:
        a = jnp.conj(a)
    return jnp.einsum("...ij,...j->...i", a, b)


def matvec(a, b, transpose_a=False, adjoint_a=False, a_is_sparse=False, b_is_sparse=False, name=None):
    """``tf.linalg.matvec``: ``a @ b`` for a (batched) matrix ``a`` and vector ``b``."""
    _math.check_one_of_transpose_and_adjoint("tf.linalg.matvec", "a", transpose_a, adjoint_a)
    return call(_matvec, convert(a), convert(b), transpose=bool(transpose_a or adjoint_a), conjugate=bool(adjoint_a))


@_linalg_half.via_float32
def _slogdet(x):
    sign, log_abs = jnp.linalg.slogdet(x)
    return sign, log_abs.astype(x.dtype)  # TensorFlow's log|det| has the input's dtype, complex too


def slogdet(input, name=None):  # noqa: A002
    """``(sign, log|det|)`` of a (batched) square matrix."""
    x = convert(input)
    _checks.check_matrix("slogdet", x)
    return _LogMatrixDeterminant(*call(_slogdet, x))


def _lower_hermitian(a):
    # TensorFlow's eigh reads only the lower triangle, so its gradient is lower triangular; of
    # a complex diagonal it reads the real part alone (a Hermitian matrix's diagonal is real).
    strictly_lower = jnp.tril(a, -1)
    diagonal = jnp.diagonal(a, axis1=-2, axis2=-1)
    if jnp.iscomplexobj(a):
        diagonal = diagonal.real.astype(a.dtype)
    eye = jnp.eye(a.shape[-1], dtype=bool)
    return strictly_lower + jnp.conj(jnp.swapaxes(strictly_lower, -1, -2)) + jnp.where(eye, diagonal[..., None, :], 0)


@jax.custom_jvp
def _eigh_hermitian(a):
    # A plain pair, as the rule below returns: jax checks that primal and rule outputs match in
    # structure where a compiled step replays the rule (eigh's own result is a namedtuple).
    return tuple(jnp.linalg.eigh(a, symmetrize_input=False))


@_eigh_hermitian.defjvp
def _eigh_hermitian_jvp(primals, tangents):
    # JAX's rule with TensorFlow's broadened 1 / (e_j - e_i) (_SelfAdjointEigV2Grad's
    # _SafeReciprocal): where two eigenvalues are equal it is 0, so a loss of the eigenvectors
    # gets TensorFlow's finite gradient there (an identity-initialised covariance, a matrix
    # square root), not JAX's inf * 0 = NaN. The rule calls _eigh_hermitian itself, so
    # derivatives of derivatives follow it again, as TensorFlow's do.
    (a,), (da,) = primals, tangents
    e, v = _eigh_hermitian(a)
    projected = jnp.conj(jnp.swapaxes(v, -1, -2)) @ da @ v
    gaps = _off_diagonal_reciprocal(e[..., None, :] - e[..., :, None]).astype(v.dtype)
    de = jnp.real(jnp.diagonal(projected, axis1=-2, axis2=-1)).astype(e.dtype)
    return (e, v), (de, v @ (gaps * projected))


@_linalg_half.via_float32
def _eigh(a):
    e, v = _eigh_hermitian(_lower_hermitian(a))
    return e.astype(a.dtype), v  # TensorFlow's eigenvalues have the input's dtype, complex too


def eigh(tensor, name=None):
    """``(eigenvalues, eigenvectors)`` of a self-adjoint matrix, from its lower triangle."""
    x = convert(tensor)
    _checks.check_matrix("eigh", x, what="tensor")
    return tuple(call(_eigh, x))


def eigvalsh(tensor, name=None):
    return eigh(tensor)[0]


@_linalg_half.via_float32
def _qr(a, full_matrices):
    q, r = jnp.linalg.qr(a, mode="complete" if full_matrices else "reduced")
    return q, r


def qr(input, full_matrices=False, name=None):  # noqa: A002
    """``(q, r)`` with ``q`` orthonormal and ``r`` upper triangular."""
    x = convert(input)
    _checks.check_matrix("qr", x, square=False)
    return _Qr(*call(_qr, x, full_matrices=bool(full_matrices)))


def _triangular_solve(a, b, lower, adjoint):
    # TensorFlow's rhs is always a (batch of) matrices, whose batch dimensions broadcast with
    # the matrix's: broadcast first, so jax never reads it as a batch of vectors.
    batch = jnp.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = jnp.broadcast_to(a, batch + a.shape[-2:])
    b = jnp.broadcast_to(b, batch + b.shape[-2:])
    return jax.scipy.linalg.solve_triangular(a, b, lower=lower, trans="C" if adjoint else 0)


def triangular_solve(matrix, rhs, lower=True, adjoint=False, name=None):
    """Solve ``matrix @ x = rhs`` (``adjoint``: ``matrix^H @ x = rhs``), reading one triangle of
    ``matrix``; ``rhs`` is a (batch of) matrices, batch dimensions broadcast, as in TensorFlow."""
    matrix, rhs = convert_like(matrix, rhs, what="tf.linalg.triangular_solve")
    _checks.check_matrix("triangular_solve", matrix, TRIANGULAR, what="matrix")
    _checks.check_same_dtype("triangular_solve", matrix, rhs)
    if matrix.ndim < 2 or rhs.ndim < 2 or matrix.shape[-1] != matrix.shape[-2] or rhs.shape[-2] != matrix.shape[-1]:
        raise _errors.GradkitValueError(
            f"tf.linalg.triangular_solve takes square matrices (..., M, M) and a right-hand side (..., M, K), "
            f"but got shapes {tuple(matrix.shape)} and {tuple(rhs.shape)}; for a vector rhs, write "
            "rhs[..., None] and take [..., 0] of the result."
        )
    return call(_triangular_solve, matrix, rhs, lower=bool(lower), adjoint=bool(adjoint))


def _band_part(x, num_lower, num_upper):
    m, n = x.shape[-2:]
    i = jnp.arange(m)[:, None]
    j = jnp.arange(n)[None, :]
    keep = ((num_lower < 0) | (i - j <= num_lower)) & ((num_upper < 0) | (j - i <= num_upper))
    return jnp.where(keep, x, jnp.zeros_like(x))


def band_part(input, num_lower, num_upper, name=None):  # noqa: A002
    """Keep ``num_lower`` sub- and ``num_upper`` superdiagonals (negative: all), zero the rest.
    The bounds may be traced tensors inside ``tf.function`` (the shape does not depend on them)."""
    x = convert(input)
    lower, upper = known_value(num_lower), known_value(num_upper)
    rows, cols = (tuple(x.shape[-2:]) + (None, None))[:2] if x.ndim >= 2 else (None, None)
    for value, bound, what in ((lower, rows, "num_lower"), (upper, cols, "num_upper")):
        if value is not None and bound is not None and int(value) > bound:
            raise _errors.InvalidArgumentValueError(
                f"tf.linalg.band_part: {what}={int(value)} must not exceed the matrix's {bound} "
                f"{'rows' if what == 'num_lower' else 'columns'}, as TensorFlow requires. Pass -1 to keep them all."
            )
    if lower is not None and upper is not None:
        return call(_band_part, x, num_lower=int(lower), num_upper=int(upper))
    return call(_band_part, x, convert(num_lower), convert(num_upper))


def _matrix_transpose(x, conjugate):
    y = jnp.swapaxes(x, -1, -2)
    return jnp.conj(y) if conjugate else y


def matrix_transpose(a, name="matrix_transpose", conjugate=False):
    return call(_matrix_transpose, convert(a), conjugate=bool(conjugate))


def adjoint(matrix, name=None):
    return matrix_transpose(matrix, conjugate=True)


def _cholesky_solve(chol, rhs):
    # Two triangular solves reading only the lower triangle of chol, as TensorFlow's do (their
    # batch axes broadcast).
    return _triangular_solve(chol, _triangular_solve(chol, rhs, lower=True, adjoint=False), lower=True, adjoint=True)


def cholesky_solve(chol, rhs, name=None):
    """``tf.linalg.cholesky_solve``: ``x`` with ``chol @ adjoint(chol) @ x == rhs``, for the lower
    Cholesky factor ``chol`` of a (batched) matrix (``tf.linalg.cholesky``'s result)."""
    chol, rhs = convert_like(chol, rhs, what="tf.linalg.cholesky_solve")
    _checks.check_matrix("cholesky_solve", chol, TRIANGULAR, what="chol")
    _checks.check_same_dtype("cholesky_solve", chol, rhs, "chol")
    if (
        len(chol.shape) < 2
        or len(rhs.shape) < 2
        or chol.shape[-1] != chol.shape[-2]
        or rhs.shape[-2] != chol.shape[-1]
        or not _checks.broadcasts(chol.shape[:-2], rhs.shape[:-2])
    ):
        raise _errors.GradkitValueError(
            f"tf.linalg.cholesky_solve: chol of shape {tuple(chol.shape)} and rhs of shape {tuple(rhs.shape)}; "
            "TensorFlow requires square matrices [..., M, M] and rhs [..., M, K] whose batch axes broadcast "
            "(a vector rhs: tf.expand_dims(rhs, -1))."
        )
    return call(_cholesky_solve, chol, rhs)
