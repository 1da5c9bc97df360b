"""``keras.ops``' NaN-skipping reductions: ``nansum``, ``nanmean``, ``nanmax``, ``nanargmax``,
``nanstd``, ``nancumsum``, ``nanmedian``, ``nanquantile``, ...

Each treats a NaN entry as absent, as NumPy's functions of the same names do, with Keras' dtypes:
``nansum``/``nanprod``/``nancumsum`` of booleans and small integers widen to int32,
``nanmean``/``nanstd``/``nanvar``/``nanmedian``/``nanquantile`` of integers are float32,
``nanargmax``/``nanargmin`` int32 (-1 where every entry is NaN). An all-NaN slice gives NaN (``nansum``:
0, ``nanprod``: 1). ``nancumsum``/``nancumprod`` go through ``nan_to_num`` as Keras does, so an
infinity there becomes the dtype's largest finite value.

>>> import gradkit.tf as tf
>>> ops = tf.keras.ops
>>> x = tf.constant([[1.0, float("nan"), 3.0], [float("nan")] * 3])
>>> ops.nansum(x, axis=1).numpy().tolist(), ops.nanmax(x, axis=1).numpy().tolist()
([4.0, 0.0], [3.0, nan])
>>> ops.nanargmin(x, axis=1).numpy().tolist()
[0, -1]
"""

from __future__ import annotations

import builtins

import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from ... import _array, _math
from .dispatch import apply, axes, cast, keras_op, tensor
from .dtype_rules import FLOATX, float_of, is_float
from .numpy_elementwise import nan_to_num
from .numpy_reductions import any_rank_q, argmax, argmin, cumprod, cumsum, nearest_quantile, prod
from .numpy_reductions import sum as _sum

NAMES = (
    "nansum nanmean nanmax nanmin nanprod nanstd nanvar nanargmax nanargmin nancumsum nancumprod nanmedian "
    "nanpercentile nanquantile"
)


def _no_axes(axis):
    # Keras returns x itself for axis=() (or []): a reduction over no axes.
    return isinstance(axis, (tuple, list)) and len(axis) == 0


def _replaced(x, value):
    """``x`` with its NaNs replaced by ``value`` (a float ``x``; others have none)."""
    return _array.where(_math.is_nan(x), tensor(value, x.dtype), x)


@keras_op
def nansum(x, axis=None, keepdims=False):
    """``keras.ops.nansum(x, axis=None, keepdims=False)``: the sum, NaNs counted as 0 (booleans and
    small integers summed in int32)."""
    x = tensor(x)
    if is_float(x.dtype):
        x = _replaced(x, 0.0)
    return _sum(x, axis=axis, keepdims=keepdims)


@keras_op
def nanprod(x, axis=None, keepdims=False):
    """``keras.ops.nanprod(x, axis=None, keepdims=False)``: the product, NaNs counted as 1."""
    x = tensor(x)
    if is_float(x.dtype):
        x = _replaced(x, 1.0)
    return prod(x, axis=axis, keepdims=keepdims)


@keras_op
def nanmean(x, axis=None, keepdims=False):
    """``keras.ops.nanmean(x, axis=None, keepdims=False)``: the mean of the entries that are not NaN
    (NaN where there are none; float32 for integer or boolean ``x``)."""
    x = tensor(x)
    if _no_axes(axis):
        return x
    if not is_float(x.dtype):
        return _math.reduce_mean(cast(x, FLOATX), axis=axes(axis), keepdims=keepdims)
    dtype = float_of(x.dtype)
    total = cast(nansum(x, axis=axis, keepdims=keepdims), dtype)
    count = _math.reduce_sum(cast(_math.logical_not(_math.is_nan(x)), dtype), axis=axes(axis), keepdims=keepdims)
    return _math.divide(total, count)


@keras_op
def nanvar(x, axis=None, keepdims=False):
    """``keras.ops.nanvar(x, axis=None, keepdims=False)``: the variance of the entries that are not NaN
    (float32 for integer or boolean ``x``)."""
    x = tensor(x)
    x = cast(x, float_of(x.dtype))
    mean = nanmean(x, axis=axis, keepdims=True)
    valid = _math.logical_not(_math.is_nan(x))
    centered = _array.where(valid, _math.subtract(x, mean), tensor(0.0, x.dtype))
    count = _math.reduce_sum(cast(valid, x.dtype), axis=axes(axis), keepdims=keepdims)
    return _math.divide(_math.reduce_sum(_math.square(centered), axis=axes(axis), keepdims=keepdims), count)


@keras_op
def nanstd(x, axis=None, keepdims=False):
    """``keras.ops.nanstd(x, axis=None, keepdims=False)``: the standard deviation of the entries that
    are not NaN, ``sqrt(nanvar(x))``."""
    return _math.sqrt(nanvar(x, axis=axis, keepdims=keepdims))


