"""Elementwise math, reductions, matmul/einsum/tensordot, norms and clipping (``tf.*`` and ``tf.math.*``)."""

from __future__ import annotations

import builtins

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors
from gradkit._tape import record

from . import _name_scope
from ._convert import axis_arg, call, check_python_value, convert, convert_like, known_value, scalar_int
from ._grad_kernels import tf_pow, tf_rsqrt, with_tf_extreme_gradient, with_tf_gradient_kernel
from ._integer_mean import integer_mean
from ._kernel_dtypes import INEXACT, ORDERED, REAL, check_dtype, index_dtype, unary
from ._linalg_svd import _svd_half
from ._nondiff import ceil, floor, floordiv, refuse_integer_division_by_zero, rint, round  # noqa: F401, A004  (tf.math's names)

_MSG_FLOAT_ONLY = (
    "tf.math.{fn} takes a floating-point tensor, as in TensorFlow, but got dtype {dtype}. "
    "Cast it first: tf.math.{fn}(tf.cast(x, tf.float32))."
)


# TensorFlow has no integer kernel for these (it raises InvalidArgumentError); jax would promote.
_FLOAT_ONLY_UNARY = {
    **dict.fromkeys(
        "sin cos tan tanh sinh cosh exp log log1p expm1 sqrt rsqrt sigmoid reciprocal asin acos atan".split(),
        INEXACT,
    ),
    **dict.fromkeys("erf lgamma digamma is_nan is_finite softplus log_sigmoid".split(), REAL),
    # Complex numbers and bools have no order: TensorFlow has no kernel for them.
    **dict.fromkeys("relu relu6".split(), ORDERED),
    "logical_not": ("bool",),
}


def _unary(jfn, tf_name):
    return unary(jfn, tf_name, _FLOAT_ONLY_UNARY.get(tf_name))


@jax.custom_jvp
def _tf_softplus(x):
    return jax.nn.softplus(x)


@jax.custom_jvp
def _sigmoid_of(x):
    return jax.nn.sigmoid(x)


# sigmoid(x) sigmoid(-x): no 1 - sigmoid(x), which cancels for large x.
_sigmoid_of.defjvps(lambda t, y, x: t * y * jax.nn.sigmoid(-x))

# TensorFlow's SoftplusGrad, sigmoid(x): jax's (through logaddexp) loses the second derivative
# to cancellation from |x| ~ 10 on (0 at x = 15, where it is 3e-7).
_tf_softplus.defjvps(lambda t, y, x: t * _sigmoid_of(x))


@jax.custom_jvp
def _log_sigmoid(x):
    return jax.nn.log_sigmoid(x)


_log_sigmoid.defjvps(lambda t, y, x: t * _sigmoid_of(-x))


@jax.custom_jvp
def _expm1(x):
    return jnp.expm1(x)


# exp(x), TensorFlow's gradient: jax's (expm1(x) + 1) is 0 below x ~ -17 and inexact before.
_expm1.defjvps(lambda t, y, x: t * jnp.exp(x))


def _tf_abs(x):
    if jnp.issubdtype(x.dtype, jnp.complexfloating):
        return jnp.abs(x)
    return x * jnp.sign(x)  # TensorFlow's gradient at 0 is sign(0) = 0 (jnp.abs gives 1)


def _reciprocal(x):
    return 1.0 / x


sin = _unary(jnp.sin, "sin")
cos = _unary(jnp.cos, "cos")
tan = _unary(jnp.tan, "tan")
tanh = _unary(jnp.tanh, "tanh")
sinh = _unary(jnp.sinh, "sinh")
cosh = _unary(jnp.cosh, "cosh")
exp = _unary(jnp.exp, "exp")
log = _unary(jnp.log, "log")
log1p = _unary(jnp.log1p, "log1p")
expm1 = _unary(_expm1, "expm1")
logical_not = _unary(jnp.logical_not, "logical_not")
square = _unary(jnp.square, "square")
# sqrt with TensorFlow's SqrtGrad (0 for a zero upstream): the composites built on it
# (norms, reduce_std, clip_by_global_norm) use it too, so ``tf.norm(v) ** 2`` at v = 0 has
# TensorFlow's gradient 0, not 0 * inf = NaN.
_tf_sqrt = with_tf_gradient_kernel(jnp.sqrt)
sqrt = _unary(_tf_sqrt, "sqrt")
rsqrt = _unary(tf_rsqrt, "rsqrt")
abs = _unary(_tf_abs, "abs")  # noqa: A001
negative = _unary(jnp.negative, "negative")


def _tf_sign(x):
    # For a complex z TensorFlow's sign is z / |z| (0 at 0), which varies with z; jnp.sign's
    # derivative is zero everywhere, right only for real inputs.
    if not jnp.iscomplexobj(x):
        return jnp.sign(x)
    zero = x == 0
    return jnp.where(zero, 0, x / jnp.where(zero, 1, jnp.abs(x)).astype(x.dtype))


def _imag_of_real(x):
    return jnp.zeros(x.shape, x.dtype)


def _angle_of_real(x):
    # TensorFlow's where(x < 0, pi, 0): 0 at -0.0 and at NaN.
    return jnp.where(x < 0, jnp.asarray(np.pi).astype(x.dtype), jnp.zeros((), x.dtype))


