"""``keras.ops``' elementwise ops: arithmetic, comparisons, logic and the unary math functions.

Each converts and casts its inputs as Keras' TensorFlow backend does (an integer ``sqrt`` or
``sin`` is computed in float32, ``divide`` of integers gives float32, a Python number takes the
other operand's dtype), broadcasts them (Keras' ops broadcast as NumPy does) and runs
``gradkit.tf``'s op, so gradients are TensorFlow's (``abs`` and ``sqrt`` at 0, ``maximum`` at a tie).

>>> import gradkit.tf as tf
>>> ops = tf.keras.ops
>>> ops.add(tf.constant([1, 2]), 2).dtype.name, ops.divide(tf.constant([1, 2]), 2).numpy().tolist()
('int32', [0.5, 1.0])
>>> ops.sqrt(tf.constant([4, 9])).numpy().tolist()
[2.0, 3.0]
"""

from __future__ import annotations

import builtins
import math

import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from ... import _arithmetic, _array, _math, _nondiff
from .dispatch import apply, cast, floating, keras_op, promoted, tensor
from .dtype_rules import float_of, standardize_dtype

NAMES = (
    "abs absolute negative square sqrt sign round floor ceil trunc conj conjugate real imag reciprocal "
    "isfinite isinf isnan logical_not sin cos tan arcsin arccos arctan sinh cosh tanh arcsinh arccosh arctanh "
    "exp exp2 expm1 log log2 log10 log1p add subtract multiply divide true_divide power maximum minimum mod "
    "floor_divide equal not_equal greater greater_equal less less_equal logical_and logical_or logical_xor "
    "arctan2 logaddexp clip nan_to_num divide_no_nan cbrt deg2rad rad2deg fabs signbit sinc isposinf isneginf "
    "isreal copy empty_like fmod hypot heaviside logaddexp2 isclose allclose gcd lcm fmax fmin"
)


def broadcast(*xs):
    """``xs`` broadcast to their common shape (recorded, only where a shape differs)."""
    shapes = [tuple(x.shape) for x in xs]
    if len(set(shapes)) <= 1:
        return list(xs)
    try:
        common = np.broadcast_shapes(*shapes)
    except ValueError:  # the op (keras_op) reports it with its name and inputs
        raise ValueError(
            f"shapes {', '.join(str(s) for s in shapes)} do not broadcast together (NumPy's and Keras' rule: "
            "trailing dimensions equal or 1)"
        ) from None
    return [x if tuple(x.shape) == common else apply(jnp.broadcast_to, x, shape=common) for x in xs]


# -- unary -----------------------------------------------------------------------------------


def _float_unary(name, tf_op, doc, int64_in_float64=False):
    def op(x):
        x = tensor(x)
        if int64_in_float64 and np.dtype(x.dtype) == np.int64:
            return tf_op(cast(x, np.float64))  # Keras' rule for these ops (64-bit types on)
        return tf_op(floating(x))

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"``keras.ops.{name}(x)``: {doc}; an integer or boolean ``x`` is computed in float32."
    return keras_op(op)


sin = _float_unary("sin", _math.sin, "the sine")
cos = _float_unary("cos", _math.cos, "the cosine")
tan = _float_unary("tan", _math.tan, "the tangent")
arcsin = _float_unary("arcsin", _math.asin, "the inverse sine")
arccos = _float_unary("arccos", _math.acos, "the inverse cosine")
arctan = _float_unary("arctan", _math.atan, "the inverse tangent")
sinh = _float_unary("sinh", _math.sinh, "the hyperbolic sine")
cosh = _float_unary("cosh", _math.cosh, "the hyperbolic cosine")
tanh = _float_unary("tanh", _math.tanh, "the hyperbolic tangent")
arcsinh = _float_unary("arcsinh", _arithmetic.asinh, "the inverse hyperbolic sine")
arccosh = _float_unary("arccosh", _arithmetic.acosh, "the inverse hyperbolic cosine")
arctanh = _float_unary("arctanh", _arithmetic.atanh, "the inverse hyperbolic tangent")
exp = _float_unary("exp", _math.exp, "``e ** x``")
expm1 = _float_unary("expm1", _math.expm1, "``exp(x) - 1``")
log = _float_unary("log", _math.log, "the natural logarithm")
log1p = _float_unary("log1p", _math.log1p, "``log(1 + x)``")
sqrt = _float_unary("sqrt", _math.sqrt, "the square root (TensorFlow's gradient, 0 for a zero upstream)")
floor = _float_unary("floor", _nondiff.floor, "rounded down (no gradient, as in TensorFlow)")
ceil = _float_unary("ceil", _nondiff.ceil, "rounded up (no gradient, as in TensorFlow)")