def _nan_extreme(name, reduce, logical, fill):
    def op(x, axis=None, keepdims=False):
        x = tensor(x)
        if not is_float(x.dtype):
            return (logical if x.dtype == np.bool_ else reduce)(x, axis=axes(axis), keepdims=keepdims)
        every = _math.reduce_all(_math.is_nan(x), axis=axes(axis), keepdims=keepdims)
        found = reduce(_replaced(x, fill), axis=axes(axis), keepdims=keepdims)
        return _array.where(every, tensor(np.nan, x.dtype), found)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = (
        f"``keras.ops.{name}(x, axis=None, keepdims=False)``: the {name[3:]}imum of the entries that are not "
        f"NaN (NaN where there are none; booleans: {'any' if name == 'nanmax' else 'all'})."
    )
    return keras_op(op)


nanmax = _nan_extreme("nanmax", _math.reduce_max, _math.reduce_any, -np.inf)
nanmin = _nan_extreme("nanmin", _math.reduce_min, _math.reduce_all, np.inf)


def _nan_arg(name, arg, fill):
    def op(x, axis=None, keepdims=False):
        x = tensor(x)
        if not is_float(x.dtype):
            return arg(x, axis=axis, keepdims=keepdims)
        nan = _math.is_nan(x)
        every = _math.reduce_all(nan, axis=axes(axis), keepdims=keepdims)
        found = arg(_array.where(nan, tensor(fill, x.dtype), x), axis=axis, keepdims=keepdims)
        return _array.where(every, tensor(-1, "int32"), found)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = (
        f"``keras.ops.{name}(x, axis=None, keepdims=False)``: the int32 index of the "
        f"{'largest' if name == 'nanargmax' else 'smallest'} entry that is not NaN (-1 where all are NaN)."
    )
    return keras_op(op)


nanargmax = _nan_arg("nanargmax", argmax, -np.inf)
nanargmin = _nan_arg("nanargmin", argmin, np.inf)


@keras_op
def nancumsum(x, axis=None, dtype=None):
    """``keras.ops.nancumsum(x, axis=None, dtype=None)``: the cumulative sum, NaNs counted as 0 (and,
    as Keras computes it through ``nan_to_num``, infinities as the dtype's extreme finite values)."""
    return cumsum(nan_to_num(x), axis=axis, dtype=dtype)


@keras_op
def nancumprod(x, axis=None, dtype=None):
    """``keras.ops.nancumprod(x, axis=None, dtype=None)``: the cumulative product, NaNs counted as 1
    (infinities as the dtype's extreme finite values, as Keras computes it through ``nan_to_num``)."""
    return cumprod(nan_to_num(x, nan=1.0), axis=axis, dtype=dtype)


@any_rank_q
def _nanquantile(x, q, axis, method, keepdims):
    reduced = range(x.ndim) if axis is None else np.atleast_1d(axis)
    if any(x.shape[a] == 0 for a in reduced):
        # No entries: NaN, in the shape the reduction has (jnp.nanquantile cannot gather from none).
        x = jnp.full(
            [1 if a in reduced or a - x.ndim in reduced else n for a, n in enumerate(x.shape)], np.nan, x.dtype
        )
    if method == "nearest":
        count = jnp.sum(~jnp.isnan(x), axis=axis, keepdims=keepdims)
        return nearest_quantile(jnp.nanquantile, x, q, axis, keepdims, count)
    return jnp.nanquantile(x, q, axis=axis, method=method, keepdims=keepdims)


@keras_op
def nanquantile(x, q, axis=None, method="linear", keepdims=False):
    """``keras.ops.nanquantile(x, q, axis=None, method="linear", keepdims=False)``: the ``q``-th
    quantiles (``q`` in [0, 1], a number or 1-D) of the entries that are not NaN, along ``axis``
    (NaN where there are none); the quantile dimension first, as in NumPy; float32 for integers.

    Keras' TensorFlow backend fails where this answers: for integer ``x`` along an axis, and for a
    1-D ``q`` along an axis with an all-NaN slice; gradkit gives NumPy's results there."""
    if method not in ("linear", "lower", "higher", "midpoint", "nearest"):
        raise _errors.GradkitValueError(
            f"tf.keras.ops.nanquantile got method={method!r}; Keras takes 'linear', 'lower', 'higher', 'midpoint' "
            "or 'nearest'. Pass one of them."
        )
    x = tensor(x)
    if _no_axes(axis):
        return x
    x = cast(x, float_of(x.dtype))
    chosen = axes(axis)
    if isinstance(chosen, tuple) and len(chosen) == 1:
        chosen = chosen[0]
    return apply(_nanquantile, x, tensor(q, x.dtype), axis=chosen, method=method, keepdims=builtins.bool(keepdims))


@keras_op
def nanmedian(x, axis=None, keepdims=False):
    """``keras.ops.nanmedian(x, axis=None, keepdims=False)``: the median of the entries that are not
    NaN (``nanquantile`` at 0.5)."""
    return nanquantile(x, 0.5, axis=axis, keepdims=keepdims)


@keras_op
def nanpercentile(x, q, axis=None, method="linear", keepdims=False):
    """``keras.ops.nanpercentile(x, q, axis=None, method="linear", keepdims=False)``: the ``q``-th
    percentiles (``q`` in [0, 100]) of the entries that are not NaN, ``nanquantile`` at ``q / 100``."""
    q = _math.divide(tensor(q, FLOATX), tensor(100.0, FLOATX))
    return nanquantile(x, q, axis=axis, method=method, keepdims=keepdims)
