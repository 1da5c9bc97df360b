"""``keras.ops.image`` (``tf.keras.ops.image``): Keras 3's image ops on gradkit's tape, with their
names, arguments, defaults, ``data_format`` and dtypes as on Keras' TensorFlow backend.

This module holds the color conversions, ``resize``, ``crop_images``/``pad_images`` and the
patch extractors; ``image_filter_ops`` ``gaussian_blur``, ``sobel_edges`` and ``ssim``;
``image_geometry_ops`` the resampling ops (``affine_transform``, ``perspective_transform``, ``map_coordinates``,
``elastic_transform``, ``scale_and_translate``). ``data_format=None`` is ``'channels_last'``
(gradkit's ``image_data_format()``). Each op is differentiable with respect to float images.

>>> import gradkit.tf as tf
>>> ops = tf.keras.ops
>>> ops.image.resize(tf.ones((2, 4, 4, 3)), (2, 2)).shape
(2, 2, 2, 3)
>>> ops.image.pad_images(tf.ones((2, 2, 1)), 1, 1, target_height=4, target_width=4)[:, :, 0].numpy().tolist()
[[0.0, 0.0, 0.0, 0.0], [0.0, 1.0, 1.0, 0.0], [0.0, 1.0, 1.0, 0.0], [0.0, 0.0, 0.0, 0.0]]
"""

from __future__ import annotations

import types

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from ... import _array, _image_color, _image_resize, _math
from ..._convert import call
from ..._saturate_cast import saturate_cast
from ..image_preprocessing_layers import _INTERPOLATIONS as _RESIZE_INTERPOLATIONS
from ..image_preprocessing_layers import Resizing
from ..spatial_args import standardize_data_format
from .dispatch import cast, keras_op, tensor
from .dtype_rules import float_of, is_float
from .image_filter_ops import NAMES as _FILTER_NAMES
from .image_filter_ops import gaussian_blur, sobel_edges, ssim
from .image_geometry_ops import NAMES as _GEOMETRY_NAMES
from .image_geometry_ops import (
    _images,
    _where,
    affine_transform,
    elastic_transform,
    map_coordinates,
    perspective_transform,
    scale_and_translate,
)
from .nn_ops import conv

NAMES = " ".join(
    ["rgb_to_grayscale rgb_to_hsv hsv_to_rgb resize crop_images pad_images extract_patches extract_patches_3d"]
    + [_FILTER_NAMES, _GEOMETRY_NAMES]
)
# The names this module takes from the others, re-exported with its own.
_REEXPORTED = (gaussian_blur, sobel_edges, ssim, affine_transform, elastic_transform, map_coordinates)
_REEXPORTED += (perspective_transform, scale_and_translate)


def _format(name, data_format):
    return standardize_data_format(data_format, _where(name))


def _to_last(images, fmt):
    """``images`` channels_last, and a function that puts a result of the same rank back."""
    if fmt == "channels_last":
        return images, lambda y: y
    if images.ndim == 4:
        return _array.transpose(images, (0, 2, 3, 1)), lambda y: _array.transpose(y, (0, 3, 1, 2))
    return _array.transpose(images, (1, 2, 0)), lambda y: _array.transpose(y, (2, 0, 1))


# -- colors ------------------------------------------------------------------------------------


def _grayscale(images, *, axis):
    weights = jnp.asarray(_image_color._GRAY_WEIGHTS, float_of(images.dtype))
    gray = jnp.tensordot(images.astype(weights.dtype), weights, axes=(axis, 0), precision=jax.lax.Precision.HIGHEST)
    return jnp.expand_dims(gray, axis).astype(images.dtype)


@keras_op
def rgb_to_grayscale(images, data_format=None):
    """``keras.ops.image.rgb_to_grayscale(images, data_format=None)``: luma ``0.2989 R + 0.5870 G
    + 0.1140 B`` in one channel, in the images' dtype (integers truncated, as Keras casts; a
    one-channel image comes back as it is)."""
    axis = -1 if _format("rgb_to_grayscale", data_format) == "channels_last" else -3
    images = _images("rgb_to_grayscale", images)
    if images.shape[axis] not in (1, 3):
        raise _errors.GradkitValueError(
            f"{_where('rgb_to_grayscale')} got images of shape {list(images.shape)}: the channel axis must hold 3 "
            "(RGB) or 1 (grayscale), as Keras requires. Check data_format."
        )
    if images.shape[axis] == 1:
        return images
    return call(_grayscale, images, axis=images.ndim + axis)


