"""``tf.math.cumulative_logsumexp``: ``log(cumsum(exp(x)))`` along an axis, computed stably,
with ``exclusive`` and ``reverse`` as ``tf.math.cumsum`` takes them.

Its gradient is TensorFlow's formula: the upstream gradient split into its positive and
negative parts, each summed in log space by a cumulative logsumexp in the opposite direction.
It is the derivative wherever that is finite, and it gives TensorFlow's values where ``x`` holds
``inf`` or NaN (jax's own rule differs there).

>>> import gradkit.tf as tf
>>> [round(v, 4) for v in tf.math.cumulative_logsumexp([0.0, 0.0, 0.0]).numpy().tolist()]
[0.0, 0.6931, 1.0986]
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

from gradkit import _errors

from ._convert import call, convert, scalar_int
from ._kernel_dtypes import check_dtype


def _scan(x, axis, exclusive, reverse):
    n = x.shape[axis]
    if exclusive and n:
        # Shifted by one, starting from log(0) = -inf.
        head = jnp.full_like(jax.lax.slice_in_dim(x, 0, 1, axis=axis), -jnp.inf)
        if reverse:
            x = jnp.concatenate([jax.lax.slice_in_dim(x, 1, n, axis=axis), head], axis=axis)
        else:
            x = jnp.concatenate([head, jax.lax.slice_in_dim(x, 0, n - 1, axis=axis)], axis=axis)
    return jax.lax.cumlogsumexp(x, axis=axis, reverse=reverse)


@functools.partial(jax.custom_vjp, nondiff_argnums=(1, 2, 3))
def _cumulative_logsumexp(x, axis, exclusive, reverse):
    return _scan(x, axis, exclusive, reverse)


def _fwd(x, axis, exclusive, reverse):
    out = _scan(x, axis, exclusive, reverse)
    return out, (x, out)


def _bwd(axis, exclusive, reverse, residuals, upstream):
    x, out = residuals
    lowest = jnp.finfo(upstream.dtype).min

    def log_of(part):
        positive = part > 0
        return jnp.where(positive, jnp.log(jnp.where(positive, part, jnp.ones_like(part))), lowest)

    # The op itself, not _scan: a gradient of this gradient follows TensorFlow's rule too.
    def summed(log_part):
        return jnp.exp(_cumulative_logsumexp(log_part - out, axis, exclusive, not reverse) + x)

    return (summed(log_of(upstream)) - summed(log_of(-upstream)),)


_cumulative_logsumexp.defvjp(_fwd, _bwd)


def cumulative_logsumexp(x, axis=0, exclusive=False, reverse=False, name=None):
    """``tf.math.cumulative_logsumexp(x, axis=0, exclusive=False, reverse=False)``.

    ``exclusive=True`` leaves each entry out of its own sum (the first is ``-inf``); ``reverse``
    sums from the end. Float dtypes only, as in TensorFlow.
    """
    x = convert(x)
    check_dtype(x, ("float16", "bfloat16", "float32", "float64"), "tf.math.cumulative_logsumexp")
    axis = scalar_int(axis, "tf.math.cumulative_logsumexp's axis")
    if not -x.ndim <= axis < x.ndim:
        raise _errors.GradkitValueError(
            f"tf.math.cumulative_logsumexp got axis={axis} for a tensor of rank {x.ndim}; TensorFlow takes an "
            f"axis in [-{x.ndim}, {x.ndim})."
        )
    return call(_cumulative_logsumexp_op, x, axis=axis % x.ndim, exclusive=bool(exclusive), reverse=bool(reverse))


def _cumulative_logsumexp_op(x, axis, exclusive, reverse):
    return _cumulative_logsumexp(x, axis, exclusive, reverse)
