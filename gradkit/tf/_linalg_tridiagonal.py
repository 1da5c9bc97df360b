"""``tf.linalg.tridiagonal_solve``, ``tridiagonal_matmul`` and ``banded_triangular_solve``.

Tridiagonal matrices come as TensorFlow takes them: ``'compact'`` (``[..., 3, M]``: super-,
main and subdiagonal; ``diagonals[..., 0, M-1]`` and ``diagonals[..., 2, 0]`` are not read),
``'sequence'`` (a list of the three) or ``'matrix'`` (``[..., M, M]``, only the three diagonals
read). ``tridiagonal_solve`` is Gaussian elimination with partial pivoting (LAPACK's ``gtsv``,
as TensorFlow's CPU kernel; ``partial_pivoting=False``: the Thomas algorithm), O(M) per
right-hand side. Its gradient is TensorFlow's (a solve with the transposed matrix); the
``perturb_singular`` option is not implemented.

``banded_triangular_solve`` reads ``bands [..., K, M]`` in TensorFlow's ``'LEFT_RIGHT'`` layout
and solves with the dense triangular matrix they describe (O(M^2) memory).

>>> import gradkit.tf as tf
>>> diagonals = [[1.0, 1.0, 0.0], [4.0, 4.0, 4.0], [0.0, 1.0, 1.0]]
>>> tf.linalg.tridiagonal_matmul(diagonals, [[1.0], [2.0], [3.0]]).numpy().tolist()
[[6.0], [12.0], [14.0]]
>>> tf.linalg.tridiagonal_solve(diagonals, [[6.0], [12.0], [14.0]]).numpy().round(5).tolist()
[[1.0], [2.0], [3.0]]
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from gradkit import _errors

from . import _linalg_checks as _checks
from ._convert import call, convert_like

_FORMATS = ("compact", "sequence", "matrix")


def _matmul(sup, main, sub, x):
    """The tridiagonal matrix (three ``[..., M]`` diagonals) times ``x [..., M, K]``; the two
    entries outside the matrix (``sup[..., M-1]``, ``sub[..., 0]``) are not read."""
    y = main[..., None] * x
    zero = jnp.zeros_like(x[..., :1, :])
    above = jnp.concatenate([sup[..., :-1, None] * x[..., 1:, :], zero], axis=-2)
    below = jnp.concatenate([zero, sub[..., 1:, None] * x[..., :-1, :]], axis=-2)
    return y + above + below


def _transposed(sup, main, sub):
    zero = jnp.zeros_like(main[..., :1])
    return jnp.concatenate([sub[..., 1:], zero], axis=-1), main, jnp.concatenate([zero, sup[..., :-1]], axis=-1)


def _eliminate(pivoting):
    def step(row, nxt):
        d, du, b = row  # row i as elimination left it
        dl, d1, du1, b1 = nxt  # row i + 1 as given (dl: its entry in column i)
        swap = (jnp.abs(d) < jnp.abs(dl)) if pivoting else jnp.zeros(d.shape, bool)
        pivot = jnp.where(swap, dl, d)
        # Row i of U (diagonal, first and second superdiagonal) and its right-hand side.
        u = (pivot, jnp.where(swap, d1, du), jnp.where(swap, du1, jnp.zeros_like(du1)))
        b_out = jnp.where(swap[..., None], b1, b)
        fact = jnp.where(swap, d, dl) / pivot
        # The other row minus fact times the pivot row (columns i + 1 and i + 2).
        next_d = jnp.where(swap, du - fact * d1, d1 - fact * du)
        next_du = jnp.where(swap, -fact * du1, du1)
        next_b = jnp.where(swap[..., None], b, b1) - fact[..., None] * b_out
        return (next_d, next_du, next_b), (u, b_out)

    return step


def _gtsv(sup, main, sub, rhs, pivoting):
    """Solve the tridiagonal system (diagonals ``[..., M]``, rhs ``[..., M, K]``) by Gaussian
    elimination, with LAPACK gtsv's partial pivoting when ``pivoting``."""
    m = main.shape[-1]
    if m <= 1:
        return rhs / main[..., None]
    first = lambda v: jnp.moveaxis(v, -1, 0)  # noqa: E731  (scan runs along the rows)
    rows = first(main), first(sup), jnp.moveaxis(rhs, -2, 0)
    zero = jnp.zeros_like(rows[1][:1])
    nxt = (first(sub)[1:], rows[0][1:], jnp.concatenate([rows[1][1:-1], zero]), rows[2][1:])
    (last_d, _, last_b), (u, b) = jax.lax.scan(_eliminate(pivoting), (rows[0][0], rows[1][0], rows[2][0]), nxt)

    def back(carry, row):
        x1, x2 = carry
        (u0, u1, u2), bi = row
        x = (bi - u1[..., None] * x1 - u2[..., None] * x2) / u0[..., None]
        return (x, x1), x

    x_last = last_b / last_d[..., None]
    _, xs = jax.lax.scan(back, (x_last, jnp.zeros_like(x_last)), (u, b), reverse=True)
    return jnp.moveaxis(jnp.concatenate([xs, x_last[None]]), 0, -2)


