"""``keras.ops``' reductions and scans: ``sum``, ``mean``, ``max``, ``argmax``, ``std``, ``cumsum``,
``median``, ``trapezoid``, ..., and counting and binning: ``bincount``, ``digitize``, ``searchsorted``.

Keras' dtypes: ``sum``/``prod`` of booleans and small integers widen to int32 (uint32 for small
unsigned ones), ``mean``/``std``/``var``/``average`` of integers are float32, ``argmax``/``argmin``
int32; ``mean`` of float16 is accumulated in float32. ``max``/``min`` of an empty tensor raise, as
Keras' do; their gradients, and ``argmax``'s ties, are TensorFlow's.

>>> import gradkit.tf as tf
>>> ops = tf.keras.ops
>>> x = tf.constant([[1, 5], [3, 2]])
>>> ops.sum(x, axis=0).numpy().tolist(), ops.mean(x).numpy().item(), ops.argmax(x, axis=1).numpy().tolist()
([4, 7], 2.75, [1, 0])
"""

from __future__ import annotations

import builtins

import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from ... import _array, _math, _ordering
from .dispatch import apply, axes, cast, keras_op, known, promoted, tensor, value_of
from .dtype_rules import float_of, result_type, standardize_dtype

NAMES = (
    "sum prod mean max min amax amin std var all any argmax argmin cumsum cumprod average count_nonzero quantile "
    "median percentile ptp trapezoid bincount digitize searchsorted"
)


def _accumulated(x, dtype):
    """Keras' (and JAX's) accumulator dtype for ``sum``, ``prod`` and ``trace``."""
    dtype = standardize_dtype(dtype if dtype is not None else x.dtype)
    if dtype.name in ("bool", "int8", "int16"):
        return np.dtype("int32")
    if dtype.name in ("uint8", "uint16"):
        return np.dtype("uint32")
    return dtype


@keras_op
def sum(x, axis=None, keepdims=False):  # noqa: A001
    """``keras.ops.sum(x, axis=None, keepdims=False)``."""
    x = tensor(x)
    return _math.reduce_sum(cast(x, _accumulated(x, None)), axis=axes(axis), keepdims=keepdims)


@keras_op
def prod(x, axis=None, keepdims=False, dtype=None):
    """``keras.ops.prod(x, axis=None, keepdims=False, dtype=None)``."""
    x = tensor(x)
    target = _accumulated(x, None) if dtype is None else x.dtype
    return _math.reduce_prod(cast(x, target), axis=axes(axis), keepdims=keepdims)


@keras_op
def mean(x, axis=None, keepdims=False):
    """``keras.ops.mean(x, axis=None, keepdims=False)``: float32 for integer or boolean ``x``
    (float16 accumulated in float32, the result float16)."""
    x = tensor(x)
    compute = result_type(x.dtype, "float32")
    out = np.dtype(x.dtype) if np.dtype(x.dtype).kind in "fc" or x.dtype == jnp.bfloat16 else compute
    return cast(_math.reduce_mean(cast(x, compute), axis=axes(axis), keepdims=keepdims), out)


def _extreme(name, reduce, logical, combine):
    def op(x, axis=None, keepdims=False, initial=None):
        x = tensor(x)
        boolean = x.dtype == np.bool_
        if initial is not None:
            out = (logical if boolean else reduce)(x, axis=axes(axis), keepdims=keepdims)
            if boolean:
                return cast(combine(cast(out, "int32"), cast(initial, "int32")), "bool")
            return combine(out, tensor(initial, out.dtype))
        if builtins.int(np.prod(x.shape)) == 0:
            raise _errors.InvalidArgumentValueError(
                f"tf.keras.ops.{name} got an empty tensor of shape {tuple(x.shape)}: it has no {name}imum, and "
                f"Keras raises for it ('Cannot compute the {name} of an empty tensor'). Pass initial=... to give "
                "the result for an empty input."
            )
        return (logical if boolean else reduce)(x, axis=axes(axis), keepdims=keepdims)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = (
        f"``keras.ops.{name}(x, axis=None, keepdims=False, initial=None)``: the {name}imum (booleans: "
        f"{'any' if name == 'max' else 'all'}); with ``initial``, compared with it too."
    )
    return op


_max = _extreme("max", _math.reduce_max, _math.reduce_any, _math.maximum)
_min = _extreme("min", _math.reduce_min, _math.reduce_all, _math.minimum)
max = keras_op(_max, "max")  # noqa: A001
min = keras_op(_min, "min")  # noqa: A001
amax = keras_op(_max, "amax")
amin = keras_op(_min, "amin")


