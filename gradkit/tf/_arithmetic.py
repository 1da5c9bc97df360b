"""More elementwise arithmetic: ``tf.math.asinh``/``acosh``/``atanh``, ``is_inf``, the NaN-safe
``xlog1py``, ``xdivy``, ``multiply_no_nan`` and ``reciprocal_no_nan``, ``nextafter``,
``tf.truncatediv``/``truncatemod``, ``scalar_mul``, ``polyval`` and ``accumulate_n``.

Each takes the dtypes TensorFlow's kernel takes and differentiates as TensorFlow does: the
"no NaN" ops are 0 where TensorFlow's are, with TensorFlow's gradients there (where jax's
autodiff of a ``where`` would give 0 or NaN instead).

>>> import gradkit.tf as tf
>>> x, y = tf.Variable([0.0, 2.0]), tf.Variable([0.0, 4.0])
>>> with tf.GradientTape() as tape:
...     z = tf.reduce_sum(tf.math.xdivy(x, y))
>>> [g.numpy().tolist() for g in tape.gradient(z, [x, y])]
[[0.0, 0.25], [0.0, -0.125]]
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors
from gradkit._tape import record

from . import _array
from ._convert import call, convert, convert_like, static_ints
from ._kernel_dtypes import INEXACT as _INEXACT
from ._kernel_dtypes import INTEGERS as _INTEGERS
from ._kernel_dtypes import REAL as _REAL
from ._kernel_dtypes import check_dtype
from ._kernel_dtypes import unary as _unary
from ._math import _divide_no_nan, _xlog1py
from ._nondiff import refuse_integer_division_by_zero
from ._scatter import IndexedSlices

asinh = _unary(jnp.arcsinh, "asinh", _INEXACT)


@jax.custom_jvp
def _acosh(x):
    return jnp.arccosh(x)


@_acosh.defjvp
def _acosh_jvp(primals, tangents):
    # TensorFlow's AcoshGrad, dx / sinh(acosh(x)): NaN outside the domain (x < 1), where jax's
    # 1 / sqrt(x**2 - 1) is finite below -1.
    (x,), (dx,) = primals, tangents
    y = _acosh(x)
    return y, dx / jnp.sinh(y)


acosh = _unary(_acosh, "acosh", _INEXACT)
atanh = _unary(jnp.arctanh, "atanh", _INEXACT)
is_inf = _unary(jnp.isinf, "is_inf", _REAL)


def _same_dtype(what, allowed, *xs, error=_errors.GradkitTypeError):
    out = convert_like(*xs, what=what)
    names = {np.dtype(x.dtype).name for x in out}
    if len(names) > 1:
        raise error(
            f"{what} takes operands of one dtype, as in TensorFlow, but got {' and '.join(sorted(names))}. "
            "Cast one of them: tf.cast(y, x.dtype)."
        )
    check_dtype(out[0], allowed, what)
    return out


def _binary(jfn, tf_name, allowed, where="tf.math"):
    def op(x, y, name=None):
        return call(jfn, *_same_dtype(f"{where}.{tf_name}", allowed, x, y))

    op.__name__ = op.__qualname__ = tf_name
    return op


def _xdivy(x, y):
    # 0 where x == 0, with TensorFlow's gradients there (zero for both x and y).
    x, y = jnp.broadcast_arrays(x, y)
    zero = x == 0
    return jnp.where(zero, jnp.zeros_like(x / jnp.ones_like(y)), x / jnp.where(zero, jnp.ones_like(y), y))


xlog1py = _binary(_xlog1py, "xlog1py", _INEXACT)
xlog1py.__doc__ = "``tf.math.xlog1py(x, y)``: ``x * log1p(y)``, and 0 where ``x`` is 0 (also its gradients)."
xdivy = _binary(_xdivy, "xdivy", _INEXACT)
xdivy.__doc__ = "``tf.math.xdivy(x, y)``: ``x / y``, and 0 where ``x`` is 0 (also its gradients)."


def _reciprocal_no_nan(x):
    return _divide_no_nan(jnp.ones_like(x), x)


reciprocal_no_nan = _unary(_reciprocal_no_nan, "reciprocal_no_nan", _INEXACT)
reciprocal_no_nan.__doc__ = "``tf.math.reciprocal_no_nan``: ``1 / x``, and 0 (gradient 0) where ``x`` is 0."


# -- multiply_no_nan -------------------------------------------------------------------------------
# TensorFlow's MulNoNanGrad: mul_no_nan(upstream, y) for x and mul_no_nan(x, upstream) for y. So
# y's gradient is x * upstream also where y is 0 (autodiff of a where would give 0 there), and
# 0 where the upstream is 0 even if x is infinite.


def _mul_no_nan_kernel(x, y):
    product = x * y
    return jnp.where(y == 0, jnp.zeros_like(product), product)


@jax.custom_vjp
def _mul_no_nan_same_shape(x, y):
    return _mul_no_nan_kernel(x, y)


def _mul_no_nan_fwd(x, y):
    return _mul_no_nan_kernel(x, y), (x, y)


def _mul_no_nan_bwd(residuals, upstream):
    x, y = residuals
    # The op again, not the kernel: a gradient of this gradient then follows TensorFlow's rule too.
    return _mul_no_nan_same_shape(upstream, y), _mul_no_nan_same_shape(x, upstream)


_mul_no_nan_same_shape.defvjp(_mul_no_nan_fwd, _mul_no_nan_bwd)


def _multiply_no_nan(x, y):
    return _mul_no_nan_same_shape(*jnp.broadcast_arrays(x, y))  # jax sums a broadcast gradient back


def multiply_no_nan(x, y, name=None):
    """``tf.math.multiply_no_nan(x, y)``: ``x * y``, and 0 where ``y`` is 0 even if ``x`` is
    infinite or NaN; its gradients are TensorFlow's."""
    return call(
        _multiply_no_nan, *_same_dtype("tf.math.multiply_no_nan", _INEXACT, x, y, error=_errors.GradkitValueError)
    )