def _tridiagonal_solve(diagonals, rhs, pivoting):
    sup, main, sub = diagonals[..., 0, :], diagonals[..., 1, :], diagonals[..., 2, :]
    # Implicit differentiation, as TensorFlow's gradient: d rhs = solve(A^T, g), d A = -(d rhs) x^T
    # on the three diagonals.
    return jax.lax.custom_linear_solve(
        lambda x: _matmul(sup, main, sub, x),
        rhs,
        lambda _, b: _gtsv(sup, main, sub, b, pivoting),
        lambda _, b: _gtsv(*_transposed(sup, main, sub), b, pivoting),
    )


def _compact(op: str, diagonals, diagonals_format, rhs):
    """``(diagonals [..., 3, M], rhs)`` from any of TensorFlow's formats, converted to one dtype."""
    if diagonals_format not in _FORMATS:
        raise _errors.GradkitValueError(
            f"tf.linalg.{op}: diagonals_format={diagonals_format!r}; TensorFlow takes one of {', '.join(_FORMATS)}."
        )
    if diagonals_format == "sequence":
        if not isinstance(diagonals, (list, tuple)) or len(diagonals) != 3:
            raise _errors.GradkitValueError(
                f"tf.linalg.{op}: diagonals_format='sequence' takes a list [superdiag, maindiag, subdiag], "
                f"but got {type(diagonals).__name__}."
            )
        *parts, rhs = convert_like(*diagonals, rhs, what=f"tf.linalg.{op}")
        return _stack_sequence(op, *parts), rhs
    diagonals, rhs = convert_like(diagonals, rhs, what=f"tf.linalg.{op}")
    if diagonals_format == "matrix":
        _checks.check_matrix(op, diagonals, _checks.NO_HALF, what="diagonals")
        return call(_three_diagonals, diagonals), rhs
    if len(diagonals.shape) < 2 or diagonals.shape[-2] != 3:
        raise _errors.GradkitValueError(
            f"tf.linalg.{op}: diagonals of shape {tuple(diagonals.shape)}; the 'compact' format is [..., 3, M] "
            "(superdiagonal, main diagonal, subdiagonal)."
        )
    return diagonals, rhs


def _stack_sequence(op, sup, main, sub):
    m = main.shape[-1]
    for what, t in (("superdiagonal", sup), ("subdiagonal", sub)):
        if tuple(t.shape[:-1]) != tuple(main.shape[:-1]) or t.shape[-1] not in (m, m - 1):
            raise _errors.GradkitValueError(
                f"tf.linalg.{op}: {what} of shape {tuple(t.shape)} for a main diagonal of shape "
                f"{tuple(main.shape)}; TensorFlow needs the same batch dimensions and length {m} or {m - 1}."
            )
    if op == "tridiagonal_matmul" and (sup.shape[-1] != m or sub.shape[-1] != m):
        raise _errors.GradkitValueError(
            f"tf.linalg.tridiagonal_matmul: diagonals_format='sequence' needs three diagonals of length {m} "
            f"(the last superdiagonal and first subdiagonal entries are not read), got {sup.shape[-1]} and "
            f"{sub.shape[-1]}."
        )
    return call(_stack_padded, sup, main, sub)


