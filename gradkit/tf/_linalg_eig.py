"""``tf.linalg.eig`` and ``eigvals``: eigenvalues and eigenvectors of a general square matrix.

The outputs are complex (complex64 from float32 or complex64, complex128 from float64 or
complex128), as in TensorFlow. Eigenvectors have unit norm; their phase, and the order of the
eigenvalues, are LAPACK's (``jnp.linalg.eig``), which need not be TensorFlow's (Eigen's): code
that depends only on the eigenvalues as a set, or on phase-free quantities of the vectors,
gets the same results. The gradient is TensorFlow's ``_EigGrad`` (distinct eigenvalues; its
broadened ``1 / (e_j - e_i)`` gives 0 rather than inf for equal ones).

JAX computes ``eig`` on the CPU and, with a recent jaxlib (0.11 with CUDA), on NVIDIA GPUs.

>>> import gradkit.tf as tf
>>> e = tf.linalg.eigvals([[0.0, 1.0], [-1.0, 0.0]])
>>> sorted(e.numpy().imag.tolist())
[-1.0, 1.0]
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from . import _linalg_checks as _checks
from . import _linalg_svd
from ._convert import call, convert

_EIG_DTYPES = ("float32", "float64", "complex64", "complex128")


def _h(x):
    return jnp.conj(jnp.swapaxes(x, -1, -2))


def _matrix_diag(d):
    eye = jnp.eye(d.shape[-1], dtype=d.dtype)
    return d[..., None, :] * jnp.expand_dims(eye, tuple(range(d.ndim - 1)))


@jax.custom_vjp
def _eig_op(a):
    e, v = jnp.linalg.eig(a)
    return e, v


def _eig_fwd(a):
    # _eig_op itself computes the residuals, so a second derivative goes through this rule again.
    e, v = _eig_op(a)
    return (e, v), (a, e, v)


def _tf_eig_grad(e, v, grad_e, grad_v):
    """TensorFlow's ``_EigGrad`` for compute_v=True, in TensorFlow's convention for complex gradients."""
    vt = _h(v)
    # TensorFlow's _SafeReciprocal (x / (x * x + 1e-20), with the complex square) off the diagonal.
    f = jnp.conj(_linalg_svd._off_diagonal_reciprocal(e[..., None, :] - e[..., :, None]))
    vgv = vt @ grad_v
    diag_grad_part = _matrix_diag(jnp.diagonal(jnp.real(vgv), axis1=-2, axis2=-1).astype(vgv.dtype))
    mid = _matrix_diag(grad_e) + f * (vgv - (vt @ v) @ diag_grad_part)
    return jnp.linalg.solve(vt, mid @ vt)


def _eig_bwd(residuals, upstream):
    a, e, v = residuals
    ct_e, ct_v = upstream
    # JAX's cotangents are the conjugates of TensorFlow's gradients; TensorFlow casts the
    # complex gradient to a real input's dtype (its real part).
    grad_a = jnp.conj(_tf_eig_grad(e, v, jnp.conj(ct_e), jnp.conj(ct_v)))
    return (grad_a if jnp.iscomplexobj(a) else jnp.real(grad_a).astype(a.dtype),)


_eig_op.defvjp(_eig_fwd, _eig_bwd)


def _eigvals(a):
    return _eig_op(a)[0]


def _check(op: str, x) -> None:
    _checks.check_matrix(op, x, _EIG_DTYPES, what="tensor")


def eig(tensor, name=None):
    """``tf.linalg.eig``: ``(e, v)`` with ``tensor @ v == v @ diag(e)``, complex (see the module docstring)."""
    x = convert(tensor)
    _check("eig", x)
    return tuple(call(_eig_op, x))


def eigvals(tensor, name=None):
    """``tf.linalg.eigvals``: the (complex) eigenvalues of each (batched) square matrix."""
    x = convert(tensor)
    _check("eigvals", x)
    return call(_eigvals, x)
