"""Special functions: ``tf.math.erfc``, ``erfinv``, ``erfcinv``, ``ndtri``, ``lbeta``,
``polygamma``, ``zeta``, ``igamma``, ``igammac``, ``betainc``, the modified Bessel functions
``bessel_i0``/``i0e``/``i1``/``i1e``, and ``tf.math.special``'s ``dawsn``, ``expint``,
``fresnel_cos``, ``fresnel_sin`` and ``spence``.

Values, dtypes and gradients are TensorFlow's: each op takes the dtypes TensorFlow's kernel
takes (most only float32 and float64) and differentiates with TensorFlow's gradient formula.
Where TensorFlow defines no gradient for an argument (the order ``a`` of ``polygamma``, ``x``
of ``zeta``, ``a`` and ``b`` of ``betainc``) the gradient is None, as there.

>>> import gradkit.tf as tf
>>> x = tf.Variable([0.5, 2.0])
>>> with tf.GradientTape() as tape:
...     y = tf.reduce_sum(tf.math.special.dawsn(x))
>>> [round(v, 4) for v in tape.gradient(y, x).numpy().tolist()]      # 1 - 2 x dawsn(x)
[0.5756, -0.2054]
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import jax.scipy.special as jss
import numpy as np

from gradkit import _errors
from gradkit._tape import record

from ._convert import call, convert, convert_like
from ._kernel_dtypes import check_dtype
from ._kernel_dtypes import unary as _unary
from ._math import _xlog1py, _xlogy, polygamma_of

_F32_F64 = ("float32", "float64")
_HALF_F32_F64 = ("float16", "float32", "float64")
_ALL_REAL = ("float16", "bfloat16", "float32", "float64")


def _with_derivative(fn, derivative):
    """``fn`` (elementwise, one argument) whose derivative is ``derivative(x, fn(x))``:
    TensorFlow's gradient formula, also at the points where it is not jax's."""
    op = jax.custom_jvp(fn)
    op.defjvps(lambda tangent, y, x: tangent * derivative(x, y))
    op.__name__ = op.__qualname__ = getattr(fn, "__name__", "op")
    return op


# -- error functions and the normal quantile ---------------------------------------------------

# TensorFlow's NdtriGrad: sqrt(2 pi) exp(ndtri(x)^2 / 2); jax's ndtri is a rational approximation
# that autodiff would differentiate piece by piece.
_ndtri = _with_derivative(jss.ndtri, lambda x, y: float(np.sqrt(2 * np.pi)) * jnp.exp(jnp.square(y) / 2))


def _erfcinv(x):
    # TensorFlow's definition, so its gradient is the chain rule through ndtri's, as there.
    return -_ndtri(0.5 * x) * float(np.sqrt(0.5))


erfc = _unary(jss.erfc, "erfc", _ALL_REAL)
erfinv = _unary(jss.erfinv, "erfinv", _F32_F64)
ndtri = _unary(_ndtri, "ndtri", _F32_F64)
erfcinv = _unary(_erfcinv, "erfcinv", _F32_F64)


def _lbeta(x):
    return jnp.sum(jss.gammaln(x), axis=-1) - jss.gammaln(jnp.sum(x, axis=-1))


def lbeta(x, name=None):
    """``tf.math.lbeta``: ``log|Beta(x)|`` over the last axis, ``sum(lgamma(x)) - lgamma(sum(x))``.

    An empty last axis gives ``-inf`` and a scalar raises, as in TensorFlow.
    """
    x = convert(x)
    check_dtype(x, _HALF_F32_F64, "tf.math.lbeta")
    if x.ndim == 0:
        raise _errors.GradkitValueError(
            "tf.math.lbeta reduces over the last axis, but got a scalar; TensorFlow refuses it too. "
            "Pass a vector: tf.math.lbeta([a, b]) is log Beta(a, b)."
        )
    return call(_lbeta, x)


# -- arguments TensorFlow does not differentiate ------------------------------------------------


def _cut(description):
    def no_gradient(x):
        return x

    record.cut_by_design(no_gradient, f"{description} (TensorFlow defines no gradient for it)")
    return no_gradient


_cut_polygamma_order = _cut("the order a of tf.math.polygamma")


def _floats(what, *xs):
    out = convert_like(*xs, what=what)
    dtypes = {np.dtype(x.dtype).name for x in out}
    if len(dtypes) > 1:
        raise _errors.GradkitTypeError(
            f"{what} takes arguments of one dtype, as in TensorFlow, but got {' and '.join(sorted(dtypes))}. "
            "Cast them to one: tf.cast(x, tf.float32)."
        )
    check_dtype(out[0], _F32_F64, what)
    return out


def _polygamma(a, x):
    a, x = jnp.broadcast_arrays(jax.lax.stop_gradient(a), x)
    return polygamma_of(a, x)  # its gradient in x is polygamma(a + 1, x), TensorFlow's


def polygamma(a, x, name=None):
    """``tf.math.polygamma(a, x)``: the ``a``-th derivative of digamma (NaN unless ``a`` is a
    non-negative integer). The gradient with respect to ``a`` is None, as in TensorFlow."""
    a, x = _floats("tf.math.polygamma", a, x)
    return call(_polygamma, call(_cut_polygamma_order, a), x)


@jax.custom_jvp
def _zeta_in_q(x, q):
    # jax's series is NaN from x ~ 1e4 on; there (x >= 1000, q > 0) every term past the second is
    # below 2**-1000, nothing in float32, so the sum is its first two terms (TensorFlow's values:
    # 0 for q > 1, 1 at q = 1, inf below, also at x = inf).
    # For q <= 0 TensorFlow's value there is inf; q = inf (x > 1) sums to 0.
    far = ((x >= 1000) & ~jnp.isnan(q)) | ((q == jnp.inf) & (x > 1))
    first_terms = jnp.where(q > 0, q**-x + (q + 1) ** -x, jnp.inf)
    out = jnp.where(far, first_terms, jax.lax.zeta(jnp.where(far, jnp.full_like(x, 2.0), x), q))
    # TensorFlow's (Eigen's) value is NaN for every x < 1, where jax's is inf at q = 0, -1, ...
    return jnp.where(x < 1, jnp.nan, out)


@_zeta_in_q.defjvp
def _zeta_in_q_jvp(primals, tangents):
    x, q = primals
    # TensorFlow's ZetaGrad in q (jax.lax.zeta has no derivative); x is never differentiated.
    return _zeta_in_q(x, q), -x * _zeta_in_q(x + 1, q) * tangents[1]


def _zeta(x, q):
    return _zeta_in_q(*jnp.broadcast_arrays(x, q))


def _zeta_reads(x, q):
    return _zeta(jax.lax.stop_gradient(x), q)


# TensorFlow has no gradient in x (None: the tape reads the op's dependence from _zeta_reads),
# yet its gradient in q reads x, so a nested tape's derivative of it in x is not None.
_zeta.per_output_dependence = True
_zeta.dependence_program = _zeta_reads


def zeta(x, q, name=None):
    """``tf.math.zeta(x, q)``: the Hurwitz zeta function. The gradient with respect to ``x`` is
    None, as in TensorFlow."""
    x, q = _floats("tf.math.zeta", x, q)
    return call(_zeta, x, q)


# jax's igamma and igammac differentiate as TensorFlow's: igamma_grad_a in a, and
# exp(-x + (a - 1) log x - lgamma(a)) in x. Their values outside the domain a > 0 are
# TensorFlow's: igamma is 0 at x = 0 whatever a is, and NaN at a = 0 elsewhere (jax: 1);
# igammac is NaN at a = 0 (jax: 0). At a = +inf igamma is 0 and igammac 1, also at x = +inf
# (jax: NaN, and 1 for igamma(inf, inf)). At x = +inf with a finite a > 0, igamma is 1 and
# igammac 0, with a zero gradient in a (jax's igamma_grad_a is NaN there).
def _at_infinite_x(a, x):
    return (x == jnp.inf) & (a > 0) & (a < jnp.inf)


def _igamma(a, x):
    a, x = jnp.broadcast_arrays(a, x)
    zero = (~(a > 0) & (x == 0)) | (a == jnp.inf)  # 0 there, with a zero gradient
    one = _at_infinite_x(a, x)
    out = jax.lax.igamma(*_elsewhere(zero | one, a, x))
    out = jnp.where(zero, jnp.zeros_like(out), jnp.where(one, jnp.ones_like(out), out))
    return jnp.where((a == 0) & (x != 0), jnp.full_like(out, jnp.nan), out)


def _igammac(a, x):
    a, x = jnp.broadcast_arrays(a, x)
    fixed = a == jnp.inf  # TensorFlow's 1 there, 0 at x = +inf too, with a zero gradient
    zero = _at_infinite_x(a, x)
    out = jax.lax.igammac(*_elsewhere(fixed | zero, a, x))
    out = jnp.where(fixed, jnp.where(x == jnp.inf, jnp.zeros_like(out), jnp.ones_like(out)), out)
    out = jnp.where(zero, jnp.zeros_like(out), out)
    return jnp.where(a == 0, jnp.full_like(out, jnp.nan), out)


def _elsewhere(fixed, a, x):
    """``a`` and ``x`` with 1 where the result is ``fixed``: jax's gradient there would be NaN,
    which a ``where`` that discards the value still multiplies in."""
    return jnp.where(fixed, jnp.ones_like(a), a), jnp.where(fixed, jnp.ones_like(x), x)


def igamma(a, x, name=None):
    """``tf.math.igamma(a, x)``: the regularized lower incomplete gamma function ``P(a, x)``."""
    return call(_igamma, *_floats("tf.math.igamma", a, x))


def igammac(a, x, name=None):
    """``tf.math.igammac(a, x)``: the regularized upper incomplete gamma function ``Q(a, x)``."""
    return call(_igammac, *_floats("tf.math.igammac", a, x))


@jax.custom_jvp
def _betainc_in_x(a, b, x):
    return jax.lax.betainc(a, b, x)


@_betainc_in_x.defjvp
def _betainc_in_x_jvp(primals, tangents):
    a, b, x = primals
    # TensorFlow's BetaincGrad, with xlogy/xlog1py so that a tail is 0 (not NaN) where a or b is 1.
    log_beta = jss.gammaln(a) + jss.gammaln(b) - jss.gammaln(a + b)
    partial_x = jnp.exp(_xlog1py(b - 1, -x) + _xlogy(a - 1, x) - log_beta)
    return _betainc_in_x(a, b, x), partial_x * tangents[2]


def _betainc(a, b, x):
    a, b, x = jnp.broadcast_arrays(a, b, x)
    # TensorFlow's domain is a > 0 and b > 0: NaN elsewhere, where jax takes SciPy's limits at 0.
    return jnp.where((a > 0) & (b > 0), _betainc_in_x(a, b, x), jnp.nan)


def _betainc_reads(a, b, x):
    return _betainc(jax.lax.stop_gradient(a), jax.lax.stop_gradient(b), x)


# As _zeta in x: no gradient in a or b, which the gradient in x reads.
_betainc.per_output_dependence = True
_betainc.dependence_program = _betainc_reads


def betainc(a, b, x, name=None):
    """``tf.math.betainc(a, b, x)``: the regularized incomplete beta function ``I_x(a, b)``.

    ``a``, ``b`` and ``x`` have one shape, or are scalars (TensorFlow does not broadcast them
    otherwise). The gradient with respect to ``a`` and ``b`` is None, as in TensorFlow.
    """
    a, b, x = _floats("tf.math.betainc", a, b, x)
    shapes = {tuple(t.shape) for t in (a, b, x) if t.ndim}
    if len(shapes) > 1:
        raise _errors.GradkitValueError(
            f"tf.math.betainc takes a, b and x of one shape, or scalars, as TensorFlow does, but got shapes "
            f"{tuple(a.shape)}, {tuple(b.shape)} and {tuple(x.shape)}. Broadcast them first: tf.broadcast_to."
        )
    return call(_betainc, a, b, x)


# -- modified Bessel functions of the first kind -------------------------------------------------

_i1 = _with_derivative(jss.i1, lambda x, y: _i1_derivative(x, y))
_i0 = _with_derivative(jss.i0, lambda x, y: _i1(x))
_i1e = _with_derivative(jss.i1e, lambda x, y: _i1e_derivative(x, y))
_i0e = _with_derivative(jss.i0e, lambda x, y: _i1e(x) - jnp.sign(x) * y)


def _safe_x(x):
    zero = x == 0
    return zero, jnp.where(zero, jnp.ones_like(x), x)


def _i1_derivative(x, y):
    # I1'(0) is 1/2. TensorFlow 2.21's BesselI1Grad puts 1 there; gradkit gives the derivative.
    zero, safe = _safe_x(x)
    return jnp.where(zero, jnp.full_like(x, 0.5), _i0(x) - y / safe)


def _i1e_derivative(x, y):
    zero, safe = _safe_x(x)
    return jnp.where(zero, jnp.full_like(x, 0.5), _i0e(x) - y * (jnp.sign(x) + 1 / safe))


bessel_i0 = _unary(_i0, "bessel_i0", _HALF_F32_F64)
bessel_i0e = _unary(_i0e, "bessel_i0e", _HALF_F32_F64)
bessel_i1 = _unary(_i1, "bessel_i1", _HALF_F32_F64)
bessel_i1.__doc__ += (
    " Its gradient at 0 is the derivative 1/2; TensorFlow 2.21's is 1 there (its BesselI1Grad"
    " sets 1 where the derivative is 1/2)."
)
bessel_i1e = _unary(_i1e, "bessel_i1e", _HALF_F32_F64)


# -- tf.math.special -----------------------------------------------------------------------------

_dawsn = _with_derivative(jss.dawsn, lambda x, y: 1 - 2 * x * y)


def _ei(x):
    # TensorFlow's Expint is Ei(x) for x > 0, -inf at 0 and NaN below (jax's expi is Ei there).
    safe = jnp.where(x > 0, x, jnp.ones_like(x))
    return jnp.where(x > 0, jss.expi(safe), jnp.where(x == 0, -jnp.inf, jnp.nan).astype(x.dtype))


_expint = _with_derivative(_ei, lambda x, y: jnp.exp(x) / x)


def _fresnel_sin_value(x):
    return jss.fresnel(x)[0]


def _fresnel_cos_value(x):
    return jss.fresnel(x)[1]


_fresnel_sin = _with_derivative(_fresnel_sin_value, lambda x, y: jnp.sin((jnp.pi / 2) * jnp.square(x)))
_fresnel_cos = _with_derivative(_fresnel_cos_value, lambda x, y: jnp.cos((jnp.pi / 2) * jnp.square(x)))


def _spence_derivative(x, y):
    # TensorFlow's SpenceGrad: log(x) / (1 - x), and its limit -1 at x = 1.
    one = x == 1
    return jnp.where(one, -jnp.ones_like(x), jnp.log(x) / jnp.where(one, jnp.ones_like(x), 1 - x))


_spence = _with_derivative(jss.spence, _spence_derivative)

dawsn = _unary(_dawsn, "dawsn", _F32_F64, "tf.math.special")
expint = _unary(_expint, "expint", _F32_F64, "tf.math.special")
fresnel_cos = _unary(_fresnel_cos, "fresnel_cos", _F32_F64, "tf.math.special")
fresnel_sin = _unary(_fresnel_sin, "fresnel_sin", _F32_F64, "tf.math.special")
spence = _unary(_spence, "spence", _F32_F64, "tf.math.special")