# Of a real tensor both are piecewise constant, with no gradient in TensorFlow (None).
record.cut_by_design(_imag_of_real, "tf.math.imag of a real tensor (zeros: no gradient in TensorFlow)")
record.cut_by_design(_angle_of_real, "tf.math.angle of a real tensor (0 or pi: no gradient in TensorFlow)")


def _by_kind(complex_op, real_fn, tf_name):
    def op(input, name=None):  # noqa: A002
        x = convert(input)
        return complex_op(x) if jnp.iscomplexobj(x) else call(real_fn, x)

    op.__name__ = op.__qualname__ = tf_name
    op.__doc__ = f"``tf.math.{tf_name}``; of a real tensor TensorFlow's constant, with no gradient."
    return op


@jax.custom_jvp
def polygamma_of(n, x):
    """``polygamma(n, x)`` (``n`` and ``x`` of one shape), 0 at ``x = inf`` for ``n >= 1`` (the
    limit, TensorFlow's value; jax's is NaN), its derivative in ``x`` ``polygamma_of(n + 1, x)``
    to any order."""
    value = jax.lax.polygamma(n, x)
    return jnp.where(jnp.isposinf(x) & (n >= 1), jnp.zeros_like(value), value)


@polygamma_of.defjvp
def _polygamma_of_jvp(primals, tangents):
    n, x = primals
    return polygamma_of(n, x), polygamma_of(n + 1, x) * tangents[1]


@jax.custom_jvp
def _digamma(x):
    return jax.scipy.special.digamma(x)


_digamma.defjvps(lambda t, y, x: t * polygamma_of(jnp.ones_like(x), x))


@jax.custom_jvp
def _lgamma(x):
    return jax.scipy.special.gammaln(x)


_lgamma.defjvps(lambda t, y, x: t * _digamma(x))  # TensorFlow's LgammaGrad


sign = _unary(_tf_sign, "sign")
softplus = _unary(_tf_softplus, "softplus")
_sigmoid = _unary(jax.nn.sigmoid, "sigmoid")


def sigmoid(x, name=None):
    """``tf.math.sigmoid``; inside a ``tf.function`` its output keeps its logits, from which
    Keras' binary cross-entropies compute there, as they do from TensorFlow's Sigmoid op."""
    x = convert(x)
    out = _sigmoid(x, name)
    if _name_scope.in_graph():
        from ._keras import keras_logits  # the Keras package builds on these ops: imported late

        keras_logits.remember(out, x, "Sigmoid")
    return out


reciprocal = _unary(with_tf_gradient_kernel(_reciprocal), "reciprocal")
real = _unary(jnp.real, "real")
imag = _by_kind(_unary(jnp.imag, "imag"), _imag_of_real, "imag")
conj = _unary(jnp.conj, "conj")
angle = _by_kind(_unary(jnp.angle, "angle"), _angle_of_real, "angle")
asin = _unary(jnp.arcsin, "asin")
acos = _unary(jnp.arccos, "acos")
atan = _unary(jnp.arctan, "atan")
log_sigmoid = _unary(_log_sigmoid, "log_sigmoid")
erf = _unary(jax.scipy.special.erf, "erf")
lgamma = _unary(_lgamma, "lgamma")
digamma = _unary(_digamma, "digamma")
is_nan = _unary(jnp.isnan, "is_nan")
is_finite = _unary(jnp.isfinite, "is_finite")


def _binary(jfn, tf_name, allowed=None):
    """``tf.math.tf_name(x, y)``: ``jfn`` recorded as one op, for operands of the dtypes
    ``allowed`` (names; None: any dtype)."""

    def op(x, y, name=None):
        operands = convert_like(x, y, what=f"tf.math.{tf_name}")
        if allowed is not None:
            for operand in operands:
                check_dtype(operand, allowed, f"tf.math.{tf_name}")
        return call(jfn, *operands)

    op.__name__ = op.__qualname__ = tf_name
    return op


@jax.custom_jvp
def _float_divide(x, y):
    return x / y


@_float_divide.defjvp
def _float_divide_jvp(primals, tangents):
    # TensorFlow's RealDiv gradient, (-x / y) / y for y, which stays finite in float32 where
    # jax's x / y**2 overflows (y = 1e-20) or gives 0 * inf (x = 0, y = 1e-30).
    # The barrier keeps XLA from folding (x / y) / y back into x / (y * y).
    x, y = primals
    dx, dy = tangents
    out = _float_divide(x, y)
    return out, _float_divide(dx, y) + dy * _float_divide(-jax.lax.optimization_barrier(out), y)


def _tf_divide(x, y):
    """``x / y`` as TensorFlow's truediv: integers divide in floating point (float64 for 32- and
    64-bit integers, float32 for narrower ones; float32 where JAX's 64-bit types are off)."""
    if jnp.issubdtype(x.dtype, jnp.inexact) and jnp.issubdtype(y.dtype, jnp.inexact):
        return _float_divide(x, y)
    if jnp.issubdtype(x.dtype, jnp.integer) and x.dtype == y.dtype:
        wide = np.dtype(x.dtype).itemsize >= 4
        real = jax.dtypes.canonicalize_dtype(np.float64 if wide else np.float32)
        return x.astype(real) / y.astype(real)
    return jnp.true_divide(x, y)


add = _binary(jnp.add, "add")
subtract = _binary(jnp.subtract, "subtract")
multiply = _binary(jnp.multiply, "multiply")
divide = _binary(_tf_divide, "divide")