# -- nextafter ----------------------------------------------------------------------------------


@jax.custom_jvp
def _nextafter_same_shape(x1, x2):
    return jnp.nextafter(x1, x2)


# TensorFlow's NextAfterGrad: the gradient passes to x1 unchanged, and is zero for x2.
_nextafter_same_shape.defjvps(lambda t, out, x1, x2: t, lambda t, out, x1, x2: jnp.zeros_like(out))


def _nextafter(x1, x2):
    return _nextafter_same_shape(*jnp.broadcast_arrays(x1, x2))


nextafter = _binary(_nextafter, "nextafter", ("float32", "float64"))
nextafter.__doc__ = (
    "``tf.math.nextafter(x1, x2)``: the next representable number after ``x1`` towards ``x2``. "
    "Its gradient is TensorFlow's: 1 for ``x1``, 0 for ``x2``."
)


# -- truncated division ---------------------------------------------------------------------------


def _truncatediv(x, y):
    x, y = jnp.broadcast_arrays(x, y)
    if jnp.issubdtype(x.dtype, jnp.integer):
        return jax.lax.div(x, y)  # C's division: rounds toward zero
    return jnp.trunc(x / y)


def _truncatemod(x, y):
    return jnp.fmod(*jnp.broadcast_arrays(x, y))  # the remainder of C's division: the sign of x


# TensorFlow gives no gradient through either (TruncateDiv's is None; TruncateMod has none, and
# TensorFlow raises LookupError when asked for it): the tape cuts their path.
record.cut_by_design(_truncatediv, "tf.truncatediv (it has no gradient in TensorFlow)")
record.cut_by_design(_truncatemod, "tf.truncatemod (it has no gradient in TensorFlow)")


def _truncated(fn, tf_name, allowed):
    def op(x, y, name=None):
        x, y = _same_dtype(f"tf.{tf_name}", allowed, x, y)
        refuse_integer_division_by_zero(y, f"tf.{tf_name}")
        return call(fn, x, y)

    op.__name__ = op.__qualname__ = tf_name
    return op


truncatediv = _truncated(_truncatediv, "truncatediv", (*_REAL, *_INTEGERS))
truncatediv.__doc__ = "``tf.truncatediv(x, y)``: ``x / y`` rounded toward zero. No gradient (None), as in TensorFlow."
truncatemod = _truncated(_truncatemod, "truncatemod", ("float32", "float64", "int32", "int64"))
truncatemod.__doc__ = (
    "``tf.truncatemod(x, y)``: the remainder of ``truncatediv``, with the sign of ``x``. A gradient "
    "through it is None (TensorFlow has none and raises LookupError when asked for one)."
)


# -- scalar_mul, polyval, accumulate_n -------------------------------------------------------------


def _times(scalar, x):
    return scalar * x


