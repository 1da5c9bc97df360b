"""``tf.linalg.lstsq``: linear least squares, by TensorFlow's two algorithms.

``fast=True`` (the default) solves the regularized normal equations by Cholesky, as
TensorFlow's composite implementation does: ``(A^H A + l2 I)^-1 A^H b`` for a tall or square
``A`` and ``A^H (A A^H + l2 I)^-1 b`` for a wide one; batch dimensions broadcast, and the
gradient (``l2_regularizer`` included) is that of these formulas. ``fast=False`` gives the
minimum-norm least-squares solution, exact for rank-deficient ``A`` too, ignoring
``l2_regularizer``, as TensorFlow does; TensorFlow defines no gradient there (it raises),
gradkit differentiates the pseudo-inverse solution.

>>> import gradkit.tf as tf
>>> x = tf.linalg.lstsq([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], [[1.0], [1.0], [3.0]])
>>> print(x.numpy().round(4))
[[1.3333]
 [1.3333]]
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from . import _linalg_checks as _checks
from . import _linalg_half
from ._convert import call, convert_like


def _h(x):
    return jnp.conj(jnp.swapaxes(x, -1, -2))


def _cholesky_solve(chol, rhs):
    y = jax.scipy.linalg.solve_triangular(chol, rhs, lower=True)
    return jax.scipy.linalg.solve_triangular(chol, y, lower=True, trans="C")


@_linalg_half.via_float32
def _lstsq_fast(a, b, l2):
    batch = jnp.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = jnp.broadcast_to(a, batch + a.shape[-2:])
    b = jnp.broadcast_to(b, batch + b.shape[-2:])
    m, n = a.shape[-2:]
    overdetermined = m >= n
    gramian = _h(a) @ a if overdetermined else a @ _h(a)
    eye = jnp.eye(gramian.shape[-1], dtype=a.dtype)
    gramian = gramian + l2 * jnp.expand_dims(eye, tuple(range(len(batch))))
    chol = jnp.linalg.cholesky(gramian)
    if overdetermined:
        return _cholesky_solve(chol, _h(a) @ b)
    return _h(a) @ _cholesky_solve(chol, b)


@_linalg_half.via_float32
def _lstsq_min_norm(a, b):
    return jnp.linalg.pinv(a) @ b


def lstsq(matrix, rhs, l2_regularizer=0.0, fast=True, name=None):
    """``tf.linalg.lstsq``: ``x`` minimizing ``||matrix @ x - rhs||^2 + l2_regularizer ||x||^2``
    for each (batched) ``matrix [..., M, N]`` and ``rhs [..., M, K]``; see the module docstring
    for ``fast``."""
    a, b = convert_like(matrix, rhs, what="tf.linalg.lstsq")
    _checks.check_matrix("lstsq", a, what="matrix", square=False)
    _checks.check_rhs("lstsq", a, b, same_batch=not fast)
    if not fast:
        _check_double_regularizer(l2_regularizer)
        return call(_lstsq_min_norm, a, b)
    l2 = _checks.operand_like("lstsq", a, l2_regularizer, "l2_regularizer")
    if _checks.dtype_name(a) == "complex128" and _known_nonzero(l2_regularizer):
        raise _checks.GradkitNotImplementedError(
            "tf.linalg.lstsq of a complex128 matrix with l2_regularizer != 0 is disabled in TensorFlow "
            "(poor accuracy), and gradkit.tf follows it. Use fast=True with complex64, or solve the "
            "normal equations yourself: tf.linalg.solve(A^H A + l2 I, A^H b)."
        )
    return call(_lstsq_fast, a, b, l2)


def _check_double_regularizer(l2_regularizer) -> None:
    """TensorFlow's ``fast=False`` kernel takes ``l2_regularizer`` as a float64 tensor: a Python or
    NumPy number is converted, a tensor of another dtype is refused. Without jax's x64 mode a
    float64 tensor is float32 here, so only a tensor that is not float32 can be told apart then."""
    from gradkit._core.variable import Variable
    from gradkit._tape.tensor import Tensor

    if not isinstance(l2_regularizer, (Tensor, Variable)):
        return
    dtype = np.dtype(l2_regularizer.dtype)
    double = np.dtype(np.float64) if jax.config.jax_enable_x64 else np.dtype(np.float32)
    if dtype != double:
        raise _errors.GradkitTypeError(
            f"tf.linalg.lstsq(..., fast=False): l2_regularizer is a tensor of dtype {dtype.name}; TensorFlow "
            "takes a float64 one there. Pass a Python float (float(l2_regularizer)) or a float64 tensor."
        )


def _known_nonzero(value) -> bool:
    from ._convert import known_value

    known = known_value(value)
    return known is None or bool((known != 0).any())