def _exp2(x):
    return _math.pow(tensor(2.0, x.dtype), x)


def _log2(x):
    return _math.divide(_math.log(x), _math.log(tensor(2.0, x.dtype)))


def _log10(x):
    return _math.divide(_math.log(x), _math.log(tensor(10.0, x.dtype)))


exp2 = _float_unary("exp2", _exp2, "``2 ** x``")
log2 = _float_unary("log2", _log2, "the base-2 logarithm, ``log(x) / log(2)`` as Keras computes it")
log10 = _float_unary("log10", _log10, "the base-10 logarithm, ``log(x) / log(10)`` as Keras computes it")


def _abs(x):
    """``keras.ops.abs(x)`` (also ``absolute``): the absolute value (unsigned and boolean inputs as
    they are; gradient 0 at 0, as TensorFlow's)."""
    x = tensor(x)
    if np.dtype(x.dtype).kind in "ub":
        return _array.identity(x)
    return _math.abs(x)


abs = keras_op(_abs, "abs")  # noqa: A001
absolute = keras_op(_abs, "absolute")


@keras_op
def negative(x):
    """``keras.ops.negative(x)``: ``-x``."""
    return _math.negative(tensor(x))


@keras_op
def square(x):
    """``keras.ops.square(x)``: ``x * x`` (a boolean ``x`` as int32)."""
    x = tensor(x)
    return _math.square(cast(x, "int32") if x.dtype == np.bool_ else x)


@keras_op
def sign(x):
    """``keras.ops.sign(x)``: -1, 0 or 1, in ``x``'s dtype."""
    x = tensor(x)
    if np.dtype(x.dtype).kind == "u":
        return cast(_math.sign(cast(x, "int32")), x.dtype)
    return _math.sign(x)


@keras_op
def round(x, decimals=0):  # noqa: A001
    """``keras.ops.round(x, decimals=0)``: halves to even, as TensorFlow rounds; ``decimals`` digits
    after the point (an integer ``x`` with ``decimals < 0`` rounded to tens, hundreds, ...)."""
    x = tensor(x)
    if decimals == 0:
        return _nondiff.round(x)
    dtype = np.dtype(x.dtype)
    if dtype.kind in "iu":
        if decimals > 0:
            return _array.identity(x)
        work = cast(x, "float32")
    else:
        work = x
    factor = tensor(math.pow(10, decimals), work.dtype)
    return cast(_math.divide(_nondiff.round(_math.multiply(work, factor)), factor), dtype)


@keras_op
def trunc(x):
    """``keras.ops.trunc(x)``: rounded toward zero (integers as they are)."""
    x = tensor(x)
    if np.dtype(x.dtype).kind in "biu":
        return _array.identity(x)
    return _array.where(_math.less(x, 0), _nondiff.ceil(x), _nondiff.floor(x))


def _conj(x):
    """``keras.ops.conj(x)`` (also ``conjugate``): the complex conjugate (a real ``x`` as it is)."""
    return _math.conj(tensor(x))


conj = keras_op(_conj, "conj")
conjugate = keras_op(_conj, "conjugate")


@keras_op
def real(x):
    """``keras.ops.real(x)``: the real part."""
    return _math.real(tensor(x))


@keras_op
def imag(x):
    """``keras.ops.imag(x)``: the imaginary part."""
    return _math.imag(tensor(x))


@keras_op
def reciprocal(x):
    """``keras.ops.reciprocal(x)``: ``1 / x``."""
    return _math.reciprocal(tensor(x))


def _check(name, tf_op):
    def op(x):
        x = tensor(x)
        if np.dtype(x.dtype).kind in "biu":  # integers are finite, never inf or NaN
            return _array.fill(tuple(x.shape), name == "isfinite")
        return tf_op(x)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"``keras.ops.{name}(x)``: elementwise, as a boolean tensor (integers are finite)."
    return keras_op(op)