def _hsv(name, convert):
    def op(images, data_format=None):
        fmt = _format(name, data_format)
        images = _images(name, images)
        if not is_float(images.dtype):
            raise _errors.GradkitValueError(
                f"{_where(name)} got {np.dtype(images.dtype).name} images: it takes floats in [0, 1], as Keras does "
                "(ValueError otherwise). Scale and cast them first: tf.cast(images, tf.float32) / 255."
            )
        axis = -1 if fmt == "channels_last" else -3
        if images.shape[axis] != 3:
            raise _errors.GradkitValueError(
                f"{_where(name)} got images of shape {list(images.shape)} ({fmt}): the channel axis must hold 3. "
                "Check data_format."
            )
        images, back = _to_last(images, fmt)
        return back(convert(images))

    op.__name__ = op.__qualname__ = name
    source, target = ("RGB", "HSV") if name == "rgb_to_hsv" else ("HSV", "RGB")
    op.__doc__ = (
        f"``keras.ops.image.{name}(images, data_format=None)``: float {source} images (each channel in [0, 1]) as "
        f"{target}, as ``tf.image.{name}``."
    )
    return keras_op(op)


rgb_to_hsv = _hsv("rgb_to_hsv", _image_color.rgb_to_hsv)
hsv_to_rgb = _hsv("hsv_to_rgb", _image_color.hsv_to_rgb)


# -- resize, crop, pad -------------------------------------------------------------------------


@keras_op
def resize(
    images,
    size,
    interpolation="bilinear",
    antialias=False,
    crop_to_aspect_ratio=False,
    pad_to_aspect_ratio=False,
    fill_mode="constant",
    fill_value=0.0,
    data_format=None,
):
    """``keras.ops.image.resize(images, size, interpolation='bilinear', antialias=False,
    crop_to_aspect_ratio=False, pad_to_aspect_ratio=False, fill_mode='constant', fill_value=0.0,
    data_format=None)``: ``tf.image.resize`` to ``size = (height, width)``, after a centred crop
    to the target's aspect ratio or a padding with ``fill_value`` to it. Integer images are
    rounded and cast back with saturation, other dtypes keep theirs, as Keras does."""
    what = _where("resize")
    size = tuple(int(s) for s in size)
    if len(size) != 2 or min(size) <= 0:
        raise _errors.GradkitValueError(
            f"{what} got size={size}: it takes (height, width), two positive integers, as Keras requires."
        )
    images = _images("resize", images)
    if pad_to_aspect_ratio and crop_to_aspect_ratio:
        raise _errors.GradkitValueError(
            f"{what}: only one of pad_to_aspect_ratio and crop_to_aspect_ratio can be True, as in Keras."
        )
    if interpolation not in _RESIZE_INTERPOLATIONS:
        raise _errors.GradkitValueError(
            f"{what} got interpolation={interpolation!r}; Keras on TensorFlow takes one of {_RESIZE_INTERPOLATIONS}."
        )
    if fill_mode != "constant":
        raise _errors.GradkitValueError(
            f"{what} got fill_mode={fill_mode!r}: only 'constant' is supported, as in Keras."
        )
    original = images.dtype
    images, back = _to_last(images, _format("resize", data_format))
    target = types.SimpleNamespace(height=size[0], width=size[1], fill_value=fill_value)
    if crop_to_aspect_ratio:
        images = Resizing._crop(target, images)
    elif pad_to_aspect_ratio:
        images = Resizing._pad(target, images)
    resized = back(_image_resize.resize(images, size, method=interpolation, antialias=bool(antialias)))
    if np.dtype(resized.dtype) == np.dtype(original):
        return resized
    if not is_float(original):
        resized = _math.round(resized)
    return saturate_cast(resized, original)


def _sides(name, image_size, before, after, target, words):
    """Keras' rule for one axis: exactly two of ``before``, ``after`` and ``target`` given, each
    >= 0; the third inferred (``target`` the output size for padding, the kept size for cropping)."""
    given = dict(zip(words, (before, after, target)))
    if [before, after, target].count(None) != 1:
        raise _errors.GradkitValueError(
            f"{_where(name)} must get exactly two of {', '.join(words)}, as Keras requires. Received: "
            + ", ".join(f"{k}={v}" for k, v in given.items())
        )
    for k, v in given.items():
        if v is not None and v < 0:
            raise _errors.GradkitValueError(f"{_where(name)}: {k} must be >= 0. Received: {k}={v}")
    sign = 1 if name == "pad_images" else -1
    if before is None:
        before = sign * (target - image_size) - after
    if after is None:
        after = sign * (target - image_size) - before
    for k, v in zip(words, (before, after)):
        if v < 0:
            raise _errors.GradkitValueError(
                f"{_where(name)}: {k} must be >= 0, but the other two arguments make it {v} for an axis of size "
                f"{image_size}. Received: " + ", ".join(f"{k2}={v2}" for k2, v2 in given.items())
            )
    if target is None and name == "crop_images" and before + after > image_size:
        # Keras infers the kept size, image_size - before - after, and raises ValueError when it is < 0.
        raise _errors.GradkitValueError(
            f"{_where(name)}: {words[2]} must be >= 0, but {words[0]}={before} and {words[1]}={after} crop "
            f"{before + after} pixels from an axis of size {image_size}, which makes it {image_size - before - after}. "
            f"Crop at most {image_size} pixels in all along it."
        )
    return int(before), int(after)


