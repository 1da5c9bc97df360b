"""``keras.ops.linalg``: ``cholesky``, ``det``, ``eigh``, ``inv``, ``lu_factor``, ``norm``, ``qr``,
``solve``, ``solve_triangular``, ``svd``, ``pinv``, ``lstsq``, ``matrix_rank``, ``cholesky_inverse``
(and ``slogdet``, which Keras lists under ``keras.ops.numpy``), on ``gradkit.tf.linalg``'s decompositions (their
gradients TensorFlow's), with Keras' argument names and result orders (``svd`` gives
``(u, s, vh)``, ``lu_factor`` ``(lu, pivots)`` as SciPy's).

>>> import gradkit.tf as tf
>>> ops = tf.keras.ops
>>> round(float(ops.norm(tf.constant([3.0, 4.0]))), 4), ops.solve(tf.eye(2) * 2.0, tf.constant([2.0, 4.0])).numpy().tolist()
(5.0, [1.0, 2.0])
"""

from __future__ import annotations

import numpy as np

from gradkit import _errors

from ... import _array, _integer_data, _linalg, _linalg_lu, _linalg_svd, _math
from ..._convert import known_value
from ..functional import running_symbolically
from .dispatch import cast, keras_op, tensor
from .dtype_rules import float_of
from .numpy_shapes import moveaxis

NAMES = "cholesky det eigh inv lu_factor norm qr solve solve_triangular svd pinv lstsq matrix_rank cholesky_inverse"


def _matrices(name, x, square=True):
    x = tensor(x)
    if x.ndim < 2 or (square and x.shape[-1] != x.shape[-2]):
        what = "square matrices" if square else "matrices"
        raise _errors.GradkitValueError(
            f"tf.keras.ops.{name} takes {what} (shape (..., M, {'M' if square else 'N'})), but got shape "
            f"{tuple(x.shape)} (Keras raises ValueError)."
        )
    return x


@keras_op
def cholesky(x, upper=False):
    """``keras.ops.cholesky(x, upper=False)``: the lower (or, with ``upper``, upper) Cholesky factor of a
    positive-definite matrix; one that is not positive definite raises, as in Keras."""
    out = _linalg.cholesky(_matrices("cholesky", x))
    value = None if running_symbolically() else known_value(out)  # zeros while a model is built
    if value is not None and not np.all(np.isfinite(value)):
        raise _errors.GradkitValueError(
            "tf.keras.ops.cholesky: Cholesky decomposition failed, the matrix is not positive definite (its "
            "factor has NaNs; Keras raises ValueError). Pass a symmetric positive-definite matrix."
        )
    return _linalg.adjoint(out) if upper else out


@keras_op
def det(x):
    """``keras.ops.det(x)``: the determinant of each square matrix."""
    return _linalg.det(_matrices("det", x))


@keras_op
def eigh(x):
    """``keras.ops.eigh(x)``: ``(eigenvalues, eigenvectors)`` of each Hermitian matrix (its lower half read)."""
    return tuple(_linalg.eigh(_matrices("eigh", x)))


@keras_op
def inv(x):
    """``keras.ops.inv(x)``: the inverse of each square matrix."""
    return _linalg.inv(_matrices("inv", x))


@keras_op
def lu_factor(x):
    """``keras.ops.lu_factor(x)``: ``(lu, pivots)``, the LU factors in one matrix and SciPy's pivots."""
    lu, permutation = _linalg_lu.lu(_matrices("lu_factor", x))
    return lu, _integer_data.invert_permutation(permutation)


@keras_op
def qr(x, mode="reduced"):
    """``keras.ops.qr(x, mode="reduced")``: ``(q, r)``; ``mode="complete"`` gives a square ``q``."""
    if mode not in ("reduced", "complete"):
        raise _errors.GradkitValueError(
            f"tf.keras.ops.qr got mode={mode!r}; Keras takes 'reduced' or 'complete' (ValueError otherwise)."
        )
    return tuple(_linalg.qr(_matrices("qr", x, square=False), full_matrices=mode == "complete"))


def _right_hand_side(a, b):
    b = tensor(b)
    vector = b.ndim == a.ndim - 1
    return (_array.expand_dims(b, -1) if vector else b), vector