isfinite = _check("isfinite", _math.is_finite)
isinf = _check("isinf", _arithmetic.is_inf)
isnan = _check("isnan", _math.is_nan)


@keras_op
def logical_not(x):
    """``keras.ops.logical_not(x)``: ``x`` cast to bool, negated."""
    return _math.logical_not(cast(x, "bool"))


@keras_op
def nan_to_num(x, nan=0.0, posinf=None, neginf=None):
    """``keras.ops.nan_to_num(x, nan=0.0, posinf=None, neginf=None)``: NaN, +inf and -inf replaced
    (the infinities by the dtype's largest and lowest values unless given); integers as they are."""
    x = tensor(x)
    dtype = np.dtype(x.dtype)
    if dtype.kind in "biu":
        return _array.identity(x)
    info = jnp.finfo(dtype)
    x = _array.where(_math.is_nan(x), tensor(nan, dtype), x)
    big = _arithmetic.is_inf(x)
    x = _array.where(
        _math.logical_and(big, _math.greater(x, 0)), tensor(info.max if posinf is None else posinf, dtype), x
    )
    return _array.where(
        _math.logical_and(big, _math.less(x, 0)), tensor(info.min if neginf is None else neginf, dtype), x
    )


# -- binary ----------------------------------------------------------------------------------


def _arithmetic_op(name, tf_op, doc, extra=()):
    def op(x1, x2):
        (x1, x2), _ = promoted(x1, x2, extra=extra)
        return tf_op(*broadcast(x1, x2))

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"``keras.ops.{name}(x1, x2)``: {doc}, broadcast, in Keras' promoted dtype."
    return keras_op(op)


add = _arithmetic_op("add", _math.add, "``x1 + x2``")
subtract = _arithmetic_op("subtract", _math.subtract, "``x1 - x2``")
multiply = _arithmetic_op("multiply", _math.multiply, "``x1 * x2``")
divide = _arithmetic_op("divide", _math.divide, "``x1 / x2`` (integers divided as float32)", extra=(float,))
true_divide = _arithmetic_op("true_divide", _math.divide, "``x1 / x2`` (integers divided as float32)", (float,))
maximum = _arithmetic_op("maximum", _math.maximum, "the larger (a tie's gradient to ``x1``, as TensorFlow)")
minimum = _arithmetic_op("minimum", _math.minimum, "the smaller (a tie's gradient to ``x1``, as TensorFlow)")
floor_divide = _arithmetic_op("floor_divide", _nondiff.floordiv, "``floor(x1 / x2)`` (no gradient)")


@keras_op
def power(x1, x2):
    """``keras.ops.power(x1, x2)``: ``x1 ** x2``, broadcast (TensorFlow's gradient: none for the
    exponent where ``x1 <= 0``)."""
    (x1, x2), dtype = promoted(x1, x2)
    if dtype.kind == "u":  # TensorFlow's pow has no unsigned kernel: computed in int32
        return cast(_math.pow(*broadcast(cast(x1, "int32"), cast(x2, "int32"))), dtype)
    return _math.pow(*broadcast(x1, x2))


def _strict(name, tf_op, doc, extra=(), bool_as=None):
    # Keras converts both operands to tensors first (a Python number is int32 or float32 then).
    def op(x1, x2):
        (x1, x2), dtype = promoted(tensor(x1), tensor(x2), extra=extra)
        if bool_as is not None and dtype == np.bool_:
            x1, x2 = cast(x1, bool_as), cast(x2, bool_as)
        return tf_op(*broadcast(x1, x2))

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"``keras.ops.{name}(x1, x2)``: {doc}, broadcast."
    return keras_op(op)


mod = _strict("mod", _math.floormod, "the remainder of ``x1 / x2``, with ``x2``'s sign", bool_as="int32")
equal = _strict("equal", _math.equal, "``x1 == x2``")
not_equal = _strict("not_equal", _math.not_equal, "``x1 != x2``")
greater = _strict("greater", _math.greater, "``x1 > x2``")
greater_equal = _strict("greater_equal", _math.greater_equal, "``x1 >= x2``")
less = _strict("less", _math.less, "``x1 < x2``")
less_equal = _strict("less_equal", _math.less_equal, "``x1 <= x2``")
arctan2 = _strict("arctan2", _math.atan2, "the angle of ``(x2, x1)``, in float", extra=(float,))