# Its gradient w.r.t. the exponent is 0 where x <= 0, as TensorFlow's (jax's is NaN at x < 0).
# ``x ** p`` on tensors is gradkit's shared operator, which keeps jax's rule.
def pow(x, y, name=None):  # noqa: A001  (TensorFlow's name)
    """``x ** y``; an integer power with a negative integer exponent known when the op runs is
    refused, as TensorFlow's kernel refuses it (NumPy's 2 ** -1 is 0)."""
    if isinstance(x, (int, float)) and isinstance(y, (int, float)) and not isinstance(x, bool):
        # Two Python numbers: the exponent takes the base's dtype, as TensorFlow converts it
        # (tf.pow(0.9, step) is a float32 power; an int exponent would be a static integer power).
        x = convert(x)
        check_python_value(y, x.dtype, "tf.math.pow")
        y = convert(y, x.dtype)
    x, y = convert_like(x, y, what="tf.math.pow")
    exponent = known_value(y) if jnp.issubdtype(y.dtype, jnp.integer) else None
    if exponent is not None and (exponent < 0).any():
        raise _errors.GradkitInvalidArgumentError(
            "tf.math.pow: Integers to negative integer powers are not allowed, as TensorFlow says. Cast to a "
            "float first: tf.pow(tf.cast(x, tf.float32), y)."
        )
    return call(tf_pow, x, y)


def _tf_complex(real, imag):
    if real.dtype != imag.dtype or real.dtype not in (np.float32, np.float64):
        raise _errors.GradkitTypeError(
            f"tf.complex takes real and imag of one dtype, float32 or float64, but got {real.dtype} and "
            f"{imag.dtype}. Cast them first: tf.complex(tf.cast(re, tf.float32), tf.cast(im, tf.float32))."
        )
    real, imag = jnp.broadcast_arrays(real, imag)  # a broadcasting op in TensorFlow
    return jax.lax.complex(real, imag)


def complex(real, imag, name=None):  # noqa: A001  (TensorFlow's name)
    """``tf.complex(real, imag)``: ``real + 1j * imag`` (complex64 from float32, complex128 from float64)."""
    return call(_tf_complex, convert(real), convert(imag))


# At a tie TensorFlow sends the whole gradient to x (jnp.maximum splits it in halves); a NaN in
# either operand propagates, as in TensorFlow, whose gradient follows the same mask (x >= y),
# so a NaN x sends it to y.
def _tf_maximum(x, y):
    return _nan_of_x(x, jnp.where(x >= y, x, y))


def _tf_minimum(x, y):
    return _nan_of_x(x, jnp.where(x <= y, x, y))


def _nan_of_x(x, out):
    return jnp.where(jnp.isnan(x), out + jax.lax.stop_gradient(x), out) if jnp.issubdtype(x.dtype, jnp.inexact) else out


maximum = _binary(_tf_maximum, "maximum", ORDERED)
minimum = _binary(_tf_minimum, "minimum", ORDERED)


def _squared_difference(x, y):
    d = x - y
    return jnp.conj(d) * d if jnp.iscomplexobj(d) else jnp.square(d)  # TensorFlow's conj(x - y) (x - y)


squared_difference = _binary(_squared_difference, "squared_difference")
equal = _binary(jnp.equal, "equal")
not_equal = _binary(jnp.not_equal, "not_equal")
greater = _binary(jnp.greater, "greater", ORDERED)
greater_equal = _binary(jnp.greater_equal, "greater_equal", ORDERED)
less = _binary(jnp.less, "less", ORDERED)
less_equal = _binary(jnp.less_equal, "less_equal", ORDERED)
logical_and = _binary(jnp.logical_and, "logical_and", ("bool",))
logical_or = _binary(jnp.logical_or, "logical_or", ("bool",))
logical_xor = _binary(jnp.logical_xor, "logical_xor", ("bool",))
truediv = realdiv = _binary(_tf_divide, "truediv")
atan2 = _binary(jnp.arctan2, "atan2", REAL)
_remainder = _binary(jnp.remainder, "floormod")


def floormod(x, y, name=None):
    """``tf.math.floormod``: the remainder of ``floordiv``, with the sign of ``y``."""
    x, y = convert_like(x, y, what="tf.math.floormod")
    refuse_integer_division_by_zero(y, "tf.math.floormod")
    return _remainder(x, y)


mod = floormod


def _xlogy(x, y):
    # 0 where x == 0, with TensorFlow's gradients there (zero for both x and y).
    x, y = jnp.broadcast_arrays(x, y)  # a broadcasting op in TensorFlow
    zero = x == 0
    return jnp.where(zero, jnp.zeros_like(x), x * jnp.log(jnp.where(zero, jnp.ones_like(y), y)))


def _xlog1py(x, y):
    # 0 where x == 0, with TensorFlow's gradients there (zero for both x and y).
    x, y = jnp.broadcast_arrays(x, y)  # a broadcasting op in TensorFlow
    zero = x == 0
    return jnp.where(zero, jnp.zeros_like(x), x * jnp.log1p(jnp.where(zero, jnp.zeros_like(y), y)))


