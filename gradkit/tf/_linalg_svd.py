"""``tf.linalg.svd``, ``pinv``, ``matrix_rank`` and ``lstsq``, as TensorFlow computes them.

``svd`` returns ``s`` alone or ``(s, u, v)`` with ``v`` itself (not ``v^H``, which
``jnp.linalg.svd`` returns), ``a == u @ diag(s) @ adjoint(v)``. Its gradient is TensorFlow's
``_SvdGrad``: degenerate singular values get a Lorentz-broadened ``1 / (s_j^2 - s_i^2)``
(0 where two are equal, where JAX's rule gives inf or NaN), and ``full_matrices=True`` is
differentiable when the matrix is at most one row or column away from square.

>>> import gradkit.tf as tf
>>> s, u, v = tf.linalg.svd([[3.0, 0.0], [0.0, -2.0]])
>>> s.numpy().tolist()
[3.0, 2.0]
>>> int(tf.linalg.matrix_rank([[1.0, 2.0], [2.0, 4.0]]))
1
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from . import _linalg_checks as _checks
from . import _linalg_half
from ._convert import call, convert


def _h(x):
    return jnp.conj(jnp.swapaxes(x, -1, -2))


def _matrix_diag(d):
    eye = jnp.eye(d.shape[-1], dtype=d.dtype)
    return d[..., None, :] * jnp.expand_dims(eye, tuple(range(d.ndim - 1)))


def _safe_reciprocal(x):
    # TensorFlow's _SafeReciprocal: 1/x broadened so that x == 0 gives 0, not inf.
    return x / (x * x + 1e-20)


def _off_diagonal_reciprocal(x):
    """TensorFlow's ``matrix_set_diag(_SafeReciprocal(x), 0)``. The diagonal is never computed
    (a 1 stands in for its zeros), so a derivative of this gradient does not meet the
    reciprocal's 1e40 derivative at 0 (TensorFlow's ReciprocalGrad gives 0 for the zero
    upstream that its set_diag sends there; JAX's chain rule would give 0 * inf = NaN)."""
    off_diagonal = ~jnp.eye(x.shape[-1], dtype=bool)
    safe = jnp.where(off_diagonal, x, jnp.ones_like(x))
    return jnp.where(off_diagonal, _safe_reciprocal(safe), jnp.zeros_like(x))


def _tf_svd_grad(s, u, v, grad_s, grad_u, grad_v, full_matrices):
    """TensorFlow's ``_SvdGrad`` (in TensorFlow's convention for complex gradients)."""
    dtype = u.dtype
    m, n = u.shape[-2], v.shape[-2]
    grad_s_mat = _matrix_diag(grad_s.astype(dtype))
    s = s.astype(dtype)
    shape = (m, n)
    use_adjoint = m > n
    if use_adjoint:  # the gradient for a^H = v s u^H, transposed back at the end
        m, n, u, v, grad_u, grad_v = n, m, v, u, grad_v, grad_u
    if full_matrices and abs(m - n) > 1:
        raise _checks.GradkitNotImplementedError(
            f"tf.linalg.svd(full_matrices=True) of a {shape[0]}x{shape[1]} matrix has no gradient, as in "
            "TensorFlow (only when the sides differ by at most 1): the extra singular vectors are not unique. "
            "Use full_matrices=False."
        )
    s_mat = _matrix_diag(s)
    s2 = s * s
    f = _off_diagonal_reciprocal(s2[..., None, :] - s2[..., :, None])
    s_inv_mat = _matrix_diag(_safe_reciprocal(s))
    v1, grad_v1 = v[..., :, :m], grad_v[..., :, :m]
    f_u = f * (_h(u) @ grad_u)
    v_gv = _h(v1) @ grad_v1
    f_v = f * v_gv
    term1_nouv = grad_s_mat + (f_u + _h(f_u)) @ s_mat + s_mat @ (f_v + _h(f_v))
    grad_a = u @ term1_nouv @ _h(v1)
    if m != n:
        gv1t = _h(grad_v1)
        term2_nous = gv1t - (gv1t @ v1) @ _h(v1)
        if full_matrices:
            v2, grad_v2 = v[..., :, m:n], grad_v[..., :, m:n]
            term2_nous = term2_nous - (_h(v1) @ grad_v2) @ _h(v2)
        grad_a = grad_a + (u @ s_inv_mat) @ term2_nous
    if jnp.issubdtype(dtype, jnp.complexfloating):
        diag_vgv = _matrix_diag(jnp.diagonal(v_gv, axis1=-2, axis2=-1))
        grad_a = grad_a + 0.5 * (u @ (s_inv_mat @ (_h(diag_vgv) - diag_vgv)) @ _h(v1))
    return _h(grad_a) if use_adjoint else grad_a