def _logaddexp(x1, x2):
    delta = _math.subtract(x1, x2)
    smooth = _math.add(_math.maximum(x1, x2), _math.log1p(_math.exp(_math.negative(_math.abs(delta)))))
    return _array.where(_math.is_nan(delta), _math.add(x1, x2), smooth)


logaddexp = _strict("logaddexp", _logaddexp, "``log(exp(x1) + exp(x2))``, computed stably", extra=(float,))


def _logical(name, tf_op):
    def op(x1, x2):
        return tf_op(*broadcast(cast(x1, "bool"), cast(x2, "bool")))

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"``keras.ops.{name}(x1, x2)``: both cast to bool, broadcast."
    return keras_op(op)


logical_and = _logical("logical_and", _math.logical_and)
logical_or = _logical("logical_or", _math.logical_or)
logical_xor = _logical("logical_xor", _math.logical_xor)


@keras_op
def divide_no_nan(x1, x2):
    """``keras.ops.divide_no_nan(x1, x2)``: ``x1 / x2``, 0 where ``x2`` is 0 (TensorFlow's gradient there)."""
    (x1, x2), _ = promoted(x1, x2, extra=(float,))  # a Python number stays weak (float16 / 1.5 is float16)
    return _math.divide_no_nan(*broadcast(x1, x2))


@keras_op
def clip(x, x_min, x_max):
    """``keras.ops.clip(x, x_min, x_max)``: ``x`` limited to ``[x_min, x_max]`` (a boolean ``x`` as
    int32); at a bound the gradient goes to ``x``, as TensorFlow's."""
    x = tensor(x)
    if x.dtype == np.bool_:
        x = cast(x, "int32")
    lo, hi = (b if isinstance(b, (builtins.int, builtins.float)) else tensor(b) for b in (x_min, x_max))
    if not isinstance(lo, (builtins.int, builtins.float)) or not isinstance(hi, (builtins.int, builtins.float)):
        x, lo, hi = broadcast(x, *(tensor(b, x.dtype) for b in (lo, hi)))
    return _math.clip_by_value(x, lo, hi)


# -- more unary ------------------------------------------------------------------------------


def _cbrt(x):
    # Keras' formula, so the gradient is TensorFlow's (infinite at 0, as pow's).
    return _math.multiply(_math.sign(x), _math.pow(_math.abs(x), tensor(1.0 / 3.0, x.dtype)))


def _deg2rad(x):
    # pi / 180 rounded in x's dtype first, as Keras computes it.
    return _math.multiply(x, _math.divide(tensor(math.pi, x.dtype), tensor(180.0, x.dtype)))


def _rad2deg(x):
    return _math.multiply(x, _math.divide(tensor(180.0, x.dtype), tensor(math.pi, x.dtype)))


cbrt = _float_unary("cbrt", _cbrt, "the cube root, ``sign(x) * abs(x) ** (1 / 3)``", int64_in_float64=True)
deg2rad = _float_unary("deg2rad", _deg2rad, "degrees to radians", int64_in_float64=True)
rad2deg = _float_unary("rad2deg", _rad2deg, "radians to degrees", int64_in_float64=True)
fabs = _float_unary("fabs", _math.abs, "the absolute value, always a float")


def _signbit(x):
    return jnp.signbit(x)


@keras_op
def signbit(x):
    """``keras.ops.signbit(x)``: whether the sign bit is set (True for -0.0 and negative NaNs; a
    boolean ``x`` is never negative)."""
    x = tensor(x)
    kind = np.dtype(x.dtype).kind
    if kind == "b":
        return _array.fill(tuple(x.shape), False)
    if kind in "iu":
        return _math.less(x, tensor(0, x.dtype))
    return apply(_signbit, cast(x, "float32"))  # Keras reads the bit of the float32 value


@keras_op
def sinc(x):
    """``keras.ops.sinc(x)``: ``sin(pi * x) / (pi * x)``, 1 at 0; integers in float32."""
    x = floating(x)
    pi_x = _math.multiply(x, tensor(math.pi, x.dtype))
    return _array.where(_math.equal(x, tensor(0, x.dtype)), _array.ones_like(x), _math.divide(_math.sin(pi_x), pi_x))