def _divide_no_nan(x, y):
    # 0 where y == 0, with TensorFlow's gradients there (zero for both x and y).
    x, y = jnp.broadcast_arrays(x, y)  # a broadcasting op in TensorFlow
    zero = y == 0
    return jnp.where(zero, jnp.zeros_like(x / jnp.ones_like(y)), _tf_divide(x, jnp.where(zero, jnp.ones_like(y), y)))


xlogy = _binary(_xlogy, "xlogy", INEXACT)
divide_no_nan = _binary(_divide_no_nan, "divide_no_nan")


def _reduction(jfn, tf_name, float_only=False, logical=False, real_only=False):
    # float_only="real": real floating types only (TensorFlow's logsumexp has no complex kernel);
    # real_only: no complex kernel (max, min: complex numbers have no order).
    kinds = jnp.floating if float_only == "real" else jnp.inexact

    def op(input_tensor, axis=None, keepdims=False, name=None):
        x = convert(input_tensor)
        if float_only and not jnp.issubdtype(x.dtype, kinds):
            # A TypeError, and TensorFlow's InvalidArgumentError (its kernels' refusal).
            raise _errors.InvalidArgumentTypeError(_MSG_FLOAT_ONLY.format(fn=tf_name, dtype=np.dtype(x.dtype).name))
        if real_only and jnp.issubdtype(x.dtype, jnp.complexfloating):
            raise _errors.InvalidArgumentTypeError(
                f"[gradkit] tf.math.{tf_name} takes a real tensor, but got dtype {np.dtype(x.dtype).name}: complex "
                f"numbers have no order, and TensorFlow has no complex kernel for it. Reduce tf.math.abs(x) or "
                f"tf.math.real(x) instead."
            )
        if not logical and x.dtype == jnp.bool_:
            raise bool_refused(f"tf.math.{tf_name}")
        if logical and x.dtype != jnp.bool_:
            raise _errors.InvalidArgumentTypeError(
                f"[gradkit] tf.math.{tf_name} takes a bool tensor, but got dtype {np.dtype(x.dtype).name}; TensorFlow "
                f"refuses it too. Compare first: tf.math.{tf_name}(x != 0)."
            )
        return call(jfn, x, axis=axis_arg(axis), keepdims=bool(keepdims))

    op.__name__ = op.__qualname__ = tf_name
    op.__doc__ = f"``tf.{tf_name}(input_tensor, axis=None, keepdims=False)``; a list of tensors is stacked first."
    return op


def bool_refused(what: str) -> Exception:
    """TensorFlow's refusal of a numeric kernel on a boolean tensor (no bool kernel)."""
    return _errors.InvalidArgumentValueError(
        f"[gradkit] {what} takes a numeric tensor, but got dtype bool; TensorFlow has no bool kernel for it "
        "and raises InvalidArgumentError. Cast it first (tf.cast(mask, tf.int32) to count, tf.float32 for a "
        "fraction), or use tf.reduce_any / tf.reduce_all."
    )


def _logsumexp(x, axis, keepdims):
    return jax.scipy.special.logsumexp(x, axis=axis, keepdims=keepdims)


def _is_integer(x) -> bool:
    return jnp.issubdtype(x.dtype, jnp.integer)


# TensorFlow reduces an integer tensor in its own dtype (jnp.sum widens int8 to int32,
# jnp.mean returns a float).
def _sum(x, axis, keepdims):
    return jnp.sum(x, axis=axis, keepdims=keepdims, dtype=x.dtype if _is_integer(x) else None)


def _prod(x, axis, keepdims):
    return jnp.prod(x, axis=axis, keepdims=keepdims, dtype=x.dtype if _is_integer(x) else None)


def _mean(x, axis, keepdims):
    if not _is_integer(x):
        return jnp.mean(x, axis=axis, keepdims=keepdims)
    return integer_mean(x, axis, keepdims)  # a 64-bit sum, as TensorFlow's kernel: no overflow


def _euclidean_norm(x, axis, keepdims):
    if _is_integer(x):
        return jnp.sqrt(_sum(x * x, axis, keepdims).astype(jnp.float32)).astype(x.dtype)
    # TensorFlow's EuclideanNorm kernel has a gradient of its own (upstream * x / norm): NaN at
    # a zero norm, unlike tf.norm's sqrt of a sum.
    return jnp.sqrt(jnp.sum(x * jnp.conj(x), axis=axis, keepdims=keepdims))


reduce_sum = _reduction(_sum, "reduce_sum")
reduce_mean = _reduction(_mean, "reduce_mean")


def _extreme(jfn, x, axis, keepdims, identity):
    if x.size == 0:
        # TensorFlow reduces nothing to the identity (-inf for max, inf for min, an int's limit);
        # jnp.max raises "zero-size array to reduction operation" without an initial value.
        if jnp.issubdtype(x.dtype, jnp.integer):
            info = jnp.iinfo(x.dtype)
            start = info.min if identity < 0 else info.max
        else:
            start = identity
        return jfn(x, axis=axis, keepdims=keepdims, initial=start)
    return jfn(x, axis=axis, keepdims=keepdims)


# Their gradients are TensorFlow's: ties share it equally, and a NaN makes it NaN everywhere.
@with_tf_extreme_gradient
def _max(x, axis, keepdims):
    return _extreme(jnp.max, x, axis, keepdims, -jnp.inf)


@with_tf_extreme_gradient
def _min(x, axis, keepdims):
    return _extreme(jnp.min, x, axis, keepdims, jnp.inf)