@keras_op
def std(x, axis=None, keepdims=False):
    """``keras.ops.std(x, axis=None, keepdims=False)``: the standard deviation (float32 for integers)."""
    x = tensor(x)
    return _math.reduce_std(cast(x, float_of(x.dtype)), axis=axes(axis), keepdims=keepdims)


@keras_op
def var(x, axis=None, keepdims=False):
    """``keras.ops.var(x, axis=None, keepdims=False)``: the variance (float32 for integers)."""
    x = tensor(x)
    computed = _math.reduce_variance(cast(x, result_type(x.dtype, "float32")), axis=axes(axis), keepdims=keepdims)
    return cast(computed, float_of(x.dtype))


@keras_op
def all(x, axis=None, keepdims=False):  # noqa: A001
    """``keras.ops.all(x, axis=None, keepdims=False)``: whether every entry is nonzero."""
    return _math.reduce_all(cast(x, "bool"), axis=axes(axis), keepdims=keepdims)


@keras_op
def any(x, axis=None, keepdims=False):  # noqa: A001
    """``keras.ops.any(x, axis=None, keepdims=False)``: whether some entry is nonzero."""
    return _math.reduce_any(cast(x, "bool"), axis=axes(axis), keepdims=keepdims)


def _negative_zero_below(x):
    # Keras orders -0.0 below 0.0 (it replaces it by -tiny) so argmax/argmin agree across backends.
    tiny = float(jnp.finfo(x.dtype).tiny)
    negative_zero = _math.logical_and(_math.equal(x, 0.0), apply(_is_signbit, x))
    return _array.where(negative_zero, tensor(-tiny, x.dtype), x)


def _is_signbit(x):
    return jnp.signbit(x)


def _arg(name, tf_op):
    def op(x, axis=None, keepdims=False):
        x = tensor(x)
        dtype = np.dtype(x.dtype)
        if (dtype.kind == "f" or x.dtype == jnp.bfloat16) and x.ndim:
            x = cast(x, result_type(dtype, "float32"))
            x = _negative_zero_below(x)
        flat = _array.reshape(x, [-1]) if axis is None else x
        out = tf_op(flat, axis=0 if axis is None else builtins.int(axis))
        out = cast(out, "int32")
        if keepdims:
            shape = [1] * x.ndim
            if axis is not None:
                shape = list(x.shape)
                shape[builtins.int(axis)] = 1
            out = _array.reshape(out, shape)
        return out

    op.__name__ = op.__qualname__ = name
    op.__doc__ = (
        f"``keras.ops.{name}(x, axis=None, keepdims=False)``: the int32 index of the "
        f"{'largest' if name == 'argmax' else 'smallest'} entry (over the flattened ``x`` when ``axis`` is "
        "None), the first at a tie; -0.0 counts as below 0.0."
    )
    return keras_op(op)


argmax = _arg("argmax", _math.argmax)
argmin = _arg("argmin", _math.argmin)


def _cumulative(name, tf_op):
    def op(x, axis=None, dtype=None):
        x = tensor(x, dtype)
        if x.dtype == np.bool_:
            x = cast(x, "int32")
        if axis is None:
            x, axis = _array.reshape(x, [-1]), 0
        return tf_op(x, axis=builtins.int(axis))

    op.__name__ = op.__qualname__ = name
    op.__doc__ = (
        f"``keras.ops.{name}(x, axis=None, dtype=None)``: the cumulative "
        f"{'sum' if name == 'cumsum' else 'product'} along ``axis`` (of the flattened ``x`` when None)."
    )
    return keras_op(op)


cumsum = _cumulative("cumsum", _ordering.cumsum)
cumprod = _cumulative("cumprod", _ordering.cumprod)


@keras_op
def average(x, axis=None, weights=None):
    """``keras.ops.average(x, axis=None, weights=None)``: the mean, weighted by ``weights`` (of
    ``x``'s shape, or 1-D along ``axis``), float32 for integers."""
    x = tensor(x)
    if weights is None:
        return _math.reduce_mean(cast(x, float_of(x.dtype)), axis=axes(axis))
    (x, weights), _ = promoted(x, tensor(weights), extra=(float,))
    if axis is None or x.ndim == weights.ndim:
        total = _math.reduce_sum(weights, axis=axes(axis))
        return _math.divide(_math.reduce_sum(_math.multiply(x, weights), axis=axes(axis)), total)
    return _math.divide(_math.tensordot(x, weights, [[builtins.int(axis)], [0]]), _math.reduce_sum(weights))