def _infinity(name, sign):
    def op(x):
        x = tensor(x)
        if np.dtype(x.dtype).kind in "biu":  # integers are never infinite
            return _array.fill(tuple(x.shape), False)
        return _math.equal(x, tensor(sign * math.inf, x.dtype))

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"``keras.ops.{name}(x)``: whether each entry is {'+' if sign > 0 else '-'}inf, as a boolean tensor."
    return keras_op(op)


isposinf = _infinity("isposinf", 1)
isneginf = _infinity("isneginf", -1)


@keras_op
def isreal(x):
    """``keras.ops.isreal(x)``: whether each entry's imaginary part is 0 (every entry of a real ``x``)."""
    x = tensor(x)
    if np.dtype(x.dtype).kind == "c":
        return _math.equal(_math.imag(x), 0)
    return _array.fill(tuple(x.shape), True)


@keras_op
def copy(x):
    """``keras.ops.copy(x)``: ``x`` as a new tensor (the gradient passes through)."""
    return _array.identity(tensor(x))


@keras_op
def empty_like(x, dtype=None):
    """``keras.ops.empty_like(x, dtype=None)``: a tensor of ``x``'s shape (zeros, as Keras' TensorFlow
    backend), in ``dtype`` or ``x``'s."""
    x = tensor(x)
    return _array.zeros_like(x, dtype=x.dtype if dtype is None else standardize_dtype(dtype))


# -- more binary -----------------------------------------------------------------------------


def _float_promoted(x1, x2):
    """Both as tensors in Keras' dtype of them, integers as float32 (``hypot``, ``heaviside``)."""
    (x1, x2), dtype = promoted(tensor(x1), tensor(x2))
    if dtype.kind in "iu":
        x1, x2 = cast(x1, float_of(dtype)), cast(x2, float_of(dtype))
    return broadcast(x1, x2)


@keras_op
def fmod(x1, x2):
    """``keras.ops.fmod(x1, x2)``: the remainder of ``x1 / x2`` with ``x1``'s sign (C's ``fmod``),
    broadcast; booleans as int32."""
    (x1, x2), dtype = promoted(tensor(x1), tensor(x2))
    if dtype == np.bool_:
        dtype = np.dtype("int32")
    # TensorFlow's floormod has no small unsigned kernels: Keras computes those in int32.
    work = np.dtype("int32") if dtype.kind in "bu" else dtype
    x1, x2 = broadcast(cast(x1, work), cast(x2, work))
    out = _math.multiply(_math.sign(x1), _math.floormod(_math.abs(x1), _math.abs(x2)))
    return cast(out, dtype)


@keras_op
def hypot(x1, x2):
    """``keras.ops.hypot(x1, x2)``: ``sqrt(x1 ** 2 + x2 ** 2)``, computed without overflow as Keras
    does; integers in float32."""
    x1, x2 = _float_promoted(x1, x2)
    a, b = _math.abs(x1), _math.abs(x2)
    big, small = _math.maximum(a, b), _math.minimum(a, b)
    ratio = _math.divide_no_nan(small, big)
    return _math.multiply(big, _math.sqrt(_math.add(tensor(1.0, big.dtype), _math.square(ratio))))


@keras_op
def heaviside(x1, x2):
    """``keras.ops.heaviside(x1, x2)``: 0 where ``x1 < 0``, 1 where ``x1 > 0``, ``x2`` where it is 0;
    integers in float32."""
    (x1, x2), dtype = promoted(tensor(x1), tensor(x2))
    if dtype.kind in "iu":
        # Keras' rule here: int64 in float64 (64-bit types on), the other integers in floatx.
        dtype = np.dtype(np.float64) if dtype == np.int64 else float_of(dtype)
    x1, x2 = broadcast(cast(x1, dtype), cast(x2, dtype))
    zero = tensor(0, x1.dtype)
    inner = _array.where(_math.greater(x1, zero), _array.ones_like(x1), x2)
    return _array.where(_math.less(x1, zero), _array.zeros_like(x1), inner)


def _logaddexp2(x1, x2):
    delta = _math.subtract(x1, x2)
    log2 = _math.log(tensor(2.0, x1.dtype))
    tail = _math.divide(_math.log1p(_math.exp(_math.multiply(_math.negative(_math.abs(delta)), log2))), log2)
    return _array.where(_math.is_nan(delta), _math.add(x1, x2), _math.add(_math.maximum(x1, x2), tail))