@keras_op
def solve(a, b):
    """``keras.ops.solve(a, b)``: ``x`` with ``a @ x = b`` (``b`` a matrix, or a vector per matrix)."""
    a = _matrices("solve", a)
    b, vector = _right_hand_side(a, b)
    out = _linalg.solve(a, b)
    return _array.squeeze(out, -1) if vector else out


@keras_op
def solve_triangular(a, b, lower=False):
    """``keras.ops.solve_triangular(a, b, lower=False)``: ``x`` with ``a @ x = b`` for a triangular ``a``
    (upper unless ``lower``)."""
    a = _matrices("solve_triangular", a)
    b, vector = _right_hand_side(a, b)
    out = _linalg.triangular_solve(a, b, lower=lower)
    return _array.squeeze(out, -1) if vector else out


@keras_op
def svd(x, full_matrices=True, compute_uv=True):
    """``keras.ops.svd(x, full_matrices=True, compute_uv=True)``: ``(u, s, vh)`` with ``x = u @ diag(s) @ vh``
    (only ``s`` when ``compute_uv`` is False)."""
    x = _matrices("svd", x, square=False)
    if not compute_uv:
        return _linalg_svd.svd(x, full_matrices=full_matrices, compute_uv=False)
    s, u, v = _linalg_svd.svd(x, full_matrices=full_matrices, compute_uv=True)
    return u, s, _linalg.adjoint(v)


def _vector_norm(x, ord, axis, keepdims):
    if ord is None or ord == 2:
        return _math.sqrt(_math.reduce_sum(_math.multiply(x, _math.conj(x)), axis=axis, keepdims=keepdims))
    if ord == float("inf"):
        return _math.reduce_max(_math.abs(x), axis=axis, keepdims=keepdims)
    if ord == float("-inf"):
        return _math.reduce_min(_math.abs(x), axis=axis, keepdims=keepdims)
    if ord == 0:
        return _math.reduce_sum(cast(_math.not_equal(x, 0), x.dtype), axis=axis, keepdims=keepdims)
    if isinstance(ord, str):
        raise _errors.GradkitValueError(
            f"tf.keras.ops.norm got ord={ord!r} for a vector norm; it takes a number, inf or -inf (Keras raises "
            "ValueError). 'fro' and 'nuc' are matrix norms: pass a 2-tuple axis."
        )
    power = tensor(ord, x.dtype)
    total = _math.reduce_sum(_math.pow(_math.abs(x), power), axis=axis, keepdims=keepdims)
    return _math.pow(total, _math.divide(tensor(1.0, x.dtype), power))


def _matrix_norm(x, ord, axis, keepdims):
    row, col = (a % x.ndim for a in axis)
    if ord is None or ord == "fro":
        return _math.sqrt(_math.reduce_sum(_math.multiply(x, _math.conj(x)), axis=axis, keepdims=keepdims))
    if ord in (1, -1, float("inf"), float("-inf")):
        summed, other = (row, col) if ord in (1, -1) else (col, row)
        if not keepdims and other > summed:
            other -= 1
        reduce = _math.reduce_max if ord in (1, float("inf")) else _math.reduce_min
        return reduce(_math.reduce_sum(_math.abs(x), axis=summed, keepdims=keepdims), axis=other, keepdims=keepdims)
    if ord in ("nuc", 2, -2):
        values = _linalg_svd.svd(moveaxis(x, (row, col), (-2, -1)), compute_uv=False)
        reduce = {2: _math.reduce_max, -2: _math.reduce_min, "nuc": _math.reduce_sum}[ord]
        out = reduce(values, axis=-1)
        if keepdims:
            out = _array.expand_dims(_array.expand_dims(out, axis[0]), axis[1])
        return out
    raise _errors.GradkitValueError(
        f"tf.keras.ops.norm got ord={ord!r} for a matrix norm; it takes None, 'fro', 'nuc', 1, -1, 2, -2, inf or "
        "-inf (Keras raises ValueError)."
    )


