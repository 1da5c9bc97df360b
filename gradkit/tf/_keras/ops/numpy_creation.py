"""``keras.ops``' tensor creation: ``zeros``, ``ones``, ``full``, ``eye``, ``arange``, ``linspace``, ...

Keras' defaults: float32 unless ``dtype`` is given (``full((2,), 3)`` is float32), ``arange``'s
dtype from its arguments (int32 for ints), ``linspace``'s float32 (an integer ``dtype`` floors
the values). A tensor ``fill_value`` (or ``linspace`` end) is recorded, so a gradient reaches it.

>>> import gradkit.tf as tf
>>> ops = tf.keras.ops
>>> ops.full((2,), 3).numpy().tolist(), ops.arange(3).dtype.name, ops.eye(2, k=1).numpy().tolist()
([3.0, 3.0], 'int32', [[0.0, 1.0], [0.0, 0.0]])
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from ... import _array, _math, _nondiff
from ..._convert import static_ints
from .dispatch import apply, cast, keras_op, tensor, value_of
from .dtype_rules import dtype_of, result_type, standardize_dtype

NAMES = "array zeros ones full zeros_like ones_like full_like empty eye identity tri arange linspace"


def _shape(shape) -> tuple:
    return static_ints(shape)


@keras_op
def array(x, dtype=None):
    """``keras.ops.array(x, dtype=None)``: ``x`` as a tensor (Python ints int32, floats float32)."""
    return _array.identity(tensor(x, dtype))


@keras_op
def zeros(shape, dtype=None):
    """``keras.ops.zeros(shape, dtype=None)``: zeros (float32 by default)."""
    return _array.zeros(_shape(shape), standardize_dtype(dtype))


@keras_op
def ones(shape, dtype=None):
    """``keras.ops.ones(shape, dtype=None)``: ones (float32 by default)."""
    return _array.ones(_shape(shape), standardize_dtype(dtype))


@keras_op
def empty(shape, dtype=None):
    """``keras.ops.empty(shape, dtype=None)``: a tensor of that shape (zeros, as Keras' TensorFlow backend)."""
    return _array.zeros(_shape(shape), standardize_dtype(dtype))


def _broadcast_to(value, shape):
    return jnp.broadcast_to(value, shape)


@keras_op
def full(shape, fill_value, dtype=None):
    """``keras.ops.full(shape, fill_value, dtype=None)``: ``fill_value`` (a number or a tensor that
    broadcasts) everywhere, float32 unless ``dtype`` is given."""
    return apply(_broadcast_to, tensor(fill_value, standardize_dtype(dtype)), shape=_shape(shape))


@keras_op
def zeros_like(x, dtype=None):
    """``keras.ops.zeros_like(x, dtype=None)``: zeros of ``x``'s shape and dtype (or ``dtype``)."""
    x = tensor(x)
    return _array.zeros_like(x, dtype=None if dtype is None else standardize_dtype(dtype))


@keras_op
def ones_like(x, dtype=None):
    """``keras.ops.ones_like(x, dtype=None)``: ones of ``x``'s shape and dtype (or ``dtype``)."""
    x = tensor(x)
    return _array.ones_like(x, dtype=None if dtype is None else standardize_dtype(dtype))


@keras_op
def full_like(x, fill_value, dtype=None):
    """``keras.ops.full_like(x, fill_value, dtype=None)``: ``fill_value`` in ``x``'s shape and dtype
    (or ``dtype``)."""
    x = tensor(x)
    dtype = standardize_dtype(x.dtype if dtype is None else dtype)
    return apply(_broadcast_to, tensor(fill_value, dtype), shape=tuple(x.shape))


def _eye(n, m, k, dtype):
    return jnp.eye(n, m, k=k, dtype=dtype)


@keras_op
def eye(N, M=None, k=0, dtype=None):
    """``keras.ops.eye(N, M=None, k=0, dtype=None)``: ones on the ``k``-th diagonal of an N x M matrix."""
    n = int(N)
    return apply(_eye, n=n, m=n if M is None else int(M), k=int(k), dtype=standardize_dtype(dtype))


@keras_op
def identity(n, dtype=None):
    """``keras.ops.identity(n, dtype=None)``: the n x n identity matrix (float32 by default)."""
    return apply(_eye, n=int(n), m=int(n), k=0, dtype=standardize_dtype(dtype))


def _tri(n, m, k, dtype):
    return jnp.tri(n, m, k=k, dtype=dtype)


@keras_op
def tri(N, M=None, k=0, dtype=None):
    """``keras.ops.tri(N, M=None, k=0, dtype=None)``: ones at and below the ``k``-th diagonal."""
    n = int(N)
    return apply(_tri, n=n, m=n if M is None else int(M), k=int(k), dtype=standardize_dtype(dtype))


@keras_op
def arange(start, stop=None, step=None, dtype=None):
    """``keras.ops.arange(start, stop=None, step=None, dtype=None)``: ``start, start + step, ...`` below
    ``stop`` (``arange(n)``: 0 to n - 1), in the dtype of its arguments unless ``dtype`` is given."""
    if dtype is None:
        given = [x for x in (start, stop, step) if x is not None]
        dtype = result_type(*(dtype_of(x if isinstance(x, (bool, int, float)) else tensor(x)) for x in given))
    dtype = standardize_dtype(dtype)
    start, stop, step = (None if x is None else value_of(x).item() for x in (start, stop, step))
    return _array.range(start, stop, 1 if step is None else step, dtype=dtype)


@keras_op
def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    """``keras.ops.linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0)``:
    ``num`` evenly spaced values from ``start`` to ``stop`` (without it when ``endpoint`` is False),
    float32 by default (an integer ``dtype`` floors them); with ``retstep``, also the spacing."""
    num = int(num)
    if num < 0:
        raise _errors.GradkitValueError(
            f"tf.keras.ops.linspace got num={num}: it must be a non-negative integer (Keras raises ValueError)."
        )
    if dtype is None:
        dtype = result_type(*(dtype_of(x if isinstance(x, (int, float)) else tensor(x)) for x in (start, stop)), float)
    dtype = standardize_dtype(dtype)
    compute = dtype if dtype.kind in "fc" or dtype == jnp.bfloat16 else np.dtype("float32")
    start, stop = tensor(start, compute), tensor(stop, compute)
    step = tensor(np.nan, compute)
    if endpoint:
        result = _array.linspace(start, stop, num, axis=axis)
        if num > 1:
            step = _math.divide(_math.subtract(stop, start), tensor(num - 1, compute))
    else:
        if num > 0:
            step = _math.divide(_math.subtract(stop, start), tensor(num, compute))
        result = _array.linspace(start, _math.subtract(stop, step) if num > 1 else stop, num, axis=axis)
    if dtype.kind in "iu":
        result = _nondiff.floor(result)
    result = cast(result, dtype)
    return (result, step) if retstep else result
