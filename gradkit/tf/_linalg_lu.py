"""``tf.linalg.lu`` and the ops that use its result: ``lu_solve``, ``lu_matrix_inverse``,
``lu_reconstruct``.

``lu(x)`` returns ``(lu, p)`` as TensorFlow: ``lu`` holds the unit lower factor ``L`` below
the diagonal and ``U`` on and above it, and ``p`` is the row permutation as an int32 vector,
``x[..., p, :] == L @ U`` (partial pivoting, as LAPACK and TensorFlow; a complex column is
pivoted on ``|re| + |im|`` as LAPACK does, where TensorFlow takes the modulus, so complex
factors may differ from TensorFlow's while their solves agree). The other three are
TensorFlow's formulas (two triangular solves, ``L @ U`` with the rows put back), so their
gradients with respect to ``lower_upper`` and ``rhs`` are TensorFlow's. TensorFlow defines no
gradient for ``lu`` itself (differentiating through it raises there); gradkit gives the
derivative of the factors (JAX's).

>>> import gradkit.tf as tf
>>> lu, p = tf.linalg.lu([[1.0, 2.0], [3.0, 4.0]])
>>> p.numpy().tolist()
[1, 0]
>>> tf.linalg.lu_reconstruct(lu, p).numpy().tolist()
[[1.0, 2.0], [3.0, 4.0]]
"""

from __future__ import annotations

import collections

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from . import _linalg_checks as _checks
from . import _linalg_half
from ._convert import call, convert

# TensorFlow's result types, whose fields name the results (lu(x).p).
_Lu = collections.namedtuple("Lu", ["lu", "p"])


@_linalg_half.via_float32
def _lu(x, index_dtype):
    lu, _, permutation = jax.lax.linalg.lu(x)
    return lu, permutation.astype(index_dtype)


def lu(input, output_idx_type=np.int32, name=None):  # noqa: A002
    """``tf.linalg.lu``: ``(lu, p)`` of each (batched) square matrix (see the module docstring)."""
    x = convert(input)
    _checks.check_matrix("lu", x)
    index_dtype = np.dtype(getattr(output_idx_type, "as_numpy_dtype", output_idx_type))
    if index_dtype not in (np.dtype(np.int32), np.dtype(np.int64)):
        raise _errors.GradkitTypeError(
            f"tf.linalg.lu: output_idx_type={index_dtype.name}, but TensorFlow takes tf.int32 or tf.int64."
        )
    # int64 is int32 unless jax's x64 mode is on, as everywhere in gradkit.tf.
    index_dtype = jax.dtypes.canonicalize_dtype(index_dtype)
    return _Lu(*call(_lu, x, index_dtype=index_dtype))


# lu_reconstruct is a matmul and a gather in TensorFlow, which take integer matrices too.
_ANY = ("bool", "int8", "int16", "int32", "int64", "uint8", *_checks.TRIANGULAR)


def _factors(lower_upper):
    eye = jnp.broadcast_to(jnp.eye(lower_upper.shape[-1], dtype=lower_upper.dtype), lower_upper.shape)
    lower = jnp.tril(lower_upper, -1) + eye  # the unit diagonal is implied, not read
    return lower, jnp.triu(lower_upper)


def _batch_rows(x, perm):
    """``x[..., perm, :]`` for each batch member, batch dimensions broadcast."""
    batch = jnp.broadcast_shapes(x.shape[:-2], perm.shape[:-1])
    x = jnp.broadcast_to(x, batch + x.shape[-2:])
    perm = jnp.broadcast_to(perm, batch + perm.shape[-1:])
    return jnp.take_along_axis(x, perm[..., None], axis=-2)


def _lu_solve(lower_upper, perm, rhs):
    lower, upper = _factors(lower_upper)
    permuted = _batch_rows(rhs, perm)
    batch = permuted.shape[:-2]
    lower = jnp.broadcast_to(lower, batch + lower.shape[-2:])
    upper = jnp.broadcast_to(upper, batch + upper.shape[-2:])
    y = jax.scipy.linalg.solve_triangular(lower, permuted, lower=True, unit_diagonal=True)
    return jax.scipy.linalg.solve_triangular(upper, y, lower=False)