def _bounds(name, images, data_format, arguments):
    """``images`` and the (before, after) count per axis that ``arguments`` (top, left, bottom,
    right, target_height, target_width) make, by Keras' rules."""
    images = _images(name, images)
    last = _format(name, data_format) == "channels_last"
    height, width = (images.shape[-3], images.shape[-2]) if last else (images.shape[-2], images.shape[-1])
    words = tuple(f"{side}_{_VERBS[name]}" for side in ("top", "left", "bottom", "right"))
    words += ("target_height", "target_width")
    top, left, bottom, right, target_height, target_width = arguments
    rows = _sides(name, height, top, bottom, target_height, words[0::2])
    cols = _sides(name, width, left, right, target_width, words[1::2])
    spatial = [rows, cols, (0, 0)] if last else [(0, 0), rows, cols]
    return images, ([(0, 0)] if images.ndim == 4 else []) + spatial


_VERBS = {"pad_images": "padding", "crop_images": "cropping"}


@keras_op
def pad_images(
    images,
    top_padding=None,
    left_padding=None,
    bottom_padding=None,
    right_padding=None,
    target_height=None,
    target_width=None,
    data_format=None,
):
    """``keras.ops.image.pad_images(images, top_padding=None, left_padding=None,
    bottom_padding=None, right_padding=None, target_height=None, target_width=None,
    data_format=None)``: zeros added around the images; give two of top/bottom/target_height
    and two of left/right/target_width."""
    arguments = (top_padding, left_padding, bottom_padding, right_padding, target_height, target_width)
    images, pads = _bounds("pad_images", images, data_format, arguments)
    return _array.pad(images, pads)


@keras_op
def crop_images(
    images,
    top_cropping=None,
    left_cropping=None,
    bottom_cropping=None,
    right_cropping=None,
    target_height=None,
    target_width=None,
    data_format=None,
):
    """``keras.ops.image.crop_images(images, top_cropping=None, left_cropping=None,
    bottom_cropping=None, right_cropping=None, target_height=None, target_width=None,
    data_format=None)``: the window left after cropping; give two of top/bottom/target_height
    and two of left/right/target_width."""
    arguments = (top_cropping, left_cropping, bottom_cropping, right_cropping, target_height, target_width)
    images, crops = _bounds("crop_images", images, data_format, arguments)
    window = tuple(slice(a, size - b) for (a, b), size in zip(crops, images.shape))
    return images[window]


# -- patches -----------------------------------------------------------------------------------


def _patches(name, images, size, strides, dilation_rate, padding, data_format, n):
    """Keras' patch extraction: a convolution with an identity kernel, one output channel per
    (patch position, input channel), row-major."""
    fmt = _format(name, data_format)
    images = tensor(images)
    if images.ndim not in (n + 1, n + 2):
        raise _errors.GradkitValueError(
            f"{_where(name)} got images of shape {list(images.shape)}: {n}-D patches take rank {n + 1} (unbatched) "
            f"or {n + 2} (a batch), as Keras does."
        )
    size = (int(size),) * n if np.ndim(size) == 0 else tuple(int(s) for s in size)
    strides = size if strides is None or (n == 2 and not strides) else strides
    channels = int(images.shape[-1] if fmt == "channels_last" else images.shape[-n - 1])
    out_dim = int(np.prod(size)) * channels
    kernel = _array.reshape(cast(np.eye(out_dim, dtype=np.float32), images.dtype), (*size, channels, out_dim))
    single = images.ndim == n + 1
    batch = _array.expand_dims(images, 0) if single else images
    out = conv(batch, kernel, strides=strides, padding=padding, data_format=fmt, dilation_rate=dilation_rate)
    return _array.squeeze(out, 0) if single else out


@keras_op
def extract_patches(images, size, strides=None, dilation_rate=1, padding="valid", data_format=None):
    """``keras.ops.image.extract_patches(images, size, strides=None, dilation_rate=1,
    padding='valid', data_format=None)``: the ``size`` patches (an int or ``(height, width)``; a
    3-tuple extracts 3-D patches, as ``extract_patches_3d``) every ``strides`` (default: ``size``),
    each flattened into the channel axis."""
    if not isinstance(size, (int, np.integer)) and (not isinstance(size, (tuple, list)) or len(size) not in (2, 3)):
        raise _errors.GradkitValueError(
            f"{_where('extract_patches')} got size={size!r}: it takes an int or a tuple of 2 (2-D patches) or 3 "
            "(3-D patches), as Keras does."
        )
    n = 3 if not isinstance(size, (int, np.integer)) and len(size) == 3 else 2
    return _patches("extract_patches", images, size, strides, dilation_rate, padding, data_format, n)


@keras_op
def extract_patches_3d(volumes, size, strides=None, dilation_rate=1, padding="valid", data_format=None):
    """``keras.ops.image.extract_patches_3d(volumes, size, strides=None, dilation_rate=1,
    padding='valid', data_format=None)``: ``extract_patches`` of ``(depth, height, width)``
    patches (an int: a cube) from volumes of rank 4 or 5."""
    return _patches("extract_patches_3d", volumes, size, strides, dilation_rate, padding, data_format, 3)