@functools.partial(jax.custom_vjp, nondiff_argnums=(1, 2))
def _svd_op(a, full_matrices, compute_uv):
    """``tf.linalg.svd``'s values with TensorFlow's gradient (a pure JAX function)."""
    if not compute_uv:
        return jnp.linalg.svd(a, compute_uv=False).astype(a.real.dtype)
    u, s, vh = jnp.linalg.svd(a, full_matrices=full_matrices)
    return s.astype(a.real.dtype), u, _h(vh)


def _svd_fwd(a, full_matrices, compute_uv):
    # _svd_op itself (not jnp.linalg.svd) computes the residuals, so that a gradient of this
    # gradient goes through TensorFlow's rule again, as TensorFlow's does.
    out = _svd_op(a, full_matrices, compute_uv)
    return out, (out if compute_uv else _svd_op(a, False, True))


def _svd_bwd(full_matrices, compute_uv, residuals, upstream):
    s, u, v = residuals
    if compute_uv:
        grad_s, grad_u, grad_v = upstream
    else:
        grad_s, grad_u, grad_v = upstream, None, None
    # JAX's cotangents are the conjugates of TensorFlow's gradients (for complex values).
    if grad_u is None:  # TensorFlow's formula for compute_uv=False: u diag(grad_s) v^H
        return (jnp.conj(u @ _matrix_diag(grad_s.astype(u.dtype)) @ _h(v)),)
    grad_a = _tf_svd_grad(s, u, v, grad_s, jnp.conj(grad_u), jnp.conj(grad_v), full_matrices)
    return (jnp.conj(grad_a),)


_svd_op.defvjp(_svd_fwd, _svd_bwd)
_svd_half = _linalg_half.via_float32(_svd_op)


def svd(tensor, full_matrices=False, compute_uv=True, name=None):
    """``tf.linalg.svd``: singular values ``s`` (descending, real), or ``(s, u, v)`` with
    ``tensor == u @ diag(s) @ adjoint(v)``; ``v`` is not transposed, as in TensorFlow."""
    a = convert(tensor)
    _checks.check_matrix("svd", a, what="tensor", square=False)
    out = call(_svd_half, a, full_matrices=bool(full_matrices), compute_uv=bool(compute_uv))
    return tuple(out) if compute_uv else out


def _pinv(a, rcond):
    s, u, v = _svd_half(a, False, True)
    batch = jnp.broadcast_shapes(rcond.shape, s.shape[:-1])  # rcond broadcasts against the batch
    rank = s.ndim - 1
    s, u, v = (jnp.broadcast_to(x, batch + x.shape[rank:]) for x in (s, u, v))
    cutoff = jnp.broadcast_to(rcond, batch) * jnp.max(s, axis=-1, initial=-np.inf)  # no values: -inf, as TF's
    # TensorFlow's formula: a singular value at or below the cutoff becomes inf (1/s = 0).
    s = jnp.where(s > cutoff[..., None], s, jnp.asarray(np.inf, s.dtype))
    return (v / s[..., None, :]) @ _h(u)


def pinv(a, rcond=None, validate_args=False, name=None):
    """``tf.linalg.pinv``: the Moore-Penrose pseudo-inverse from the SVD, dropping singular
    values at or below ``rcond * max(s)``; ``rcond`` defaults to TensorFlow's
    ``10 * max(rows, cols) * eps`` (not NumPy's 1e-15). Its gradient is that of TensorFlow's
    formula through ``svd``'s gradient."""
    a = convert(a)
    _checks.check_matrix("pinv", a, _checks.REAL_FLOATS, what="a", square=False)
    if rcond is None:
        rcond = 10.0 * max(a.shape[-2:]) * float(jnp.finfo(a.dtype).eps)
    return call(_pinv, a, _checks.operand_like("pinv", a, rcond, "rcond"))


def _matrix_rank(a, tol):
    s = _svd_half(a, False, False)
    if tol is None:
        eps = jnp.finfo(a.dtype).eps
        tol = eps * max(a.shape[-2:]) * jnp.max(s, axis=-1, keepdims=True, initial=-np.inf)
    shape = jnp.broadcast_shapes(s.shape, tol.shape)
    above = jnp.broadcast_to(s, shape) > jnp.broadcast_to(tol, shape)
    return jnp.sum(above, axis=-1, dtype=jnp.int32)


def matrix_rank(a, tol=None, validate_args=False, name=None):
    """``tf.linalg.matrix_rank``: the number of singular values above ``tol`` (default
    ``eps * max(rows, cols) * max(s)``), as int32; not differentiable, as in TensorFlow."""
    a = convert(a)
    _checks.check_matrix("matrix_rank", a, _checks.REAL_FLOATS, what="a", square=False)
    if tol is None:
        return call(_matrix_rank, a, tol=None)
    return call(_matrix_rank, a, _checks.operand_like("matrix_rank", a, tol, "tol"))