logaddexp2 = _strict("logaddexp2", _logaddexp2, "``log2(2 ** x1 + 2 ** x2)``, computed stably", extra=(float,))


def _close(x1, x2, rtol, atol):
    return _math.less_equal(
        _math.abs(_math.subtract(x1, x2)),
        _math.add(tensor(atol, x1.dtype), _math.multiply(tensor(rtol, x1.dtype), _math.abs(x2))),
    )


def _both_nan(x1, x2):
    return _math.logical_and(_math.is_nan(x1), _math.is_nan(x2))


@keras_op
def isclose(x1, x2, rtol=1e-5, atol=1e-8, equal_nan=False):
    """``keras.ops.isclose(x1, x2, rtol=1e-5, atol=1e-8, equal_nan=False)``: whether
    ``abs(x1 - x2) <= atol + rtol * abs(x2)`` entrywise (integers: whether equal)."""
    (x1, x2), dtype = promoted(tensor(x1), tensor(x2))
    x1, x2 = broadcast(x1, x2)
    if dtype.kind != "f" and dtype.name != "bfloat16":
        return _math.equal(x1, x2)
    out = _close(x1, x2, rtol, atol)
    return _math.logical_or(out, _both_nan(x1, x2)) if equal_nan else out


@keras_op
def allclose(x1, x2, rtol=1e-5, atol=1e-8, equal_nan=False):
    """``keras.ops.allclose(x1, x2, rtol=1e-5, atol=1e-8, equal_nan=False)``: whether every entry is
    close (as ``isclose``, infinities close only to themselves), as a boolean scalar tensor."""
    (x1, x2), dtype = promoted(tensor(x1), tensor(x2))
    x1, x2 = broadcast(x1, x2)
    if dtype.kind != "f" and dtype.name != "bfloat16":
        return _math.reduce_all(_math.equal(x1, x2))
    finite = _math.logical_and(_math.is_finite(x1), _math.is_finite(x2))
    out = _math.logical_or(_math.logical_and(finite, _close(x1, x2, rtol, atol)), _math.equal(x1, x2))
    if equal_nan:
        out = _math.logical_or(out, _both_nan(x1, x2))
    return _math.reduce_all(out)


def _integers(name, x1, x2):
    (x1, x2), dtype = promoted(tensor(x1), tensor(x2))
    if dtype.kind not in "iu":
        raise _errors.GradkitTypeError(
            f"tf.keras.ops.{name} takes integers, but got {np.dtype(x1.dtype).name} and {np.dtype(x2.dtype).name} "
            f"(Keras raises TypeError: 'Arguments to {name} must be integers'). Cast them with ops.cast(x, 'int32')."
        )
    return broadcast(x1, x2)


def _gcd(x1, x2):
    return jnp.gcd(x1, x2)


def _lcm(x1, x2):
    return jnp.lcm(x1, x2)


@keras_op
def gcd(x1, x2):
    """``keras.ops.gcd(x1, x2)``: the greatest common divisor of integers (non-negative), broadcast."""
    return apply(_gcd, *_integers("gcd", x1, x2))


@keras_op
def lcm(x1, x2):
    """``keras.ops.lcm(x1, x2)``: the least common multiple of integers (non-negative; 0 if either is
    0), broadcast."""
    return apply(_lcm, *_integers("lcm", x1, x2))


def _nan_ignoring(name, tf_op, doc):
    def op(x1, x2):
        (x1, x2), dtype = promoted(x1, x2)
        x1, x2 = broadcast(x1, x2)
        out = tf_op(x1, x2)
        if dtype.kind != "f" and dtype.name != "bfloat16":
            return out
        nan1, nan2 = _math.is_nan(x1), _math.is_nan(x2)
        out = _array.where(_math.logical_and(nan1, _math.logical_not(nan2)), x2, out)
        return _array.where(_math.logical_and(nan2, _math.logical_not(nan1)), x1, out)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"``keras.ops.{name}(x1, x2)``: {doc}, broadcast; a NaN loses to a number (NaN only where both are)."
    return keras_op(op)


fmax = _nan_ignoring("fmax", _math.maximum, "the larger")
fmin = _nan_ignoring("fmin", _math.minimum, "the smaller")