@keras_op
def norm(x, ord=None, axis=None, keepdims=False):  # noqa: A002
    """``keras.ops.norm(x, ord=None, axis=None, keepdims=False)``: a vector norm over one axis or a matrix
    norm over two (``axis=None``: every axis of a vector or matrix); integers in float32."""
    x = tensor(x)
    x = cast(x, float_of(x.dtype))
    chosen = tuple(range(x.ndim)) if axis is None else ((int(axis),) if np.ndim(axis) == 0 else tuple(axis))
    if any(not -x.ndim <= a < x.ndim for a in chosen):
        raise _errors.GradkitValueError(
            f"tf.keras.ops.norm got axis={axis!r} for a tensor of rank {x.ndim}: every axis must be in "
            f"[{-x.ndim}, {x.ndim}) (Keras raises ValueError)."
        )
    if len(chosen) == 1:
        return _vector_norm(x, ord, chosen[0], keepdims)
    if len(chosen) == 2:
        return _matrix_norm(x, ord, chosen, keepdims)
    raise _errors.GradkitValueError(
        f"tf.keras.ops.norm got axis={axis!r} for a tensor of rank {x.ndim}: it takes one axis (a vector norm) or "
        "two (a matrix norm), as Keras does. Pass axis=-1, or reshape first for the norm of all entries."
    )


@keras_op
def slogdet(x):
    """``keras.ops.slogdet(x)``: ``(sign, log(abs(det)))`` of each square matrix."""
    return tuple(_linalg.slogdet(_matrices("slogdet", x)))


@keras_op
def pinv(x, rcond=None):
    """``keras.ops.pinv(x, rcond=None)``: the Moore-Penrose pseudo-inverse, singular values at or below
    ``rcond * max(s)`` dropped (``rcond`` TensorFlow's ``10 * max(M, N) * eps`` by default)."""
    return _linalg_svd.pinv(_matrices("pinv", x, square=False), rcond=rcond)


@keras_op
def matrix_rank(x, tol=None):
    """``keras.ops.matrix_rank(x, tol=None)``: the number of singular values above ``tol`` (default
    ``eps * max(M, N) * max(s)``), as int32."""
    return _linalg_svd.matrix_rank(_matrices("matrix_rank", x, square=False), tol=tol)


@keras_op
def cholesky_inverse(x, upper=False):
    """``keras.ops.cholesky_inverse(x, upper=False)``: the inverse of ``A`` from its Cholesky factor
    ``x`` (``A = x @ x^T`` for a lower ``x``, ``x^T @ x`` with ``upper``)."""
    x = _matrices("cholesky_inverse", x)
    identity = _array.eye(x.shape[-1], dtype=x.dtype)
    inverse = _linalg.triangular_solve(x, identity, lower=not upper)
    if upper:
        return _math.matmul(inverse, inverse, transpose_b=True)
    return _math.matmul(inverse, inverse, transpose_a=True)


@keras_op
def lstsq(a, b, rcond=None):
    """``keras.ops.lstsq(a, b, rcond=None)``: the least-squares ``x`` of ``a @ x = b`` for a matrix ``a``
    and a vector or matrix ``b``, from ``a``'s SVD (singular values below ``rcond * max(s)`` dropped;
    ``rcond`` ``eps * max(M, N)`` by default), as Keras computes it."""
    a, b = tensor(a), tensor(b)
    if a.ndim != 2 or b.ndim not in (1, 2) or a.shape[0] != b.shape[0]:
        raise _errors.GradkitValueError(
            f"tf.keras.ops.lstsq takes a matrix a (M, N) and b of shape (M,) or (M, K), but got {tuple(a.shape)} "
            f"and {tuple(b.shape)} (Keras raises)."
        )
    vector = b.ndim == 1
    if vector:
        b = _array.expand_dims(b, -1)
    b = cast(b, a.dtype)
    m, n = a.shape
    eps = float(np.finfo(np.dtype(a.dtype)).eps)
    if rcond is None:
        rcond = tensor(eps * max(m, n), a.dtype)
    else:
        rcond = tensor(rcond, a.dtype)
        rcond = _array.where(_math.less(rcond, 0), tensor(eps, a.dtype), rcond)
    s, u, v = _linalg_svd.svd(a, full_matrices=False, compute_uv=True)
    kept = _math.greater_equal(s, _math.multiply(rcond, s[0]))
    safe = _array.where(kept, s, _array.ones_like(s))
    s_inv = _array.expand_dims(_array.where(kept, _math.reciprocal(safe), _array.zeros_like(s)), -1)
    x = _math.matmul(v, _math.multiply(s_inv, _math.matmul(u, b, adjoint_a=True)))
    return _array.reshape(x, [-1]) if vector else x