reduce_max = _reduction(_max, "reduce_max", real_only=True)
reduce_min = _reduction(_min, "reduce_min", real_only=True)
reduce_prod = _reduction(_prod, "reduce_prod")
reduce_euclidean_norm = _reduction(_euclidean_norm, "reduce_euclidean_norm")


def _std(x, axis, keepdims):
    return _tf_sqrt(jnp.var(x, axis=axis, keepdims=keepdims))  # TensorFlow's sqrt(reduce_variance(x))


reduce_std = _reduction(_std, "reduce_std", float_only=True)
reduce_variance = _reduction(jnp.var, "reduce_variance", float_only=True)
reduce_any = _reduction(jnp.any, "reduce_any", logical=True)
reduce_all = _reduction(jnp.all, "reduce_all", logical=True)
reduce_logsumexp = _reduction(_logsumexp, "reduce_logsumexp", float_only="real")


def _count_nonzero(x, axis, keepdims, dtype):
    # TensorFlow counts in int64 and casts the count to dtype (bool: whether any is nonzero).
    count = jnp.sum(x != 0, axis=axis, keepdims=keepdims, dtype=jax.dtypes.canonicalize_dtype(np.int64))
    return count.astype(dtype)


# x != 0 has no gradient in TensorFlow: a float count is cut from every tape's path (None, not 0).
record.cut_by_design(_count_nonzero, "tf.math.count_nonzero (it has no gradient in TensorFlow)")


def count_nonzero(input, axis=None, keepdims=None, dtype=np.int64, name=None):  # noqa: A002
    """``tf.math.count_nonzero``: how many entries are not zero (NaN counts), as ``dtype``.

    int64 is int32 unless jax's x64 mode is on, as everywhere in gradkit.tf.
    """
    dtype = jax.dtypes.canonicalize_dtype(np.dtype(dtype))
    return call(_count_nonzero, convert(input), axis=axis_arg(axis), keepdims=bool(keepdims), dtype=dtype)


def _never_chosen(x, losing, beyond):
    """``x`` with the entries TensorFlow's argmax/argmin cannot choose replaced by ``losing``.

    Its kernel starts from the dtype's lowest (argmax) or highest (argmin) finite value at index 0
    and moves only to a strictly better entry, so NaN never wins (jnp.argmax would pick the first
    NaN), nor does an entry no better than the start (-inf or the lowest value itself, for argmax);
    with no entry better than the start the index is 0, as jnp.argmax gives among equal entries.
    """
    if not jnp.issubdtype(x.dtype, jnp.floating):
        return x
    return jnp.where(jnp.isnan(x) | beyond(x, jnp.finfo(x.dtype)), jnp.asarray(losing, x.dtype), x)


def _argmax(x, axis, dtype):
    return jnp.argmax(_never_chosen(x, -jnp.inf, lambda v, info: v <= info.min), axis=axis).astype(dtype)


def argmax(input, axis=None, output_type=np.int64, name=None):  # noqa: A002
    out = index_dtype(output_type, ("int16", "int32", "int64", "uint16"), "tf.math.argmax", "output_type")
    axis = 0 if axis is None else scalar_int(axis, "tf.math.argmax's axis")
    return call(_argmax, convert(input), axis=axis, dtype=out)


def _argmin(x, axis, dtype):
    return jnp.argmin(_never_chosen(x, jnp.inf, lambda v, info: v >= info.max), axis=axis).astype(dtype)


def argmin(input, axis=None, output_type=np.int64, name=None):  # noqa: A002
    out = index_dtype(output_type, ("int32", "int64"), "tf.math.argmin", "output_type")
    axis = 0 if axis is None else scalar_int(axis, "tf.math.argmin's axis")
    return call(_argmin, convert(input), axis=axis, dtype=out)


def _matmul(a, b, ta, tb, ca, cb, out=None):
    if ta:
        a = jnp.swapaxes(a, -1, -2)
    if tb:
        b = jnp.swapaxes(b, -1, -2)
    if ca:
        a = jnp.conj(jnp.swapaxes(a, -1, -2))
    if cb:
        b = jnp.conj(jnp.swapaxes(b, -1, -2))
    return jnp.matmul(a, b, preferred_element_type=out)


def matmul(
    a,
    b,
    transpose_a=False,
    transpose_b=False,
    adjoint_a=False,
    adjoint_b=False,
    a_is_sparse=False,
    b_is_sparse=False,
    output_type=None,
    grad_a=False,
    grad_b=False,
    name=None,
):
    """``tf.matmul`` (batched over leading dimensions)."""
    for side, transpose, adjoint in (("a", transpose_a, adjoint_a), ("b", transpose_b, adjoint_b)):
        check_one_of_transpose_and_adjoint("tf.matmul", side, transpose, adjoint)
    a, b = convert(a), convert(b)
    if a.ndim < 2 or b.ndim < 2:
        raise _errors.InvalidArgumentValueError(
            f"tf.matmul takes matrices (rank >= 2), as TensorFlow does, but got shapes {tuple(a.shape)} and "
            f"{tuple(b.shape)}. For a matrix times a vector use tf.linalg.matvec, or make the vector a column "
            "(tf.expand_dims(v, -1)); for two vectors tf.tensordot(u, v, 1)."
        )
    out = _matmul_output_type(a, b, output_type)
    if out is None and np.dtype(a.dtype) in _NO_MATMUL_KERNEL:
        raise _errors.InvalidArgumentTypeError(
            f"tf.matmul got {np.dtype(a.dtype).name} matrices, for which TensorFlow has no product kernel. Cast "
            "them (tf.cast(a, tf.int32)), or for int8 and uint8 ask for an int32 product: output_type=tf.int32."
        )
    return call(
        _matmul,
        a,
        b,
        ta=bool(transpose_a),
        tb=bool(transpose_b),
        ca=bool(adjoint_a),
        cb=bool(adjoint_b),
        out=out,
    )