def scalar_mul(scalar, x, name=None):
    """``tf.math.scalar_mul(scalar, x)``: ``scalar * x`` for a 0-d ``scalar`` of ``x``'s dtype (a
    ``tf.IndexedSlices`` ``x`` has its values scaled, as in TensorFlow)."""
    if isinstance(x, IndexedSlices):
        return IndexedSlices(scalar_mul(scalar, x.values), x.indices, x.dense_shape)
    x, s = convert_like(x, scalar, what="tf.math.scalar_mul")
    if s.ndim:
        raise _errors.GradkitValueError(
            f"tf.math.scalar_mul takes a 0-d scalar, as TensorFlow does, but got shape {tuple(s.shape)}. "
            "Use tf.multiply(x, y) to multiply by a tensor."
        )
    if s.dtype != x.dtype:
        raise _errors.GradkitValueError(
            f"tf.math.scalar_mul takes a scalar of x's dtype {np.dtype(x.dtype).name}, as TensorFlow does, but "
            f"got {np.dtype(s.dtype).name}. Cast it: tf.cast(scalar, x.dtype)."
        )
    return call(_times, s, x)


def _polyval(coeffs, x):
    p = coeffs[0]
    for c in coeffs[1:]:
        p, x_ = jnp.broadcast_arrays(p, x)
        q = p * x_
        c, q = jnp.broadcast_arrays(c, q)
        p = c + q
    return p


def polyval(coeffs, x, name=None):
    """``tf.math.polyval(coeffs, x)``: ``coeffs[0] * x**(n-1) + ... + coeffs[n-1]`` by Horner's rule.

    ``coeffs`` is a list (of numbers or tensors that broadcast with ``x``); an empty list gives
    zeros like ``x``. Each coefficient is converted on its own, as in TensorFlow, so it must
    already have ``x``'s dtype.

    >>> import gradkit.tf as tf
    >>> tf.math.polyval([1.0, 0.0, -2.0], tf.constant([2.0, 3.0])).numpy().tolist()
    [2.0, 7.0]
    """
    if not isinstance(coeffs, list):
        raise _errors.GradkitValueError(
            f"tf.math.polyval takes coeffs as a list, as TensorFlow does, but got {type(coeffs).__name__}. "
            "Pass list(coeffs) (tf.unstack(coeffs) for a tensor)."
        )
    x = convert(x)
    if not coeffs:
        return _array.zeros_like(x)  # a constant: x's gradient is None, as TensorFlow's
    coeffs = [convert(c) for c in coeffs]
    if len(coeffs) == 1:
        return call(jnp.asarray, coeffs[0])  # TensorFlow returns it: x has no part (its gradient is None)
    names = {np.dtype(c.dtype).name for c in coeffs} | {np.dtype(x.dtype).name}
    if len(names) > 1:
        raise _errors.GradkitTypeError(
            f"tf.math.polyval got coefficients and x of dtypes {' and '.join(sorted(names))}; TensorFlow "
            "multiplies them without converting. Give them one dtype: tf.cast(c, x.dtype), or write 2.0 for 2."
        )
    return call(_polyval, coeffs, x)


def _add_all(xs):
    out = xs[0]
    for x in xs[1:]:
        out = out + x
    return out


def accumulate_n(inputs, shape=None, tensor_dtype=None, name=None):
    """``tf.math.accumulate_n``: the sum of a list of tensors of one shape and dtype (as ``add_n``)."""
    bad = _errors.GradkitValueError(
        "tf.math.accumulate_n takes a non-empty list of tensors of one dtype and shape, as TensorFlow does; "
        "cast or reshape them first, or use tf.math.add_n."
    )
    if not inputs or not isinstance(inputs, (list, tuple)):
        raise bad
    xs = [convert(x) for x in inputs]
    if len({np.dtype(x.dtype) for x in xs}) > 1:
        raise bad
    shapes = {tuple(x.shape) for x in xs}
    if shape is not None:
        shapes.add(static_ints(shape))
    if len(shapes) > 1:
        raise _errors.GradkitValueError(
            f"tf.math.accumulate_n got tensors (or shape=) of shapes {sorted(shapes)}; TensorFlow requires one shape."
        )
    if tensor_dtype is not None and jax.dtypes.canonicalize_dtype(tensor_dtype) != np.dtype(xs[0].dtype):
        raise _errors.GradkitTypeError(
            f"tf.math.accumulate_n got tensor_dtype={np.dtype(tensor_dtype).name} for inputs of dtype "
            f"{np.dtype(xs[0].dtype).name}; TensorFlow requires them equal. Cast the inputs first."
        )
    return call(_add_all, xs)
