"""Matrix functions: ``tf.linalg.expm`` and ``tf.linalg.sqrtm``.

``expm`` is TensorFlow's algorithm (Higham's scaling and squaring with Padé approximants of
degree 3/5/7 for 32-bit types, up to 13 for 64-bit ones; ``jax.scipy.linalg.expm`` is a port
of it), differentiated through, as TensorFlow's gradient is. Non-finite entries give an all-NaN
result, as there. It squares at most 48 times: a matrix whose 1-norm exceeds the Padé bound
times 2**48 (about 1e15) gives NaN where TensorFlow would keep squaring.

``sqrtm`` is the principal square root (``jax.scipy.linalg.sqrtm``, by a Schur decomposition,
which JAX computes on the CPU only: on a GPU, place the input on the CPU device). A real matrix
with a negative real eigenvalue has no real square root: TensorFlow returns NaN there, and so does gradkit (it detects the imaginary part of
the complex root). The gradient solves TensorFlow's Sylvester equation ``R dR + dR R = dA``
through its ``(M*M) x (M*M)`` Kronecker form, as ``_MatrixSquareRootGrad`` does.

``tf.linalg.logm`` is not provided: JAX has no matrix logarithm.

>>> import gradkit.tf as tf
>>> tf.linalg.expm([[0.0, 0.0], [0.0, 0.0]]).numpy().tolist()
[[1.0, 0.0], [0.0, 1.0]]
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from . import _linalg_checks as _checks
from ._convert import call, convert

_MAX_SQUARINGS = 48


def _expm(x):
    if x.shape[-1] == 0:
        return x
    if x.dtype == jnp.float16:  # JAX's expm has no float16; TensorFlow's uses the float32 branch
        return jax.scipy.linalg.expm(x.astype(jnp.float32), max_squarings=_MAX_SQUARINGS).astype(x.dtype)
    return jax.scipy.linalg.expm(x, max_squarings=_MAX_SQUARINGS)


def expm(input, name=None):  # noqa: A002
    """``tf.linalg.expm``: the matrix exponential of each (batched) square matrix."""
    x = convert(input)
    # TensorFlow raises a ValueError here (a Python check, not a kernel's).
    _checks.check_dtype("expm", x, _checks.LAPACK, error=_errors.GradkitValueError)
    _checks.check_matrix("expm", x)
    return call(_expm, x)


def _complex_sqrtm(a):
    return jax.scipy.linalg.sqrtm(a)


def _sqrtm_value(a):
    if a.shape[-1] == 0:  # the root of a 0x0 matrix is itself, as TensorFlow returns it
        return a
    r = jnp.vectorize(_complex_sqrtm, signature="(n,n)->(n,n)")(a)
    if jnp.iscomplexobj(a):
        return r.astype(a.dtype)
    # A real matrix's principal root is real unless it has a negative eigenvalue (then TensorFlow's
    # real Schur algorithm gives NaN): an imaginary part above rounding marks that case.
    scale = jnp.max(jnp.abs(r), axis=(-2, -1), keepdims=True)
    tolerance = 100 * a.shape[-1] * jnp.finfo(a.dtype).eps * scale
    real_root = jnp.all(jnp.abs(r.imag) <= tolerance, axis=(-2, -1), keepdims=True)
    return jnp.where(real_root, r.real, jnp.nan).astype(a.dtype)


@jax.custom_jvp
def _sqrtm(a):
    return _sqrtm_value(a)


@_sqrtm.defjvp
def _sqrtm_jvp(primals, tangents):
    (a,), (da,) = primals, tangents
    r = _sqrtm(a)
    m = a.shape[-1]
    eye = jnp.eye(m, dtype=a.dtype)
    # R dR + dR R = dA, row-major vectorized: (R (x) I + I (x) R^T) vec(dR) = vec(dA).
    kron = jnp.einsum("...ik,jl->...ijkl", r, eye) + jnp.einsum("ik,...lj->...ijkl", eye, r)
    kron = kron.reshape(a.shape[:-2] + (m * m, m * m))
    dr = jnp.linalg.solve(kron, da.reshape(a.shape[:-2] + (m * m, 1)))
    return r, dr.reshape(a.shape)


def sqrtm(input, name=None):  # noqa: A002
    """``tf.linalg.sqrtm``: the principal square root of each (batched) square matrix."""
    x = convert(input)
    _checks.check_matrix("sqrtm", x)
    try:
        return call(_sqrtm_half if np.dtype(x.dtype) == np.float16 else _sqrtm, x)
    except NotImplementedError as e:
        if "schur" not in str(e):
            raise
        raise _checks.GradkitNotImplementedError(
            "tf.linalg.sqrtm needs JAX's Schur decomposition, which JAX implements on the CPU only, but the "
            "input is on another device. Compute it on the CPU: with jax.default_device(jax.devices('cpu')[0]): "
            "tf.linalg.sqrtm(tf.constant(x.numpy()))."
        ) from e


def _sqrtm_half(a):
    # LAPACK has no half-precision Schur decomposition: compute in float32.
    return _sqrtm(a.astype(jnp.float32)).astype(a.dtype)
