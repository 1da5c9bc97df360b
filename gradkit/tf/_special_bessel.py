"""Bessel functions of the first and second kind and modified ones of the second kind:
``tf.math.special.bessel_j0``, ``bessel_j1``, ``bessel_y0``, ``bessel_y1``, ``bessel_k0``,
``bessel_k0e``, ``bessel_k1`` and ``bessel_k1e``, with TensorFlow's dtypes, its values where
the functions are not defined (``y0`` of ``x <= 0`` is -inf, ``k0`` of ``x <= 0`` inf, ...) and
its gradient formulas (``j0' = -j1``, ``k0e' = k0e - k1e``, ...).

How they are computed, in the input's float type (float32 for float16):

- ``J`` and ``Y`` for ``|x| >= 1`` from Hankel's integral of the Hankel function,
  ``H(x) = J(x) + i Y(x) = sqrt(2 / (pi x)) e^{i chi} (1 / Gamma(v + 1/2)) int_0^inf e^{-u}
  u^{v - 1/2} (1 + i u / 2x)^{v - 1/2} du`` with ``chi = x - v pi / 2 - pi / 4``: with
  ``u = s^2`` a smooth integrand with a Gaussian tail, which the trapezoidal rule takes to full
  precision in a few dozen points; the phase is formed from ``cos x`` and ``sin x`` of the
  exact argument, so large arguments lose nothing to it. Below 1, their power series.
- ``K`` from ``K_v(x) = int_0^inf e^{-x cosh t} cosh(v t) dt``, scaled as ``e^x K_v(x) =
  int e^{-2 x sinh^2(t / 2)} cosh(v t) dt``, by the trapezoidal rule over a range that ends where
  the integrand is negligible (exponentially accurate for these analytic integrands).

>>> import gradkit.tf as tf
>>> [round(v, 6) for v in tf.math.special.bessel_j0([0.0, 2.404825557695773]).numpy().tolist()]
[1.0, 0.0]
>>> round(float(tf.math.special.bessel_k0(1.0)), 6)
0.421024
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ._kernel_dtypes import unary as _unary
from ._special import _safe_x, _with_derivative

_HALF_F32_F64 = ("float16", "float32", "float64")
_EULER = 0.5772156649015329

# Hankel's integral: nodes s_k = k h, k = 0..N, h = 0.2 (the integrand's nearest singularity is
# sqrt(x) from the real axis: at x >= 1 the rule's error is below e^-31), to s = 6 (e^-36).
_HANKEL_NODES = np.arange(31) * 0.2
_HANKEL_WEIGHTS = np.where(_HANKEL_NODES == 0, 0.1, 0.2)
# The K integral: N + 1 nodes on [0, t_max(x)].
_K_NODES = 64


def _compute_type(x):
    return jnp.promote_types(x.dtype, jnp.float32)


def _hankel(x, order):
    """``(J_order(x), Y_order(x))`` for ``x >= 1`` (orders 0 and 1)."""
    nodes = (1,) * x.ndim + (-1,)  # along a new last axis
    s = jnp.asarray(_HANKEL_NODES, x.dtype).reshape(nodes)
    w = jnp.asarray(_HANKEL_WEIGHTS, x.dtype).reshape(nodes)
    a = s * s / (2 * x[..., None])  # u / 2x
    power = order - 0.5
    # (1 + i a)^power in polar form: modulus (1 + a^2)^(power / 2), angle power * atan(a).
    modulus = jnp.power(1 + a * a, power / 2)
    angle = power * jnp.arctan(a)
    # e^{-s^2} s^{2 order} * 2 / Gamma(order + 1/2), the u = s^2 substitution's factor included.
    scale = 2 / np.sqrt(np.pi) if order == 0 else 4 / np.sqrt(np.pi)
    weight = w * jnp.exp(-s * s) * (s * s if order == 1 else jnp.ones_like(s)) * scale
    real = jnp.sum(weight * modulus * jnp.cos(angle), axis=-1)
    imag = jnp.sum(weight * modulus * jnp.sin(angle), axis=-1)
    phi = order * np.pi / 2 + np.pi / 4
    cos_chi = jnp.cos(x) * np.cos(phi) + jnp.sin(x) * np.sin(phi)
    sin_chi = jnp.sin(x) * np.cos(phi) - jnp.cos(x) * np.sin(phi)
    amplitude = jnp.sqrt(2 / (np.pi * x))
    return amplitude * (real * cos_chi - imag * sin_chi), amplitude * (real * sin_chi + imag * cos_chi)


def _series_j(x, order, terms=10):
    """``J_order(x)`` by its power series (``|x| < 1``: fast, no cancellation)."""
    q = -(x * x) / 4
    term = jnp.ones_like(x) if order == 0 else x / 2
    total = term
    for k in range(1, terms):
        term = term * q / (k * (k + order))
        total = total + term
    return total


def _series_y0(x, j0, terms=10):
    """``Y0(x) = (2 / pi) (log(x / 2) + gamma) J0(x) + (2 / pi) sum (-1)^{k+1} H_k (x^2/4)^k / k!^2``."""
    q = (x * x) / 4
    term, harmonic, total = jnp.ones_like(x), 0.0, jnp.zeros_like(x)
    for k in range(1, terms):
        term = term * q / (k * k)
        harmonic += 1.0 / k
        total = total + (harmonic if k % 2 else -harmonic) * term
    return (2 / np.pi) * ((jnp.log(x / 2) + _EULER) * j0 + total)


def _series_y1(x, j1, terms=10):
    """``Y1(x) = (2 / pi) J1(x) log(x / 2) - 2 / (pi x) - (1 / pi) sum (-1)^k (psi(k + 1) +
    psi(k + 2)) (x / 2)^{2k + 1} / (k! (k + 1)!)``."""
    q = -(x * x) / 4
    term = x / 2
    psi_sum = -2 * _EULER + 1.0  # psi(1) + psi(2)
    total = psi_sum * term
    for k in range(1, terms):
        term = term * q / (k * (k + 1))
        psi_sum += 1.0 / k + 1.0 / (k + 1)
        total = total + psi_sum * term
    return (2 / np.pi) * j1 * jnp.log(x / 2) - 2 / (np.pi * x) - total / np.pi


def _j(x, order):
    dtype = x.dtype
    x = x.astype(_compute_type(x))
    ax = jnp.abs(x)
    large = ax >= 1
    far = jnp.where(large, ax, jnp.ones_like(ax))
    value = jnp.where(large, _hankel(far, order)[0], _series_j(jnp.where(large, jnp.zeros_like(ax), ax), order))
    if order == 1:
        value = jnp.sign(x) * value  # J1 is odd
    return value.astype(dtype)


def _y(x, order):
    dtype = x.dtype
    x = x.astype(_compute_type(x))
    large = x >= 1
    near = jnp.where(large | (x <= 0), jnp.full_like(x, 0.5), x)
    far = jnp.where(large, x, jnp.ones_like(x))
    small = (_series_y0 if order == 0 else _series_y1)(near, _series_j(near, order))
    value = jnp.where(large, _hankel(far, order)[1], small)
    # TensorFlow's kernels: -inf at 0 and below for Y0; for Y1 -inf below 0, and at 0 NaN (float32,
    # float16) or -inf (float64).
    value = jnp.where(x <= 0, -jnp.inf, value) if order == 0 else jnp.where(x < 0, -jnp.inf, value)
    if order == 1:
        value = jnp.where(x == 0, -jnp.inf if dtype == np.float64 else jnp.nan, value)
    return value.astype(dtype)


def _k_scaled(x, order):
    """``e^x K_order(x)`` for ``x > 0``."""
    # The integrand e^{-2 x sinh^2(t/2)} cosh(order t) falls below e^-24 (relative) where
    # 2 x sinh^2(t / 2) = 24 + order t; its end, with its share of cosh, bounds the range.
    end = 2 * jnp.arcsinh(jnp.sqrt((24 + 2 * order * jnp.log1p(24 / x)) / (2 * x)))
    h = jax.lax.stop_gradient(end / _K_NODES)
    t = h[..., None] * jnp.arange(_K_NODES + 1, dtype=x.dtype).reshape((1,) * x.ndim + (-1,))
    f = jnp.exp(-(x[..., None] * (2 * jnp.square(jnp.sinh(t / 2)))))  # 2 x first would overflow near the largest x
    if order == 1:
        f = f * jnp.cosh(t)
    return h * (jnp.sum(f, axis=-1) - f[..., 0] / 2)


def _k(x, order, scaled):
    dtype = x.dtype
    x = x.astype(_compute_type(x))
    positive = x > 0
    finite = positive & jnp.isfinite(x)
    safe = jnp.where(finite, x, jnp.ones_like(x))
    # Far out the quadrature's steps underflow: there the asymptotic series, whose next term is
    # below the dtype's precision.
    far = safe > 1e30
    value = jnp.where(
        far,
        np.sqrt(np.pi / 2) / jnp.sqrt(safe) * (1 + (4 * order**2 - 1) / 8 / safe),
        _k_scaled(jnp.where(far, jnp.ones_like(safe), safe), order),
    )
    if not scaled:
        value = value * jnp.exp(-safe)
    # TensorFlow's: 0 at +inf (scaled too: it falls as 1 / sqrt(x)), inf at 0 and below, NaN for NaN.
    value = jnp.where(finite, value, jnp.where(positive, jnp.zeros_like(x), jnp.full_like(x, jnp.inf)))
    return jnp.where(jnp.isnan(x), x, value).astype(dtype)


def _j1_derivative(x, y):
    # J1'(0) = 1/2, which TensorFlow's gradient puts there too (its formula divides by x).
    zero, safe = _safe_x(x)
    return jnp.where(zero, jnp.full_like(x, 0.5), _j0(x) - y / safe)


_j1 = _with_derivative(lambda x: _j(x, 1), _j1_derivative)
_j0 = _with_derivative(lambda x: _j(x, 0), lambda x, y: -_j1(x))
_y1 = _with_derivative(lambda x: _y(x, 1), lambda x, y: _y0(x) - y / x)
_y0 = _with_derivative(lambda x: _y(x, 0), lambda x, y: -_y1(x))
_k1 = _with_derivative(lambda x: _k(x, 1, False), lambda x, y: -_k0(x) - y / x)
_k0 = _with_derivative(lambda x: _k(x, 0, False), lambda x, y: -_k1(x))
_k1e = _with_derivative(lambda x: _k(x, 1, True), lambda x, y: y * (1 - 1 / x) - _k0e(x))
_k0e = _with_derivative(lambda x: _k(x, 0, True), lambda x, y: y - _k1e(x))

bessel_j0 = _unary(_j0, "bessel_j0", _HALF_F32_F64)
bessel_j1 = _unary(_j1, "bessel_j1", _HALF_F32_F64)
bessel_y0 = _unary(_y0, "bessel_y0", _HALF_F32_F64)
bessel_y1 = _unary(_y1, "bessel_y1", _HALF_F32_F64)
bessel_k0 = _unary(_k0, "bessel_k0", _HALF_F32_F64)
bessel_k0e = _unary(_k0e, "bessel_k0e", _HALF_F32_F64)
bessel_k1 = _unary(_k1, "bessel_k1", _HALF_F32_F64)
bessel_k1e = _unary(_k1e, "bessel_k1e", _HALF_F32_F64)
