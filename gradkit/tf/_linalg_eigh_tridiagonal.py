"""``tf.linalg.eigh_tridiagonal``: the eigenvalues (and eigenvectors) of a Hermitian tridiagonal
matrix given by its diagonal ``alpha`` and first off-diagonal ``beta``.

The matrix is formed and handed to ``jnp.linalg.eigh``, so values are LAPACK's and the gradient is
the exact one of the eigendecomposition (TensorFlow's differentiates its bisection iterations, which
gives ``d sum(eigenvalues)/d alpha`` other than ones). ``select='i'`` keeps the eigenvalues whose
indices are in ``select_range`` (inclusive), ``select='v'`` those in ``(lo, hi]`` (values known
when it runs: the result's size depends on them). An eigenvector's sign is LAPACK's.

>>> import gradkit.tf as tf
>>> tf.linalg.eigh_tridiagonal([2.0, 2.0], [1.0]).numpy().tolist()
[1.0, 3.0]
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from ._convert import call, convert, known_value


def _eigh(alpha, beta, *, start, stop, vectors):
    matrix = jnp.diag(jnp.real(alpha).astype(beta.dtype)) + jnp.diag(beta, 1) + jnp.diag(jnp.conj(beta), -1)
    values, vecs = jnp.linalg.eigh(matrix)
    if vectors:
        return values[start:stop], vecs[:, start:stop]
    return values[start:stop]


def eigh_tridiagonal(alpha, beta, eigvals_only=True, select="a", select_range=None, tol=None, name=None):
    """``tf.linalg.eigh_tridiagonal``; see the module docstring."""
    alpha, beta = convert(alpha), convert(beta)
    if alpha.ndim != 1 or beta.ndim != 1 or beta.shape[0] != max(alpha.shape[0] - 1, 0):
        raise _errors.InvalidArgumentValueError(
            f"tf.linalg.eigh_tridiagonal got alpha of shape {tuple(alpha.shape)} and beta of shape "
            f"{tuple(beta.shape)}: give the n diagonal entries and the n - 1 off-diagonal ones, as vectors."
        )
    if not jnp.issubdtype(alpha.dtype, jnp.inexact) or alpha.dtype != beta.dtype:
        raise _errors.InvalidArgumentTypeError(
            f"tf.linalg.eigh_tridiagonal got alpha of dtype {alpha.dtype} and beta of dtype {beta.dtype}: give float "
            "or complex tensors of one dtype, as TensorFlow requires."
        )
    n = int(alpha.shape[0])
    start, stop = 0, n
    if select in ("i", "v"):
        if select_range is None or len(np.asarray(select_range)) != 2:
            raise _errors.GradkitValueError(
                f"tf.linalg.eigh_tridiagonal(select={select!r}) needs select_range=[lo, hi], as TensorFlow does."
            )
        lo, hi = (float(x) for x in np.asarray(select_range))
        if select == "i":
            start, stop = int(lo), int(hi) + 1
        else:
            values = known_value(call(_eigh, alpha, beta, start=0, stop=n, vectors=False))
            if values is None:
                raise _errors.GradkitValueError(
                    "tf.linalg.eigh_tridiagonal(select='v') inside a tf.function needs the eigenvalues when it is "
                    "traced: how many fall in select_range sets the result's size. Use select='i' (indices) there."
                )
            inside = np.nonzero((values > lo) & (values <= hi))[0]
            start, stop = (int(inside[0]), int(inside[-1]) + 1) if inside.size else (0, 0)
    elif select != "a":
        raise _errors.GradkitValueError(
            f"tf.linalg.eigh_tridiagonal got select={select!r}; TensorFlow takes 'a' (all), 'v' (by value) or 'i' "
            "(by index)."
        )
    return call(_eigh, alpha, beta, start=start, stop=stop, vectors=not eigvals_only)
