"""``tf.reduce_mean`` of an integer tensor, as TensorFlow's kernel computes it: the sum in a 64-bit
integer, divided by the count with C's division (toward zero), cast back to the input's dtype.
The mean of a uint8 image of 200s is 200, not the wrapped 8-bit sum divided.

JAX holds 64-bit integers only with ``jax_enable_x64``; without it the 64-bit sum is carried in
two 32-bit words (a ``lax.reduce`` over (high, low) pairs with carries) and divided by the count
bit by bit, so the result is exact whatever the count.

>>> import jax.numpy as jnp
>>> int(integer_mean(jnp.full((4, 4), 200, jnp.uint8), None, False))
200
>>> integer_mean(jnp.array([-3, -4], jnp.int32), None, False).tolist()  # -3.5 toward zero
-3
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

_U32 = jnp.uint32


def _axes(x, axis) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(x.ndim))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    return tuple(sorted(a % x.ndim for a in axes))


def _add64(a, b):
    (high_a, low_a), (high_b, low_b) = a, b
    low = low_a + low_b  # wraps modulo 2**32
    carry = (low < low_a).astype(_U32)
    return high_a + high_b + carry, low


def _sum64(x, axes):
    """The sum over ``axes`` as (high, low) uint32 words of a two's-complement 64-bit integer."""
    signed = jnp.issubdtype(x.dtype, jnp.signedinteger)
    wide = x.astype(jnp.int32 if signed else _U32)
    low = jax.lax.bitcast_convert_type(wide, _U32) if signed else wide
    high = jnp.where(wide < 0, _U32(0xFFFFFFFF), _U32(0)) if signed else jnp.zeros_like(low)
    zero = np.uint32(0)
    return jax.lax.reduce((high, low), (zero, zero), _add64, axes)


def _divide64(high, low, count: int):
    """``(high, low) // count`` for a non-negative 64-bit value whose quotient fits 32 bits:
    long division, one bit at a time (the remainder stays below ``count`` <= 2**31)."""
    divisor = _U32(count)

    def step(k, carry):
        remainder, quotient = carry
        bit_at = 63 - k
        from_high = (high >> jnp.clip(bit_at - 32, 0, 31).astype(_U32)) & 1
        from_low = (low >> jnp.clip(bit_at, 0, 31).astype(_U32)) & 1
        remainder = (remainder << 1) | jnp.where(bit_at >= 32, from_high, from_low)
        fits = remainder >= divisor
        remainder = jnp.where(fits, remainder - divisor, remainder)
        return remainder, (quotient << 1) | fits.astype(_U32)

    zeros = jnp.zeros_like(low)
    return jax.lax.fori_loop(0, 64, step, (zeros, zeros))[1]


def integer_mean(x, axis, keepdims: bool):
    """TensorFlow's integer mean of ``x`` over ``axis`` (None: all axes)."""
    axes = _axes(x, axis)
    count = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
    if count == 0 or count > 2**31:
        total = jnp.sum(x, axis=axes, keepdims=keepdims, dtype=x.dtype)
        return jax.lax.div(total, jnp.asarray(max(count, 1), x.dtype))
    if jax.config.jax_enable_x64:
        wide = jnp.int64 if jnp.issubdtype(x.dtype, jnp.signedinteger) else jnp.uint64
        total = jnp.sum(x.astype(wide), axis=axes, keepdims=keepdims)
        return jax.lax.div(total, jnp.asarray(count, wide)).astype(x.dtype)
    high, low = _sum64(x, axes)
    negative = (high >> 31) == 1 if jnp.issubdtype(x.dtype, jnp.signedinteger) else jnp.zeros(high.shape, bool)
    # |sum|: the two's complement negation of a negative sum.
    low_abs = jnp.where(negative, ~low + 1, low)
    high_abs = jnp.where(negative, ~high + (low_abs == 0).astype(_U32), high)
    quotient = _divide64(high_abs, low_abs, count)
    if jnp.issubdtype(x.dtype, jnp.signedinteger):
        signed = jax.lax.bitcast_convert_type(quotient, jnp.int32)
        mean = jnp.where(negative, -signed, signed)
    else:
        mean = quotient
    mean = mean.astype(x.dtype)
    if keepdims:
        mean = jnp.expand_dims(mean, axes)
    return mean