def _stack_padded(sup, main, sub):
    m = main.shape[-1]
    pad = [(0, 0)] * (main.ndim - 1)
    if sup.shape[-1] == m - 1:
        sup = jnp.pad(sup, pad + [(0, 1)])
    if sub.shape[-1] == m - 1:
        sub = jnp.pad(sub, pad + [(1, 0)])
    return jnp.stack([sup, main, sub], axis=-2)


def _three_diagonals(a):
    zero = jnp.zeros_like(a[..., :1, 0])
    sup = jnp.concatenate([jnp.diagonal(a, 1, -2, -1), zero], axis=-1)
    sub = jnp.concatenate([zero, jnp.diagonal(a, -1, -2, -1)], axis=-1)
    return jnp.stack([sup, jnp.diagonal(a, 0, -2, -1), sub], axis=-2)


def tridiagonal_solve(
    diagonals,
    rhs,
    diagonals_format="compact",
    transpose_rhs=False,
    conjugate_rhs=False,
    name=None,
    partial_pivoting=True,
    perturb_singular=False,
):
    """``tf.linalg.tridiagonal_solve``: ``x`` with ``A @ x == rhs`` for the tridiagonal ``A``;
    ``rhs`` is ``[..., M]`` or ``[..., M, K]`` (``[..., K, M]`` with ``transpose_rhs``)."""
    if perturb_singular and not partial_pivoting:
        raise _errors.GradkitValueError(
            "tf.linalg.tridiagonal_solve: perturb_singular=True needs partial_pivoting=True."
        )
    if perturb_singular:
        raise _checks.GradkitNotImplementedError(
            "tf.linalg.tridiagonal_solve(perturb_singular=True) is not implemented by gradkit.tf; leave it out "
            "(singular systems then give inf/NaN), or add a small multiple of the identity to the main diagonal."
        )
    diagonals, rhs = _compact("tridiagonal_solve", diagonals, diagonals_format, rhs)
    _checks.check_dtype("tridiagonal_solve", diagonals, _checks.NO_HALF, "diagonals")
    _checks.check_same_dtype("tridiagonal_solve", diagonals, rhs, "diagonals")
    rank, rhs_rank = len(diagonals.shape), len(rhs.shape)
    if rhs_rank not in (rank - 1, rank) or tuple(rhs.shape[: rank - 2]) != tuple(diagonals.shape[:-2]):
        raise _errors.GradkitValueError(
            f"tf.linalg.tridiagonal_solve: diagonals of shape {tuple(diagonals.shape)} and rhs of shape "
            f"{tuple(rhs.shape)}; TensorFlow needs rhs [..., M] or [..., M, K] with the diagonals' batch dimensions."
        )
    vector = rhs_rank == rank - 1
    transpose = bool(transpose_rhs) and not vector
    rows = rhs.shape[-1] if vector or transpose else rhs.shape[-2]
    if rows != diagonals.shape[-1]:
        raise _errors.GradkitValueError(
            f"tf.linalg.tridiagonal_solve: {diagonals.shape[-1]} equations but rhs of shape {tuple(rhs.shape)} "
            f"has {rows} rows{' (transpose_rhs=True)' if transpose else ''}; TensorFlow needs them equal."
        )
    return call(
        _solve_rhs,
        diagonals,
        rhs,
        vector=vector,
        transpose=transpose,
        conjugate=bool(conjugate_rhs),
        pivoting=bool(partial_pivoting),
    )


def _solve_rhs(diagonals, rhs, vector, transpose, conjugate, pivoting):
    if conjugate:
        rhs = jnp.conj(rhs)
    if vector:
        rhs = rhs[..., None]
    elif transpose:
        rhs = jnp.swapaxes(rhs, -1, -2)
    x = _tridiagonal_solve(diagonals, rhs, pivoting)
    return x[..., 0] if vector else x


