"""Keras 3's ``affine_transform`` on TensorFlow, the sampling of ``ImageProjectiveTransformV3``,
as one recorded op; the random rotation, zoom and translation layers transform images with it.

A transform is 8 numbers ``[a0, a1, a2, b0, b1, b2, c0, c1]``. The output pixel at column ``x``
and row ``y`` (pixel centres at whole numbers, the top-left one at ``(0, 0)``) reads the input
at ``((a0 x + a1 y + a2) / k, (b0 x + b1 y + b2) / k)``, ``k = c0 x + c1 y + 1`` (a pixel
where ``k`` is 0 takes ``fill_value``). A point off the image is brought back by ``fill_mode``:
``"reflect"`` (``dcba|abcd|dcba``), ``"wrap"`` (``abcd|abcd|abcd``), ``"nearest"``
(``aaaa|abcd|dddd``) or ``"constant"`` (``fill_value`` all around). It is then sampled
``"nearest"`` (rounded half away from zero) or ``"bilinear"`` (a neighbour off the image reads
``fill_value``). The arithmetic is TensorFlow's kernel's, in float32 and in its order, so values
agree with TensorFlow to float32 rounding.

The gradient with respect to the images is the exact adjoint of the sampling: each output
pixel's weights carry its upstream gradient back to the pixels it read (Keras on its JAX
backend gives the same). TensorFlow registers an approximation instead, the inverse transform
applied to the upstream gradient, which agrees where the transform moves whole pixels one to
one (flips, whole-pixel shifts with ``fill_mode="constant"``). The transforms get no gradient,
as in TensorFlow.

>>> import gradkit.tf as tf
>>> from gradkit.tf._keras.affine_transform import affine_transform
>>> image = tf.reshape(tf.range(6.0), [2, 3, 1])
>>> shift_left = [1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0]  # output x reads input x + 1
>>> affine_transform(image, shift_left, fill_mode="constant")[:, :, 0].numpy().tolist()
[[1.0, 2.0, 0.0], [4.0, 5.0, 0.0]]
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from .. import _array
from .._convert import call, convert

FILL_MODES = ("reflect", "wrap", "constant", "nearest")
INTERPOLATIONS = ("nearest", "bilinear")


def _reflect(c, size):
    # TensorFlow's MapCoordinate<FILL_REFLECT>, branch for branch (its integer casts truncate).
    if size <= 1:
        return jnp.zeros_like(c)
    twice = float(2 * size)
    low = twice * jnp.trunc(-c / twice) + c
    low = jnp.where(low < -size, low + twice, -low - 1)
    high = c - twice * jnp.trunc(c / twice)
    high = jnp.where(high >= size, twice - high - 1, high)
    mapped = jnp.where(c < 0, low, jnp.where(c > size - 1, high, c))
    return jnp.clip(mapped, 0.0, size - 1.0)


def _wrap(c, size):
    # TensorFlow's MapCoordinate<FILL_WRAP>, its arithmetic kept (it is not a plain modulo).
    if size <= 1:
        return jnp.zeros_like(c)
    span = float(size - 1)
    low = c + size * (jnp.trunc(-c / span) + 1)
    high = c - size * jnp.trunc(c / span)
    mapped = jnp.where(c < 0, low, jnp.where(c > size - 1, high, c))
    return jnp.clip(mapped, 0.0, size - 1.0)


def _map(c, size, fill_mode):
    if fill_mode == "reflect":
        return _reflect(c, size)
    if fill_mode == "wrap":
        return _wrap(c, size)
    if fill_mode == "nearest":
        return jnp.clip(c, 0.0, size - 1.0)
    return c


def _round_half_away(v):
    # std::round: halves go away from zero (jnp.round rounds them to even).
    whole = jnp.trunc(v)
    return jnp.where(jnp.abs(v - whole) >= 0.5, whole + jnp.sign(v), whole)


def _read(images, rows, cols, fill):
    """``images[b, rows, cols]`` where that pixel is on the image, ``fill`` elsewhere (rows and
    cols whole numbers as floats, shape (batch, height, width))."""
    _, height, width, _ = images.shape
    inside = (rows >= 0) & (rows < height) & (cols >= 0) & (cols < width)
    r = jnp.clip(rows, 0, height - 1).astype(jnp.int32)
    c = jnp.clip(cols, 0, width - 1).astype(jnp.int32)
    batch = jnp.broadcast_to(jnp.arange(images.shape[0], dtype=jnp.int32)[:, None, None], r.shape)
    return jnp.where(inside[..., None], images[batch, r, c], fill)


def _projective(images, transforms, *, interpolation, fill_mode, fill_value):
    n, height, width, _ = images.shape
    t = jax.lax.stop_gradient(transforms.astype(jnp.float32))
    t = jnp.broadcast_to(t, (n, 8))[:, :, None, None]
    ys = jnp.arange(height, dtype=jnp.float32)[None, :, None]
    xs = jnp.arange(width, dtype=jnp.float32)[None, None, :]
    projection = t[:, 6] * xs + t[:, 7] * ys + 1.0
    in_x = (t[:, 0] * xs + t[:, 1] * ys + t[:, 2]) / projection
    in_y = (t[:, 3] * xs + t[:, 4] * ys + t[:, 5]) / projection
    x = _map(in_x, width, fill_mode)
    y = _map(in_y, height, fill_mode)
    fill = jnp.asarray(fill_value, images.dtype)
    if interpolation == "nearest":
        out = _read(images, _round_half_away(y), _round_half_away(x), fill)
    else:
        values = images.astype(jnp.float32)
        fill32 = fill.astype(jnp.float32)
        y0, x0 = jnp.floor(y), jnp.floor(x)
        y1, x1 = y0 + 1, x0 + 1
        wx0, wx1 = (x1 - x)[..., None], (x - x0)[..., None]
        top = wx0 * _read(values, y0, x0, fill32) + wx1 * _read(values, y0, x1, fill32)
        bottom = wx0 * _read(values, y1, x0, fill32) + wx1 * _read(values, y1, x1, fill32)
        out = ((y1 - y)[..., None] * top + (y - y0)[..., None] * bottom).astype(images.dtype)
    return jnp.where((projection == 0)[..., None], fill, out)


def affine_transform(
    images, transform, interpolation="bilinear", fill_mode="constant", fill_value=0.0, data_format="channels_last"
):
    """Keras' ``ops.image.affine_transform(images, transform, interpolation, fill_mode,
    fill_value, data_format)``: ``images`` (one, rank 3, or a batch, rank 4, of floats) sampled
    through ``transform`` (8 numbers, or one row of 8 per image, or a single row for all)."""
    what = "affine_transform"
    if interpolation not in INTERPOLATIONS:
        raise _errors.GradkitValueError(
            f"{what} got interpolation={interpolation!r}: Keras' affine transform takes one of {INTERPOLATIONS}."
        )
    if fill_mode not in FILL_MODES:
        raise _errors.GradkitValueError(
            f"{what} got fill_mode={fill_mode!r}: Keras' affine transform on TensorFlow takes one of {FILL_MODES}."
        )
    images, transform = convert(images), convert(transform)
    if images.ndim not in (3, 4):
        raise _errors.GradkitValueError(
            f"{what} got images of shape {list(images.shape)}: it takes rank 3 (one image) or rank 4 (a batch), "
            "as Keras does."
        )
    if not jnp.issubdtype(images.dtype, jnp.floating):  # bfloat16 too (not a NumPy floating type)
        raise _errors.GradkitTypeError(
            f"{what} got {np.dtype(images.dtype).name} images; it samples between pixels, so it takes floats. "
            "Cast them first: tf.cast(images, tf.float32)."
        )
    batch = 1 if images.ndim == 3 else images.shape[0]
    rows = transform.shape[0] if transform.ndim == 2 else None
    if transform.ndim not in (1, 2) or transform.shape[-1] != 8 or rows not in (None, 1, batch):
        raise _errors.GradkitValueError(
            f"{what} got a transform of shape {list(transform.shape)} for {batch} image(s): it takes 8 numbers "
            f"[a0, a1, a2, b0, b1, b2, c0, c1], or a row of them per image ({batch}, 8), or one row for all (1, 8)."
        )
    single = images.ndim == 3
    if single:
        images = _array.expand_dims(images, 0)
    if transform.ndim == 1:
        transform = _array.reshape(transform, (1, 8))
    first = data_format == "channels_first"
    if first:
        images = _array.transpose(images, (0, 2, 3, 1))
    out = call(
        _projective,
        images,
        transform,
        interpolation=interpolation,
        fill_mode=fill_mode,
        fill_value=float(fill_value),
    )
    if first:
        out = _array.transpose(out, (0, 3, 1, 2))
    return _array.squeeze(out, 0) if single else out
