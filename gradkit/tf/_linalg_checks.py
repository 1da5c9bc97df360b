"""Argument checks shared by ``tf.linalg``'s ops: the dtypes and shapes TensorFlow refuses.

TensorFlow's matrix kernels take float and complex matrices only (``tf.linalg.inv`` of an
int32 matrix raises there, where ``jnp.linalg.inv`` would promote it), need square matrices
where the math does, and never broadcast ``solve``'s batch dimensions. These helpers raise a
``[gradkit]`` error for the same inputs, before JAX sees them: a TypeError or ValueError, as
TensorFlow raises where it traces, that is also the InvalidArgumentError its eager kernels raise.
"""

from __future__ import annotations

import numpy as np

from gradkit import _errors

GradkitNotImplementedError = _errors.GradkitNotImplementedError


# The dtypes TensorFlow's LAPACK-like kernels (MatrixInverse, Cholesky, Svd, ...) register.
LAPACK = ("float16", "float32", "float64", "complex64", "complex128")
# MatrixTriangularSolve also takes bfloat16.
TRIANGULAR = ("bfloat16", *LAPACK)
# Real floating types: pinv and matrix_rank check ``dtype.is_floating``.
REAL_FLOATS = ("float16", "bfloat16", "float32", "float64")
# The tridiagonal kernels have no half-precision kernels.
NO_HALF = ("float32", "float64", "complex64", "complex128")


def dtype_name(x) -> str:
    return np.dtype(x.dtype).name


def check_dtype(op: str, x, allowed=LAPACK, what: str = "input", error=_errors.InvalidArgumentTypeError) -> None:
    """Raise ``error`` unless ``x``'s dtype is one of ``allowed`` (names), as TensorFlow's kernel does."""
    if dtype_name(x) not in allowed:
        raise error(
            f"tf.linalg.{op}: {what} has dtype {dtype_name(x)}, but TensorFlow's kernel takes only "
            f"{', '.join(allowed)} here and refuses it too. Cast first, e.g. "
            f"tf.linalg.{op}(tf.cast(x, tf.float32), ...)."
        )


def check_matrix(op: str, x, allowed=LAPACK, what: str = "input", square: bool = True) -> None:
    """``x`` must be a (batch of) matrices of an ``allowed`` dtype, square if ``square``."""
    check_dtype(op, x, allowed, what)
    shape = tuple(x.shape)
    if len(shape) < 2:
        raise _errors.InvalidArgumentValueError(
            f"tf.linalg.{op}: {what} has shape {shape}, but TensorFlow needs a matrix or a batch of "
            f"matrices (rank >= 2), shape [..., M, N]; a vector v as a column: tf.expand_dims(v, -1)."
        )
    if square and shape[-1] != shape[-2]:
        raise _errors.InvalidArgumentValueError(
            f"tf.linalg.{op}: {what} has shape {shape}, but TensorFlow needs square matrices [..., M, M] "
            f"here; for a non-square matrix see tf.linalg.pinv or tf.linalg.lstsq."
        )


def check_same_dtype(
    op: str, a, b, what_a: str = "matrix", what_b: str = "rhs", error=_errors.InvalidArgumentTypeError
):
    if dtype_name(a) != dtype_name(b):
        raise error(
            f"tf.linalg.{op}: {what_a} has dtype {dtype_name(a)} but {what_b} has dtype {dtype_name(b)}; "
            f"TensorFlow needs the same dtype for both and does not promote. Cast one with tf.cast."
        )


def check_rhs(op: str, matrix, rhs, same_batch: bool = True) -> None:
    """``rhs`` must be a (batch of) matrices ``[..., M, K]`` of ``matrix``'s dtype; with
    ``same_batch``, of ``matrix``'s rank and batch dimensions (TensorFlow's solvers that do not
    broadcast)."""
    check_same_dtype(op, matrix, rhs)
    m, r = tuple(matrix.shape), tuple(rhs.shape)
    if len(r) < 2 or r[-2] != m[-2] or (same_batch and r[:-2] != m[:-2]) or not broadcasts(m[:-2], r[:-2]):
        batch = f"{m[:-2]} + " if same_batch else ""
        raise _errors.InvalidArgumentValueError(
            f"tf.linalg.{op}: matrix of shape {m} and rhs of shape {r}; TensorFlow needs rhs of shape "
            f"{batch}({m[-2]}, K){' (same batch dimensions, no broadcasting)' if same_batch else ''}. "
            "For a vector rhs, solve with rhs[..., None] and take [..., 0] of the result."
        )


def operand_like(op: str, x, value, what: str):
    """``value`` (a number, NumPy array or tensor) as an operand of ``x``'s dtype, as TensorFlow's
    ``convert_to_tensor(value, dtype=x.dtype)``: Python numbers and NumPy arrays take the dtype,
    a tensor of another dtype is refused (with a ValueError, as there)."""
    from ._convert import convert, convert_like

    if isinstance(value, (np.ndarray, np.generic)):
        return convert(value, np.dtype(x.dtype))
    _, value = convert_like(x, value, what=f"tf.linalg.{op}")
    check_same_dtype(op, x, value, "the matrix", what, error=_errors.GradkitValueError)
    return value


def broadcasts(a: tuple, b: tuple) -> bool:
    """Whether shapes ``a`` and ``b`` broadcast together."""
    try:
        np.broadcast_shapes(a, b)
    except ValueError:
        return False
    return True