_NO_MATMUL_KERNEL = frozenset(np.dtype(t) for t in (np.bool_, np.int8, np.int16, np.uint8))


def check_one_of_transpose_and_adjoint(op: str, side: str, transpose, adjoint) -> None:
    """TensorFlow's refusal of both ``transpose_x`` and ``adjoint_x``."""
    if transpose and adjoint:
        raise _errors.GradkitValueError(
            f"{op} got transpose_{side}=True and adjoint_{side}=True; TensorFlow takes only one of them (an "
            f"adjoint is the conjugate transpose). Pass adjoint_{side}=True alone."
        )


def _matmul_output_type(a, b, output_type):
    """TensorFlow's ``output_type``: int8 or uint8 products accumulated and returned as int32;
    otherwise only the inputs' own dtype."""
    if output_type is None:
        return None
    out, inputs = np.dtype(output_type), {np.dtype(a.dtype), np.dtype(b.dtype)}
    if inputs == {out}:
        return None
    if out == np.int32 and inputs <= {np.dtype(np.int8), np.dtype(np.uint8)}:
        return out
    raise _errors.GradkitTypeError(
        f"tf.matmul got output_type={out.name} for {np.dtype(a.dtype).name} and {np.dtype(b.dtype).name} "
        "inputs: TensorFlow computes a product in another dtype only for int8 or uint8 inputs, as int32. "
        f"Cast the inputs instead: tf.matmul(tf.cast(a, tf.{out.name}), tf.cast(b, tf.{out.name}))."
    )


def _einsum(*operands, equation):
    return jnp.einsum(equation, *operands)


def einsum(equation, *inputs, name=None, **kwargs):
    """``tf.einsum``: NumPy's notation, with TensorFlow's rule that axes an ellipsis stands for
    (broadcast axes) appear in the result only where the output writes ``...``."""
    operands = [convert(x) for x in inputs]
    _check_ellipsis_output(equation, operands)
    _check_label_sizes(equation, operands)
    return call(_einsum, *operands, equation=equation)


def _check_label_sizes(equation: str, operands) -> None:
    """TensorFlow's rule that a letter names one size in every operand: only the axes an ellipsis stands
    for broadcast (NumPy would also stretch a lettered axis of size 1, hiding a shape mistake)."""
    if not isinstance(equation, str):
        return
    spec = equation.replace(" ", "").partition("->")[0].split(",")
    seen: dict[str, tuple[int, int]] = {}
    for position, (term, x) in enumerate(zip(spec, operands)):
        head, dots, tail = term.partition("...")
        labelled = list(zip(head, x.shape[: len(head)]))
        if tail:
            labelled += zip(tail, x.shape[x.ndim - len(tail) :])
        if not dots and len(term) != x.ndim:
            continue  # jax's own message names a term whose letters do not match the operand's rank
        for letter, size in labelled:
            first = seen.setdefault(letter, (int(size), position))
            if first[0] != int(size):
                where = f"operand {first[1]}" if first[1] != position else "an earlier axis of the same operand"
                raise _errors.InvalidArgumentValueError(
                    f"tf.einsum({equation!r}): label {letter!r} is {first[0]} in {where} but {int(size)} "
                    f"in operand {position} (got {', '.join(_errors.describe_value(o) for o in operands)}). TensorFlow broadcasts "
                    "only the axes an ellipsis stands for; give the axis the same size, or name it with '...' "
                    "to broadcast it, e.g. '...j,...j->...'."
                )


def _check_ellipsis_output(equation: str, operands) -> None:
    if not isinstance(equation, str) or "..." not in equation:
        return
    spec, _, output = equation.replace(" ", "").partition("->")
    if "..." in output and "->" in equation:
        return
    covered = 0
    for term, x in zip(spec.split(","), operands):
        if "..." in term:
            covered = builtins.max(covered, x.ndim - len(term.replace("...", "")))
    if covered > 0:
        raise _errors.InvalidArgumentValueError(
            f"tf.einsum({equation!r}): the ellipsis stands for {covered} broadcasting dimension(s), but the output "
            "has no ellipsis (...), which TensorFlow requires. Write the output explicitly with it, e.g. "
            "'...ij,...jk->...ik'."
        )


def _tensordot(a, b, axes):
    return jnp.tensordot(a, b, axes)


def _axis_values(ax):
    """An axis or a list of axes (ints, NumPy values or constant tensors) as Python ints."""
    value = known_value(ax)
    if value is None:
        raise _errors.GradkitTypeError(
            "tf.tensordot got traced axes: gradkit.tf needs the axes' values when the op is traced. Pass Python "
            "ints or lists, or a tensor made from constants outside the tf.function."
        )
    return int(value) if value.ndim == 0 else tuple(int(i) for i in value.ravel())


