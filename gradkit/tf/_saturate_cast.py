"""``tf.saturate_cast`` (also ``tf.dtypes.saturate_cast``): a cast that clamps to the target
dtype's range first, so nothing overflows.

The bounds are TensorFlow's: the target's range as the input dtype can hold it, nudged inward
where the input dtype rounds it outward (float32 holds no 2**31 - 1, so a float32 saturates to
int32 at 2147483520). The clamp is recorded with the cast as one op; its gradient is TensorFlow's
``clip_by_value`` one: 1 inside the bounds (bounds included), 0 outside.

>>> import gradkit.tf as tf
>>> tf.saturate_cast([-5.0, 3.7, 300.0], tf.uint8).numpy().tolist()
[0, 3, 255]
"""

from __future__ import annotations

import builtins

import jax
import jax.numpy as jnp
import numpy as np

from ._convert import call, convert
from ._dtypes import as_dtype


def _clamp(x, low, high):
    # Written with where (not jnp.clip) so a value on a bound keeps gradient 1, as TensorFlow's.
    return jnp.where(x < low, low, jnp.where(x > high, high, x))


def _clamp_and_cast(x, low, high, dtype, real_part):
    if real_part:
        x = jnp.real(x)
    if low is not None:
        if jnp.iscomplexobj(x):
            x = jax.lax.complex(_clamp(jnp.real(x), low, high), _clamp(jnp.imag(x), low, high))
        else:
            x = _clamp(x, jnp.asarray(low, x.dtype), jnp.asarray(high, x.dtype))
    return x.astype(dtype)


def _bounds(in_dtype, out_dtype):
    """TensorFlow's clamp bounds (math_ops.saturate_cast) for a real ``in_dtype``, as NumPy scalars."""
    np_dtype = in_dtype.as_numpy_dtype
    out_real = out_dtype.real_dtype
    try:
        promoted_type = np.promote_types(np_dtype, out_real.as_numpy_dtype)
    except TypeError:  # bfloat16 promotes with no NumPy type: compare as Python floats, as TensorFlow
        promoted_type = builtins.float
    low = np_dtype(np.maximum(in_dtype.min, out_real.min))
    if np.array([low, out_real.min], dtype=promoted_type)[0] < np.array(out_real.min, dtype=promoted_type):
        low = np.nextafter(low, np_dtype(0), dtype=np_dtype)
    high = np_dtype(np.minimum(builtins.float(in_dtype.max), builtins.float(out_real.max)))
    if np.array([high, out_real.max], dtype=promoted_type)[0] > np.array(out_real.max, dtype=promoted_type):
        high = np.nextafter(high, np_dtype(0), dtype=np_dtype)
    return low, high


def saturate_cast(value, dtype, name=None):
    """``tf.saturate_cast(value, dtype)``: ``value`` clamped to ``dtype``'s range, then cast to it.

    A complex value cast to a real dtype loses its imaginary part, as in TensorFlow; cast to a
    complex dtype, its real and imaginary parts are clamped each.
    """
    x = convert(value)
    out_dtype = as_dtype(dtype)
    in_dtype = as_dtype(x.dtype)
    real_part = in_dtype.is_complex and not out_dtype.is_complex
    if in_dtype.is_complex and out_dtype.is_complex:
        in_real, out_real = in_dtype.real_dtype, out_dtype.real_dtype
        clamps = in_real.min < out_real.min or in_real.max > out_real.max
        low, high = (out_real.min, out_real.max) if clamps else (None, None)
    else:
        with np.errstate(over="ignore"):  # int32's max as float16 is inf: the bound comparisons expect it
            low, high = _bounds(in_dtype.real_dtype, out_dtype)
    return call(_clamp_and_cast, x, low=low, high=high, dtype=np.dtype(out_dtype), real_part=real_part)
