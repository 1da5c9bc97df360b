"""Half-precision matrices for ``tf.linalg``'s factorizations: computed in float32, returned
in the input's dtype.

JAX's LAPACK-backed calls (solve, Cholesky, eigh, SVD, LU, QR, inverse) have no float16 or
bfloat16 kernels and raise a bare ``NotImplementedError``. A float16 program gets float16
results instead, rounded from float32 ones: what ``tf.linalg.inv`` and ``qr`` do, and more
than TensorFlow's CPU kernels for ``solve``, ``cholesky``, ``eigh``, ``svd``, ``lu``,
``lstsq``, ``pinv`` and the spectral norm, which refuse float16.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

_HALF = (jnp.float16, jnp.bfloat16)


def _half_dtype(args):
    for a in args:
        if getattr(a, "dtype", None) in _HALF:
            return a.dtype
    return None


def via_float32(fn):
    """``fn`` that computes half-precision inputs in float32 and casts its float32 results back."""

    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        half = _half_dtype(args)
        if half is None:
            return fn(*args, **kwargs)
        up = [a.astype(jnp.float32) if getattr(a, "dtype", None) in _HALF else a for a in args]
        out = fn(*up, **kwargs)
        return jax.tree_util.tree_map(lambda y: y.astype(half) if y.dtype == jnp.float32 else y, out)

    return wrapped