def tensordot(a, b, axes, name=None):
    """``tf.tensordot``: ``axes`` an int (the last ``axes`` of ``a`` with the first of ``b``), a pair of
    axes or axis lists, or a ``[2, k]`` array or tensor of them, as TensorFlow takes it."""
    if isinstance(axes, (list, tuple)):
        axes = tuple(_axis_values(ax) for ax in axes)
    elif known_value(axes) is not None and np.ndim(known_value(axes)) == 2:
        axes = tuple(_axis_values(row) for row in known_value(axes))
    else:
        axes = _axis_values(axes)
    return call(_tensordot, convert(a), convert(b), axes=axes)


def _norm(x, ord, axis, keepdims):
    if ord == "euclidean" or (ord == 2 and not isinstance(axis, tuple)) or ord == "fro":
        # TensorFlow's sqrt(sum(x * conj(x))) keeps a complex dtype (zero imaginary part); the
        # other orders go through abs (or singular values) and are real.
        squares = jnp.sum(x * jnp.conj(x), axis=axis, keepdims=keepdims)
        return _tf_sqrt(squares.real).astype(x.dtype) if jnp.iscomplexobj(x) else _tf_sqrt(squares)
    if ord == 1 and not isinstance(axis, tuple):
        return jnp.sum(_tf_abs(x), axis=axis, keepdims=keepdims)
    if ord == np.inf and not isinstance(axis, tuple):
        return _extreme(jnp.max, _tf_abs(x), axis, keepdims, -jnp.inf)  # TensorFlow's -inf for no elements
    if isinstance(axis, tuple):
        return _matrix_norm(x, ord, axis, keepdims)
    if axis is None and not isinstance(ord, str):
        # TensorFlow's p-norm of all the elements (jax would take a matrix norm of a matrix).
        out = jnp.linalg.norm(x.reshape(-1), ord=ord)
        return out.reshape((1,) * x.ndim) if keepdims else out
    return jnp.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims)


def _singular_values(x):
    # tf.linalg.svd's op, with TensorFlow's gradient (finite at repeated singular values, also
    # differentiated again, where jax's rule divides by their zero gaps).
    return _svd_half(x, False, False)


def _matrix_norm(x, ord, axis, keepdims):
    """TensorFlow's matrix norms of order 1, inf and 2, built as it builds them (``abs``, then sums,
    then a max; the largest of ``abs`` of the singular values), so their gradients at zero entries
    and at ties are TensorFlow's: ``abs``' is 0 at 0, where ``jnp.linalg.norm``'s is 1."""
    axis = tuple(a % x.ndim for a in axis)
    if ord == 2:
        moved = jnp.moveaxis(x, axis, (-2, -1))
        out = _extreme(jnp.max, _tf_abs(_singular_values(moved)), -1, False, -jnp.inf)
        out = out.astype(x.real.dtype) if jnp.iscomplexobj(x) else out
        return jnp.expand_dims(out, axis) if keepdims else out
    summed, maxed = (axis[0], axis[1]) if ord == 1 else (axis[1], axis[0])
    out = _extreme(jnp.max, jnp.sum(_tf_abs(x), axis=summed, keepdims=True), maxed, True, -jnp.inf)
    return out if keepdims else jnp.squeeze(out, axis)


def norm(tensor, ord="euclidean", axis=None, keepdims=None, name=None):  # noqa: A002
    """``tf.norm``: with ``axis=None`` the Euclidean norm of all elements (a list is stacked first).

    >>> import gradkit.tf as tf
    >>> float(tf.norm([tf.constant(3.0), tf.Variable(4.0)]))
    5.0
    """
    x, axis = convert(tensor), axis_arg(axis)
    _check_norm_arguments(ord, axis)
    check_dtype(x, INEXACT, "tf.norm")
    return call(_norm, x, ord=ord, axis=axis, keepdims=bool(keepdims))


def _check_norm_arguments(ord, axis) -> None:
    """TensorFlow's ``ord`` and ``axis``: None, an axis, or two distinct axes (a matrix norm of
    order 'euclidean', 'fro', 1, 2 or inf); a vector norm of order 'euclidean' or p > 0."""
    if isinstance(axis, tuple) and (len(axis) != 2 or axis[0] == axis[1]):
        raise _errors.GradkitValueError(
            f"tf.norm got axis={axis}: TensorFlow takes None, an integer, or a tuple of 2 distinct integers "
            "(a matrix norm)."
        )
    if isinstance(axis, tuple):
        if not (ord in ("euclidean", "fro") or (not isinstance(ord, str) and ord in (1, 2, np.inf))):
            raise _errors.GradkitValueError(
                f"tf.norm got ord={ord!r} for a matrix norm (axis={axis}): TensorFlow takes 'euclidean', 'fro', "
                "1, 2 or inf there."
            )
        return
    if ord != "euclidean" and (isinstance(ord, str) or not ord > 0):
        raise _errors.GradkitValueError(
            f"tf.norm got ord={ord!r} for a vector norm: TensorFlow takes 'euclidean' or a number p > 0 (inf "
            "too) there; 'fro' needs axis as a pair of axes."
        )


