"""``tf.image.convert_image_dtype``: TensorFlow's conventions for image values.

A float image holds values in [0, 1], an integer image values in [0, MAX] of its dtype.
Converting scales by those ranges: integer to float multiplies by ``1 / MAX``; float to
integer multiplies by ``MAX + 0.5`` and truncates, wrapping out-of-range values into an 8- or
16-bit type as TensorFlow's cast does unless ``saturate=True`` clips them first (into a 32-bit
type they saturate: what TensorFlow's cast gives there is the platform's overflow, such as
INT_MIN for 1.0 as int32); integer to integer
shifts by a power of two; float to float only casts (and is differentiable).

>>> import gradkit.tf as tf
>>> tf.image.convert_image_dtype(tf.constant([0, 255], tf.uint8), tf.float32).numpy().tolist()
[0.0, 1.0]
>>> tf.image.convert_image_dtype(tf.constant([-0.5, 0.5, 1.5]), tf.uint8, saturate=True).numpy().tolist()
[0, 127, 255]
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from ._convert import call, convert

__all__ = ["convert_image_dtype"]


def _is_float(dtype) -> bool:
    return np.dtype(dtype).kind == "f" or np.dtype(dtype) == jnp.bfloat16


def _limits(dtype):
    return jnp.finfo(dtype) if _is_float(dtype) else jnp.iinfo(dtype)


def _saturate_cast(x, dtype):
    """``tf.dtypes.saturate_cast``: ``x`` clipped to ``dtype``'s range, then cast."""
    source, target = _limits(x.dtype), _limits(dtype)
    low, high = max(float(source.min), float(target.min)), min(float(source.max), float(target.max))
    if _is_float(x.dtype):
        # The float nearest the integer limit may lie past it (float32(2**31 - 1) is 2**31).
        low_f, high_f = np.asarray(low, x.dtype), np.asarray(high, x.dtype)
        if float(high_f) > high:
            high_f = np.nextafter(high_f, np.asarray(0, x.dtype))
        if float(low_f) < low:
            low_f = np.nextafter(low_f, np.asarray(0, x.dtype))
        return jnp.clip(x, low_f, high_f).astype(dtype)
    return jnp.clip(x, int(low), int(high)).astype(dtype)


def _wrapping_cast(x, dtype):
    """A float cast to a narrow integer as TensorFlow's kernel casts it: truncated toward zero,
    then wrapped into the type (``-127.75`` is ``129`` as uint8); into a 32-bit or wider type,
    jax's saturating cast (TensorFlow's result there is the platform's float overflow)."""
    if _is_float(x.dtype) and np.dtype(dtype).itemsize < 4:
        return x.astype(jnp.int32).astype(dtype)
    return x.astype(dtype)


def converted(image, dtype, saturate: bool = False):
    """The pure conversion (``image`` a JAX array), for the image ops built on it."""
    dtype = np.dtype(dtype)
    if np.dtype(image.dtype) == dtype:
        return image
    cast = _saturate_cast if saturate else _wrapping_cast
    if not _is_float(image.dtype) and not _is_float(dtype):
        scale_in, scale_out = int(_limits(image.dtype).max), int(_limits(dtype).max)
        if scale_in > scale_out:
            return cast(image // ((scale_in + 1) // (scale_out + 1)), dtype)
        return cast(image, dtype) * np.asarray((scale_out + 1) // (scale_in + 1), dtype)
    if _is_float(image.dtype) and _is_float(dtype):
        return image.astype(dtype)
    if not _is_float(image.dtype):
        return image.astype(dtype) * jnp.asarray(1.0 / int(_limits(image.dtype).max), dtype)
    return cast(image * jnp.asarray(float(_limits(dtype).max) + 0.5, image.dtype), dtype)


def _convert_op(image, *, dtype, saturate):
    return converted(image, dtype, saturate)


def _check_kind(dtype, what: str) -> np.dtype:
    dtype = np.dtype(dtype)
    if dtype.kind not in "iuf" and dtype != jnp.bfloat16:
        raise _errors.DtypeKindError(
            f"tf.image.convert_image_dtype got {what} {dtype.name}: it must be either floating point or "
            "integer, as in TensorFlow (which raises AttributeError). Cast booleans first "
            "(tf.cast(image, tf.uint8))."
        )
    return dtype


def convert_image_dtype(image, dtype, saturate=False, name=None):
    """``tf.image.convert_image_dtype``: ``image`` rescaled from its dtype's range to ``dtype``'s."""
    image = convert(image)
    target = _check_kind(dtype, "dtype")
    _check_kind(image.dtype, "an image of dtype")
    return call(_convert_op, image, dtype=target, saturate=bool(saturate))