@keras_op
def count_nonzero(x, axis=None):
    """``keras.ops.count_nonzero(x, axis=None)``: how many entries are not zero, as int32."""
    return _math.count_nonzero(tensor(x), axis=axes(axis), dtype=np.int32)


def nearest_quantile(quantile_fn, x, q, axis, keepdims, count):
    """NumPy's and Keras' ``method="nearest"``: the sorted entry at ``q * (count - 1)`` rounded half to
    even, where jax's rounds every half down. ``count``: how many entries each quantile reads."""
    low = quantile_fn(x, q, axis=axis, method="lower", keepdims=keepdims)
    high = quantile_fn(x, q, axis=axis, method="higher", keepdims=keepdims)
    count = jnp.broadcast_to(jnp.asarray(count, q.dtype), low.shape[q.ndim :])
    position = jnp.reshape(q, q.shape + (1,) * count.ndim) * jnp.reshape(count - 1, (1,) * q.ndim + count.shape)
    return jnp.where(jnp.round(position) > jnp.floor(position), high, low)


def any_rank_q(quantile_fn):
    """``quantile_fn`` for a ``q`` of any rank, as NumPy's: the quantiles of the flattened ``q``,
    the result's leading axes then ``q``'s shape (jax takes ``q`` of rank 0 or 1 only)."""

    def of_any_rank(x, q, axis, method, keepdims):
        if q.ndim <= 1:
            return quantile_fn(x, q, axis, method, keepdims)
        flat = quantile_fn(x, jnp.reshape(q, (-1,)), axis, method, keepdims)
        return jnp.reshape(flat, q.shape + flat.shape[1:])

    return of_any_rank


@any_rank_q
def _quantile(x, q, axis, method, keepdims):
    if method == "nearest":
        count = x.size if axis is None else np.prod([x.shape[a] for a in np.atleast_1d(axis)])
        return nearest_quantile(jnp.quantile, x, q, axis, keepdims, count)
    return jnp.quantile(x, q, axis=axis, method=method, keepdims=keepdims)


@keras_op
def quantile(x, q, axis=None, method="linear", keepdims=False):
    """``keras.ops.quantile(x, q, axis=None, method="linear", keepdims=False)``: the ``q``-th quantiles
    (``q`` in [0, 1], of any shape) along ``axis``; ``method`` one of NumPy's "linear", "lower",
    "higher", "midpoint", "nearest"."""
    if method not in ("linear", "lower", "higher", "midpoint", "nearest"):
        raise _errors.GradkitValueError(
            f"tf.keras.ops.quantile got method={method!r}; Keras takes 'linear', 'lower', 'higher', 'midpoint' "
            "or 'nearest'. Pass one of them."
        )
    x = tensor(x)
    x = cast(x, float_of(x.dtype))
    return apply(_quantile, x, tensor(q, x.dtype), axis=axes(axis), method=method, keepdims=bool(keepdims))


@keras_op
def median(x, axis=None, keepdims=False):
    """``keras.ops.median(x, axis=None, keepdims=False)``: the median along ``axis`` (``quantile`` at 0.5)."""
    return quantile(x, 0.5, axis=axis, keepdims=keepdims)


@keras_op
def percentile(x, q, axis=None, method="linear", keepdims=False):
    """``keras.ops.percentile(x, q, axis=None, method="linear", keepdims=False)``: the ``q``-th
    percentiles (``q`` in [0, 100]), ``quantile`` at ``q / 100``."""
    q = _math.divide(tensor(q, "float32"), tensor(100.0, "float32"))
    return quantile(x, q, axis=axis, method=method, keepdims=keepdims)


@keras_op
def ptp(x, axis=None, keepdims=False):
    """``keras.ops.ptp(x, axis=None, keepdims=False)``: the range, ``max - min``, along ``axis``."""
    x = tensor(x)
    chosen = axes(axis)
    return _math.subtract(
        _math.reduce_max(x, axis=chosen, keepdims=keepdims), _math.reduce_min(x, axis=chosen, keepdims=keepdims)
    )


def _last(x, axis):
    return jnp.moveaxis(x, axis, -1)


@keras_op
def trapezoid(y, x=None, dx=1.0, axis=-1):
    """``keras.ops.trapezoid(y, x=None, dx=1.0, axis=-1)``: the integral of ``y`` along ``axis`` by the
    trapezoidal rule, at sample points ``x`` (else spaced ``dx``); integers in float32."""
    y = tensor(y)
    y = cast(y, float_of(y.dtype))
    axis = builtins.int(axis)
    if x is None:
        step = tensor(dx, y.dtype)
    else:
        x = tensor(x, y.dtype)
        if x.ndim == 1:  # NumPy's rule: 1-D sample points lie along axis
            shape = [1] * y.ndim
            shape[axis] = x.shape[0]
            x = _array.reshape(x, shape)
        step = apply(_last, apply(_diff, x, axis=axis), axis=axis)
    y = apply(_last, y, axis=axis)
    heights = _math.multiply(tensor(0.5, y.dtype), _math.add(y[..., 1:], y[..., :-1]))
    return _math.reduce_sum(_math.multiply(heights, step), axis=-1)