def _is_tensor(value) -> bool:
    from gradkit._core.variable import Variable, VariableSlice
    from gradkit._tape.tensor import Tensor

    return isinstance(value, (Tensor, Variable, VariableSlice))


def _check_lu(op: str, lower_upper, perm, given_perm, allowed=_checks.TRIANGULAR) -> None:
    _checks.check_matrix(op, lower_upper, allowed, what="lower_upper")
    if len(perm.shape) + 1 != len(lower_upper.shape) or np.dtype(perm.dtype).kind not in "iu":
        raise _errors.GradkitValueError(
            f"tf.linalg.{op}: lower_upper of shape {tuple(lower_upper.shape)} and perm of shape "
            f"{tuple(perm.shape)} and dtype {np.dtype(perm.dtype).name}; TensorFlow needs an integer perm "
            "with one dimension less (the (lu, p) pair that tf.linalg.lu returns)."
        )
    # TensorFlow gathers a batch's rows by stacking int32 batch indices with perm, which fails
    # for an int64 tensor (an unbatched perm is used as it is, a NumPy array converted to int32).
    if len(perm.shape) > 1 and _is_tensor(given_perm) and np.dtype(perm.dtype) == np.int64:
        raise _errors.GradkitValueError(
            f"tf.linalg.{op}: a batched perm of shape {tuple(perm.shape)} and dtype int64; TensorFlow takes "
            f"int32 here (tf.linalg.lu's default output_idx_type): pass tf.cast(perm, tf.int32)."
        )


def lu_solve(lower_upper, perm, rhs, validate_args=False, name=None):
    """``tf.linalg.lu_solve``: ``x`` with ``a @ x == rhs`` from ``(lower_upper, perm) = lu(a)``;
    ``rhs`` is a (batch of) matrices ``[..., M, K]``."""
    given_perm = perm
    lower_upper, perm, rhs = convert(lower_upper), convert(perm), convert(rhs)
    _check_lu("lu_solve", lower_upper, perm, given_perm)
    if len(rhs.shape) < 2 or rhs.shape[-2] != lower_upper.shape[-1]:
        raise _errors.GradkitValueError(
            f"tf.linalg.lu_solve: rhs of shape {tuple(rhs.shape)} for lower_upper of shape "
            f"{tuple(lower_upper.shape)}; TensorFlow needs rhs [..., {lower_upper.shape[-1]}, K]. For a "
            "vector: tf.linalg.lu_solve(lu, p, rhs[..., None])[..., 0]."
        )
    _checks.check_same_dtype("lu_solve", lower_upper, rhs, "lower_upper")
    return call(_lu_solve, lower_upper, perm, rhs)


def _lu_matrix_inverse(lower_upper, perm):
    n = lower_upper.shape[-1]
    eye = jnp.broadcast_to(jnp.eye(n, dtype=lower_upper.dtype), lower_upper.shape)
    return _lu_solve(lower_upper, perm, eye)


def lu_matrix_inverse(lower_upper, perm, validate_args=False, name=None):
    """``tf.linalg.lu_matrix_inverse``: the inverse of ``a`` from ``(lower_upper, perm) = lu(a)``."""
    given_perm = perm
    lower_upper, perm = convert(lower_upper), convert(perm)
    _check_lu("lu_matrix_inverse", lower_upper, perm, given_perm)
    return call(_lu_matrix_inverse, lower_upper, perm)


def _lu_reconstruct(lower_upper, perm):
    lower, upper = _factors(lower_upper)
    return _batch_rows(lower @ upper, jnp.argsort(perm, axis=-1))  # argsort: the inverse permutation


def lu_reconstruct(lower_upper, perm, validate_args=False, name=None):
    """``tf.linalg.lu_reconstruct``: ``a`` back from ``(lower_upper, perm) = lu(a)``."""
    given_perm = perm
    lower_upper, perm = convert(lower_upper), convert(perm)
    _check_lu("lu_reconstruct", lower_upper, perm, given_perm, allowed=_ANY)
    return call(_lu_reconstruct, lower_upper, perm)