def _clip_by_norm(t, clip_norm, axes):
    # TensorFlow takes a negative clip_norm as 0 (its gradient through maximum is 0 there).
    clip_norm = _tf_maximum(clip_norm, jnp.zeros_like(clip_norm))
    l2sum = jnp.sum(t * t, axis=axes, keepdims=True)
    pred = l2sum > 0
    l2sum_safe = jnp.where(pred, l2sum, jnp.ones_like(l2sum))
    l2norm = jnp.where(pred, jnp.sqrt(l2sum_safe), l2sum)
    return t * clip_norm / _tf_maximum(l2norm, clip_norm)  # at a tie, the gradient of the clipped branch


def clip_by_norm(t, clip_norm, axes=None, name=None):
    """TensorFlow's ``t * clip_norm / max(||t||, clip_norm)`` (with its safe gradient at 0)."""
    t, clip_norm = convert_like(t, clip_norm, what="tf.clip_by_norm")
    if not jnp.issubdtype(t.dtype, jnp.floating):
        raise _errors.InvalidArgumentValueError(
            f"tf.clip_by_norm takes a real float tensor, as TensorFlow's kernels do, but got dtype {np.dtype(t.dtype).name}. "
            "Cast it first: tf.clip_by_norm(tf.cast(t, tf.float32), clip_norm)."
        )
    return call(_clip_by_norm, t, clip_norm, axes=axis_arg(axes))


def _clip_by_value(t, lo, hi):
    # TensorFlow's order, minimum then maximum: with lo > hi every value is lo. At a bound the
    # gradient goes to t, as TensorFlow's.
    return _tf_maximum(_tf_minimum(t, hi), lo)


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    """``tf.clip_by_value``: ``maximum(minimum(t, clip_value_max), clip_value_min)``; the bounds
    may broadcast against ``t`` but not make the result larger than it, as in TensorFlow."""
    t, lo, hi = convert_like(t, clip_value_min, clip_value_max, what="tf.clip_by_value")
    check_dtype(t, ORDERED, "tf.clip_by_value")
    shape = tuple(t.shape)
    try:
        result_shape = np.broadcast_shapes(shape, tuple(lo.shape), tuple(hi.shape))
    except ValueError:
        result_shape = None
    if result_shape != shape:
        raise _errors.GradkitValueError(
            f"tf.clip_by_value: bounds of shapes {tuple(lo.shape)} and {tuple(hi.shape)} do not broadcast to t's "
            f"shape {shape} (the result would not have t's shape); TensorFlow refuses them too. Give bounds that broadcast to t's shape, "
            "or broadcast t first (tf.broadcast_to)."
        )
    return call(_clip_by_value, t, lo, hi)


def _clip_by_global_norm(ts, clip_norm, use_norm=None):
    norm = _tf_sqrt(sum(jnp.sum(jnp.square(t)) for t in ts)) if use_norm is None else use_norm
    # TensorFlow's formula: an infinite or NaN norm makes every clipped value NaN.
    # 1.0 / norm is TensorFlow's RealDiv (NaN gradient at a zero norm), not its Reciprocal.
    scale = clip_norm * _tf_minimum(1.0 / norm, 1.0 / clip_norm) + (norm - norm)
    return [t * scale.astype(t.dtype) for t in ts], norm


def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    """``([t * clip_norm / max(global_norm, clip_norm) ...], global_norm)``; None entries stay None.
    With ``use_norm`` that norm is used (and returned) instead of the one ``t_list`` has."""
    if not isinstance(t_list, (list, tuple)):
        raise _errors.GradkitTypeError(
            f"`t_list` should be a sequence of tensors. Received {type(t_list)} (TensorFlow raises TypeError too). "
            "Pass a list: tf.clip_by_global_norm([t], clip_norm), or tf.clip_by_norm(t, clip_norm) for one tensor."
        )
    t_list = list(t_list)
    present = [i for i, t in enumerate(t_list) if t is not None]
    norm_arg = () if use_norm is None else (convert(use_norm, np.float32),)
    clipped, norm = call(_clip_by_global_norm, [convert(t_list[i]) for i in present], convert(clip_norm), *norm_arg)
    out = [None] * len(t_list)
    for i, t in zip(present, clipped):
        out[i] = t
    return out, norm


def add_n(inputs, name=None):
    """``tf.math.add_n``: the sum of tensors of one shape and dtype (no broadcasting, as TensorFlow)."""
    if isinstance(inputs, (list, tuple)):
        xs = [convert(x) for x in inputs]
    else:  # a tensor is a list of its rows, as TensorFlow iterates it
        whole = convert(inputs)
        xs = [whole[i] for i in builtins.range(whole.shape[0])] if whole.ndim else []
    if not xs:
        raise _errors.GradkitValueError("tf.math.add_n takes a non-empty list of tensors, as TensorFlow does.")
    kinds = {(tuple(x.shape), np.dtype(x.dtype).name) for x in xs}
    if xs[0].dtype == jnp.bool_:
        raise bool_refused("tf.math.add_n")
    if len(kinds) > 1:
        raise _errors.InvalidArgumentValueError(
            f"tf.math.add_n takes tensors of one shape and dtype, as TensorFlow does (it does not broadcast), but "
            f"got {', '.join(_errors.describe_value(x) for x in xs)}. Broadcast or cast them first (tf.broadcast_to, "
            "tf.cast), or add them with tf.add."
        )
    out = xs[0]
    for x in xs[1:]:
        out = out + x
    return call(jnp.asarray, out)
