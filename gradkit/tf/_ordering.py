"""Order along an axis: ``cumsum``/``cumprod`` (exclusive, reverse), ``sort``, ``argsort``,
``top_k``, ``reverse``.

>>> import gradkit.tf as tf
>>> tf.math.cumsum([1.0, 2.0, 3.0], exclusive=True, reverse=True).numpy().tolist()
[5.0, 3.0, 0.0]
"""

from __future__ import annotations

import collections

import jax
import jax.numpy as jnp

from gradkit import _errors

from ._convert import axis_arg, call, convert, scalar_int
from ._kernel_dtypes import ORDERED, check_dtype, index_dtype


def _cumulative(x, axis, exclusive, reverse, prod):
    scan, identity = (jnp.cumprod, jnp.ones_like) if prod else (jnp.cumsum, jnp.zeros_like)
    if reverse:
        x = jnp.flip(x, axis)
    if exclusive and x.shape[axis] > 0:
        # Shifted by one, starting from the identity: exact, where cumsum(x) - x would round.
        n = x.shape[axis]
        head = identity(jax.lax.slice_in_dim(x, 0, 1, axis=axis))
        x = jnp.concatenate([head, jax.lax.slice_in_dim(x, 0, n - 1, axis=axis)], axis=axis)
    out = scan(x, axis=axis)
    return jnp.flip(out, axis) if reverse else out


def cumsum(x, axis=0, exclusive=False, reverse=False, name=None):
    return call(
        _cumulative,
        _numeric(x, "tf.math.cumsum"),
        axis=scalar_int(axis, "tf.math.cumsum's axis"),
        exclusive=bool(exclusive),
        reverse=bool(reverse),
        prod=False,
    )


def _numeric(x, what: str):
    from ._math import bool_refused

    x = convert(x)
    if x.dtype == jnp.bool_:
        raise bool_refused(what)
    return x


def cumprod(x, axis=0, exclusive=False, reverse=False, name=None):
    """``tf.math.cumprod``; its gradient is the exact derivative, also where ``x`` has zeros.

    There it differs from TensorFlow 2.21's by design: TensorFlow's gradient is a cumulative sum
    of ``cumprod(x) * upstream`` (in the opposite direction) divided by ``x`` with ``div_no_nan``,
    so it is 0 wherever ``x`` is 0, which is not the derivative (for ``x = [2, 0, 3, 5]`` and the
    loss ``sum(cumprod(x) * [1, 10, 100, 1000])``: TensorFlow ``[1, 0, 0, 0]``, gradkit
    ``[1, 30620, 0, 0]``).
    """
    return call(
        _cumulative,
        _numeric(x, "tf.math.cumprod"),
        axis=scalar_int(axis, "tf.math.cumprod's axis"),
        exclusive=bool(exclusive),
        reverse=bool(reverse),
        prod=True,
    )


def _check_direction(direction, fn):
    if direction not in ("ASCENDING", "DESCENDING"):
        raise _errors.GradkitValueError(f"tf.{fn} got direction={direction!r}; it takes 'ASCENDING' or 'DESCENDING'.")


def _sort_key(x):
    """What entries are ordered by: TensorFlow compares -0.0 and 0.0 as equal (a tie, kept in
    order), where jax's total order puts -0.0 first."""
    if not jnp.issubdtype(x.dtype, jnp.floating):
        return x
    return jnp.where(x == 0, jnp.zeros((), x.dtype), x)  # not x + 0.0, which XLA may fold to x


def _sort(x, axis, descending):
    # TensorFlow's sort is stable both ways: equal entries keep their order, so the gradient of
    # each goes back to the same entry. jnp.sort(descending=True) reverses them.
    order = jnp.argsort(_sort_key(x), axis=axis, stable=True, descending=descending)
    return jnp.take_along_axis(x, order, axis=axis)


def sort(values, axis=-1, direction="ASCENDING", name=None):
    _check_direction(direction, "sort")
    x = convert(values)
    check_dtype(x, ORDERED, "tf.sort")
    return call(_sort, x, axis=int(axis), descending=direction == "DESCENDING")


def _argsort(x, axis, descending):
    return jnp.argsort(_sort_key(x), axis=axis, stable=True, descending=descending).astype(jnp.int32)


def argsort(values, axis=-1, direction="ASCENDING", stable=False, name=None):
    _check_direction(direction, "argsort")
    x = convert(values)
    check_dtype(x, ORDERED, "tf.argsort")
    return call(_argsort, x, axis=int(axis), descending=direction == "DESCENDING")


TopKV2 = collections.namedtuple("TopKV2", ["values", "indices"])


def _top_k(x, k, dtype):
    _, indices = jax.lax.top_k(_sort_key(x), k)  # ties, -0.0 with 0.0 too, go to the lower index
    return jnp.take_along_axis(x, indices, axis=-1), indices.astype(dtype)


def top_k(input, k=1, sorted=True, index_type=jnp.int32, name=None):  # noqa: A002
    """The ``k`` largest entries along the last axis and their indices (``.values``, ``.indices``,
    of ``index_type``: int16, int32 or int64)."""
    dtype = index_dtype(index_type, ("int16", "int32", "int64"), "tf.math.top_k", "index_type")
    values, indices = call(_top_k, convert(input), k=int(k), dtype=dtype)
    return TopKV2(values, indices)


def _reverse(x, axis):
    return jnp.flip(x, axis)


def reverse(tensor, axis, name=None):
    """``tensor`` with the order of the given axes (a list) reversed."""
    axes = axis_arg(axis)
    return call(_reverse, convert(tensor), axis=axes if isinstance(axes, tuple) else (axes,))
