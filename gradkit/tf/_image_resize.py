"""``tf.image.resize``, ``resize_with_pad`` and ``ResizeMethod``.

Each method computes what TensorFlow's kernel for it computes (``_image_resize_weights``
builds the weights): bilinear, bicubic and nearest with half-pixel centres, area as the
exact overlap of cells, and ``ScaleAndTranslate`` for ``antialias=True`` and for the lanczos,
gaussian and mitchellcubic methods. The result is float32, except for nearest, which keeps
the image's dtype, as in TensorFlow. Gradients with respect to the image are exact (every
method is linear in it); ``area`` has one too, where TensorFlow has none.

>>> import gradkit.tf as tf
>>> image = tf.reshape(tf.range(4.0), [2, 2, 1])
>>> tf.image.resize(image, [4, 4])[:, :, 0].numpy().tolist()[0]
[0.0, 0.25, 0.75, 1.0]
>>> tf.image.resize(tf.ones([1, 4, 6, 3]), [2, 2], preserve_aspect_ratio=True).shape
(1, 1, 2, 3)
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from . import _image_resize_weights as weights
from ._convert import call, known_value
from ._image_checks import concrete_int, images_arg, real_dtype
from ._image_geometry import pad_to_bounding_box

__all__ = ["ResizeMethod", "resize", "resize_with_pad"]


class ResizeMethod:
    """``tf.image.ResizeMethod``: the names of ``tf.image.resize``'s methods."""

    BILINEAR = "bilinear"
    NEAREST_NEIGHBOR = "nearest"
    BICUBIC = "bicubic"
    AREA = "area"
    LANCZOS3 = "lanczos3"
    LANCZOS5 = "lanczos5"
    GAUSSIAN = "gaussian"
    MITCHELLCUBIC = "mitchellcubic"


_METHODS = tuple(v for k, v in vars(ResizeMethod).items() if k.isupper())
# The methods TensorFlow always runs through ScaleAndTranslate (with its kernel of the same
# name), and the kernels it runs bilinear and bicubic with when they are antialiased.
_SCALE_AND_TRANSLATE = ("lanczos3", "lanczos5", "gaussian", "mitchellcubic")
_ANTIALIASED = {"bilinear": "triangle", "bicubic": "keyscubic"}


def _axis_weights(in_size: int, out_size: int, method: str, antialias: bool) -> np.ndarray:
    if method in _SCALE_AND_TRANSLATE:
        return weights.scale_and_translate(in_size, out_size, method, antialias)
    if antialias and method in _ANTIALIASED:
        return weights.scale_and_translate(in_size, out_size, _ANTIALIASED[method], True)
    return {"bilinear": weights.bilinear, "bicubic": weights.bicubic, "area": weights.area}[method](in_size, out_size)


def _resize_batch(images, *, size, method, antialias):
    _, height, width, _ = images.shape
    if method == ResizeMethod.NEAREST_NEIGHBOR:
        rows, cols = weights.nearest(height, size[0]), weights.nearest(width, size[1])
        return images[:, rows][:, :, cols]
    rows = _axis_weights(height, size[0], method, antialias)
    cols = _axis_weights(width, size[1], method, antialias)
    x = images.astype(jnp.float32)
    x = jnp.einsum("oh,nhwc->nowc", rows, x, precision=jax.lax.Precision.HIGHEST)
    return jnp.einsum("pw,nowc->nopc", cols, x, precision=jax.lax.Precision.HIGHEST)


def _size_arg(size):
    known = known_value(size)
    if known is None:
        raise _errors.GradkitValueError(
            "tf.image.resize got a traced size inside tf.function: gradkit needs the new size known while "
            "tracing, since it fixes the result's shape. Pass a Python list ([height, width])."
        )
    if known.shape != (2,) or known.dtype.kind not in "iu":
        raise _errors.GradkitValueError(
            f"tf.image.resize got size={known.tolist()!r}: it must be a 1-D tensor of 2 integers, "
            "[new_height, new_width], as in TensorFlow."
        )
    if (known <= 0).any():
        raise _errors.InvalidArgumentValueError(
            f"tf.image.resize got size={known.tolist()!r}: both sizes must be positive, as TensorFlow requires."
        )
    return int(known[0]), int(known[1])


def _aspect_preserving(size, height, width):
    """TensorFlow's ``preserve_aspect_ratio``: the largest size within ``size`` with the image's
    aspect ratio, each side rounded half to even in float32."""
    factor = min(np.float32(size[0]) / np.float32(height), np.float32(size[1]) / np.float32(width))
    return int(np.round(factor * np.float32(height))), int(np.round(factor * np.float32(width)))


def resize(images, size, method=ResizeMethod.BILINEAR, preserve_aspect_ratio=False, antialias=False, name=None):
    """``tf.image.resize``: ``images`` ([batch,] height, width, channels) resized to ``size``."""
    images = images_arg(images, "resize")
    real_dtype(images, "resize")
    if method not in _METHODS:
        raise _errors.GradkitValueError(
            f"tf.image.resize got method={method!r}, which TensorFlow does not implement. "
            f"Pass one of {list(_METHODS)} (tf.image.ResizeMethod's names)."
        )
    size = _size_arg(size)
    batch = images if images.ndim == 4 else images[None]
    if preserve_aspect_ratio:
        kept = _aspect_preserving(size, batch.shape[1], batch.shape[2])
        if min(kept) <= 0:
            raise _errors.InvalidArgumentValueError(
                f"tf.image.resize got size={list(size)} with preserve_aspect_ratio=True for an image of "
                f"{batch.shape[1]} x {batch.shape[2]}: keeping its aspect ratio rounds one side to {min(kept)}, and "
                "the output dimensions must be positive, as TensorFlow requires. Ask for a larger size."
            )
        size = kept
    out = call(_resize_batch, batch, size=size, method=method, antialias=bool(antialias))
    return out if images.ndim == 4 else out[0]


def resize_with_pad(image, target_height, target_width, method=ResizeMethod.BILINEAR, antialias=False):
    """``tf.image.resize_with_pad``: resized to fit within the target keeping its aspect ratio,
    then padded with zeros (centred) to ``[target_height, target_width]``."""
    image = images_arg(image, "resize_with_pad")
    target_height = concrete_int(target_height, "resize_with_pad", "target_height")
    target_width = concrete_int(target_width, "resize_with_pad", "target_width")
    if target_height <= 0 or target_width <= 0:
        raise _errors.GradkitValueError(
            f"tf.image.resize_with_pad got a target of {target_height} x {target_width}: both sides must be "
            "positive, as TensorFlow requires."
        )
    height, width = (np.float32(d) for d in image.shape[-3:-1])
    ratio = max(width / np.float32(target_width), height / np.float32(target_height))
    resized_height, resized_width = np.float32(height / ratio), np.float32(width / ratio)
    pad_top = max(0, int(np.floor((np.float32(target_height) - resized_height) / np.float32(2))))
    pad_left = max(0, int(np.floor((np.float32(target_width) - resized_width) / np.float32(2))))
    resized = resize(image, [int(np.floor(resized_height)), int(np.floor(resized_width))], method, antialias=antialias)
    return pad_to_bounding_box(resized, pad_top, pad_left, target_height, target_width)
