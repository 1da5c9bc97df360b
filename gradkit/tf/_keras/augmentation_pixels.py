"""What Keras 3's colour and pixel-value augmentation layers share: their ``value_range``
argument, Keras' rescaling between value ranges, per-image parameters broadcast over a batch,
the channel layout and Keras' grayscale (TensorFlow's luma weights).

The functions whose names end in ``_jax`` take and give JAX arrays; the layers run them as one
recorded op (``_convert.call``), so the images get JAX's gradients of the same arithmetic.
"""

from __future__ import annotations

import numbers

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors

_GRAY_WEIGHTS = (0.2989, 0.5870, 0.1140)  # TensorFlow's (and Keras') luma weights


def checked_value_range(value_range, what: str) -> list:
    """Keras' ``_set_value_range``: two numbers, sorted (a list); ValueError otherwise."""
    if (
        not isinstance(value_range, (tuple, list))
        or len(value_range) != 2
        or not all(isinstance(v, numbers.Real) for v in value_range)
    ):
        raise _errors.GradkitValueError(
            f"{what}: the `value_range` argument should be a list of two numbers (the images' lowest and highest "
            f"values, e.g. (0, 255) or (0, 1)), as Keras requires. Received: value_range={value_range!r}"
        )
    return sorted(value_range)


def rescale_jax(images, source, target, dtype="float32"):
    """Keras' ``_transform_value_range``: ``images`` mapped linearly from the ``source`` range to
    the ``target`` range (unchanged, not even cast, where the two are the same)."""
    if source[0] == target[0] and source[1] == target[1]:
        return images
    images = images.astype(dtype)
    low, high = jnp.asarray(source[0], dtype), jnp.asarray(source[1], dtype)
    target_low, target_high = jnp.asarray(target[0], dtype), jnp.asarray(target[1], dtype)
    return (images - low) / (high - low) * (target_high - target_low) + target_low


def per_image_jax(values, ndim: int):
    """Per-image parameters (any shape holding one number per image) shaped to broadcast over
    images of rank ``ndim``: ``(batch, 1, 1, 1)``, or ``(1, 1, 1)`` for one image."""
    values = jnp.reshape(values, (-1,))
    if ndim == 3:
        return jnp.reshape(values, (1, 1, 1))
    return jnp.reshape(values, (values.shape[0], 1, 1, 1))


def spatial_axes(ndim: int, data_format: str) -> tuple:
    """The height and width axes of images of rank ``ndim``."""
    return (ndim - 2, ndim - 1) if data_format == "channels_first" else (ndim - 3, ndim - 2)


def channel_axis(ndim: int, data_format: str) -> int:
    return ndim - 3 if data_format == "channels_first" else ndim - 1


def grayscale_jax(images, *, data_format: str):
    """Keras' ``ops.image.rgb_to_grayscale`` on TensorFlow: one channel of luma, computed in
    floats and cast back to the images' dtype (integers truncated); a one-channel image as it is."""
    axis = channel_axis(images.ndim, data_format)
    if images.shape[axis] == 1:
        return images
    floats = images if jnp.issubdtype(images.dtype, jnp.floating) else images.astype(jnp.float32)
    weights = jnp.asarray(_GRAY_WEIGHTS, floats.dtype)
    gray = jnp.tensordot(floats, weights, axes=[[axis], [0]], precision=jax.lax.Precision.HIGHEST)
    return jnp.expand_dims(gray, axis).astype(images.dtype)


def inside_rectangles(x0, x1, y0, y1, height: int, width: int, dtype):
    """A bool ``(batch, height, width)`` array: the pixels (row, column) with ``x0 <= column < x1``
    and ``y0 <= row < y1``, one rectangle per image (``x0`` ... ``y1`` of shape ``(batch,)``)."""
    rows = jnp.arange(height, dtype=dtype)[None, :, None]
    cols = jnp.arange(width, dtype=dtype)[None, None, :]
    return (
        (cols >= x0[:, None, None])
        & (cols < x1[:, None, None])
        & (rows >= y0[:, None, None])
        & (rows < y1[:, None, None])
    )


def check_channels(images, data_format: str, allowed: tuple, what: str) -> None:
    """A colour layer's images must hold ``allowed`` channels (Keras raises ValueError)."""
    channels = images.shape[channel_axis(images.ndim, data_format)]
    if channels not in allowed:
        wanted = " or ".join(str(c) for c in allowed)
        raise _errors.GradkitValueError(
            f"{what} got images of shape {list(images.shape)} ({data_format}): it takes images with {wanted} "
            f"channel{'s' if allowed != (1,) else ''} (RGB), as Keras does. Convert them first."
        )


def is_float(dtype) -> bool:
    return np.issubdtype(np.dtype(dtype), np.floating) or np.dtype(dtype) == jnp.bfloat16