def _tridiagonal_matmul(diagonals, rhs):
    return _matmul(diagonals[..., 0, :], diagonals[..., 1, :], diagonals[..., 2, :], rhs)


def tridiagonal_matmul(diagonals, rhs, diagonals_format="compact", name=None):
    """``tf.linalg.tridiagonal_matmul``: the tridiagonal matrix times ``rhs [..., M, N]``."""
    diagonals, rhs = _compact("tridiagonal_matmul", diagonals, diagonals_format, rhs)
    _checks.check_dtype("tridiagonal_matmul", diagonals, _checks.NO_HALF, "diagonals")
    _checks.check_same_dtype("tridiagonal_matmul", diagonals, rhs, "diagonals")
    d, r = tuple(diagonals.shape), tuple(rhs.shape)
    if len(r) != len(d) or r[:-2] != d[:-2] or r[-2] != d[-1]:
        raise _errors.GradkitValueError(
            f"tf.linalg.tridiagonal_matmul: diagonals of shape {d} and rhs of shape {r}; TensorFlow needs rhs "
            f"{d[:-2] + (d[-1], 'N')} (same batch dimensions, a matrix: for a vector use rhs[..., None])."
        )
    return call(_tridiagonal_matmul, diagonals, rhs)


def _banded_triangular_solve(bands, rhs, lower, adjoint):
    a = _banded(bands, lower)
    batch = jnp.broadcast_shapes(a.shape[:-2], rhs.shape[:-2])
    a = jnp.broadcast_to(a, batch + a.shape[-2:])
    rhs = jnp.broadcast_to(rhs, batch + rhs.shape[-2:])
    return jax.scipy.linalg.solve_triangular(a, rhs, lower=lower, trans="C" if adjoint else 0)


def _banded(bands, lower):
    """The dense triangular matrix of ``bands [..., K, M]`` in TensorFlow's LEFT_RIGHT layout."""
    k, m = bands.shape[-2:]
    i = jnp.arange(m)[:, None]
    j = jnp.arange(m)[None, :]
    if lower:  # A[i, j] = bands[i - j, i] for 0 <= i - j < K (subdiagonals padded on the left)
        band = i - j
        inside = (band >= 0) & (band < k)
    else:  # A[i, j] = bands[K - 1 - (j - i), i] for 0 <= j - i < K (superdiagonals padded on the right)
        band = k - 1 - (j - i)
        inside = (band >= 0) & (band < k)
    entries = bands[..., jnp.clip(band, 0, k - 1), jnp.broadcast_to(i, (m, m))]
    return jnp.where(jnp.broadcast_to(inside, entries.shape), entries, jnp.zeros_like(entries))


def banded_triangular_solve(bands, rhs, lower=True, adjoint=False, name=None):
    """``tf.linalg.banded_triangular_solve``: solve with the triangular matrix whose diagonal and
    ``K - 1`` sub- (``lower``) or superdiagonals are the rows of ``bands [..., K, M]``."""
    bands, rhs = convert_like(bands, rhs, what="tf.linalg.banded_triangular_solve")
    _checks.check_dtype("banded_triangular_solve", bands, _checks.LAPACK, "bands")
    _checks.check_same_dtype("banded_triangular_solve", bands, rhs, "bands")
    b, r = tuple(bands.shape), tuple(rhs.shape)
    if len(b) < 2 or len(r) < 2 or r[-2] != b[-1] or not _checks.broadcasts(b[:-2], r[:-2]):
        raise _errors.GradkitValueError(
            f"tf.linalg.banded_triangular_solve: bands of shape {b} and rhs of shape {r}; TensorFlow needs "
            "bands [..., K, M] and rhs [..., M, N] (batch dimensions broadcast); for a vector rhs write "
            "rhs[..., None] and take [..., 0] of the result."
        )
    return call(_banded_triangular_solve, bands, rhs, lower=bool(lower), adjoint=bool(adjoint))