def _diff(x, axis):
    return jnp.diff(x, axis=axis)


def _bincount(x, weights, length):
    # One row of counts per row of x (Keras' axis=-1), as a sum of one-hot rows, so a gradient
    # reaches the weights.
    bins = jnp.arange(length, dtype=x.dtype).reshape((1,) * x.ndim + (length,))
    hot = jnp.asarray(x[..., None] == bins, weights.dtype)
    return jnp.sum(hot * weights[..., None], axis=-2)


@keras_op
def bincount(x, weights=None, minlength=0, sparse=False):
    """``keras.ops.bincount(x, weights=None, minlength=0, sparse=False)``: how often each non-negative
    integer occurs in ``x`` (each row of a 2-D ``x``), or the sum of ``weights`` there; ``max(x) + 1``
    (at least ``minlength``) counts, int32 or the weights' promoted dtype."""
    if sparse:
        raise _errors.GradkitNotImplementedError(
            "tf.keras.ops.bincount got sparse=True: gradkit.tf has no sparse tensors. Leave sparse=False for dense "
            "counts."
        )
    x = tensor(x)
    if np.dtype(x.dtype).kind not in "iu":
        x = cast(x, "int32")
    value = known(x)
    if value is None:
        raise _errors.TracedValueNeededError(
            "tf.keras.ops.bincount got a tensor traced inside tf.function: its largest value sets the result's "
            "length, which must be known when tracing in gradkit (JAX). Call it eagerly."
        )
    length = builtins.max(builtins.int(value.max()) + 1 if value.size else 0, builtins.int(minlength))
    if weights is None:
        weights, dtype = _array.ones_like(x, dtype=np.int32), np.dtype("int32")
    else:
        weights = tensor(weights)
        dtype = result_type(x.dtype, weights.dtype)
        work = "int32" if np.dtype(weights.dtype).kind in "biu" else "float32"
        weights = cast(weights, work)
    return cast(apply(_bincount, x, weights, length=length), dtype)


def _search(sorted_sequence, values, side):
    return jnp.searchsorted(sorted_sequence, values, side=side).astype(jnp.int32)


@keras_op
def digitize(x, bins):
    """``keras.ops.digitize(x, bins)``: the int32 index of the bin of each entry: ``i`` with
    ``bins[i - 1] <= x < bins[i]`` for increasing ``bins``."""
    bins = [builtins.float(b) for b in value_of(bins, "tf.keras.ops.digitize's bins").ravel()]
    if builtins.any(b > c for b, c in builtins.zip(bins, bins[1:])):
        raise _errors.InvalidArgumentValueError(
            f"[gradkit] tf.keras.ops.digitize got bins {bins}, which are not in increasing order: Keras on "
            "TensorFlow raises 'Expected sorted boundaries'. Sort them."
        )
    x = tensor(x)
    compute = "float32" if np.dtype(x.dtype).kind in "biu" or np.dtype(x.dtype).itemsize < 4 else x.dtype
    return apply(_search, tensor(np.asarray(bins, np.float32), compute), cast(x, compute), side="right")


@keras_op
def searchsorted(sorted_sequence, values, side="left"):
    """``keras.ops.searchsorted(sorted_sequence, values, side="left")``: the int32 indices where
    ``values`` would go into the 1-D ``sorted_sequence`` to keep it sorted (after equal entries with
    ``side="right"``)."""
    sorted_sequence, values = tensor(sorted_sequence), tensor(values)
    if sorted_sequence.ndim != 1:
        raise _errors.GradkitValueError(
            f"tf.keras.ops.searchsorted takes a 1-D sorted_sequence, but got shape {tuple(sorted_sequence.shape)} "
            "(Keras raises ValueError). Map over the rows with tf.keras.ops.vectorized_map."
        )
    if side not in ("left", "right"):
        raise _errors.GradkitValueError(f"tf.keras.ops.searchsorted got side={side!r}; it takes 'left' or 'right'.")
    (sorted_sequence, values), _ = promoted(sorted_sequence, values)
    return apply(_search, sorted_sequence, values, side=side)
