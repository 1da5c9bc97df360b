"""``tf.image``'s colour spaces: grayscale, HSV, YIQ and YUV.

The last axis holds the channels (3 for RGB, HSV, YIQ and YUV, 1 for grayscale); any
leading axes are images, rows and columns. HSV is TensorFlow's (hue, saturation and value
in [0, 1]; a gray pixel has hue 0); YIQ and YUV are TensorFlow's 3 x 3 matrices. Gradients
are exact (``rgb_to_hsv``'s takes TensorFlow's side where channels tie, but, unlike
TensorFlow's, does not vanish for a channel that is 0); ``hsv_to_rgb`` has one too, where
TensorFlow gives None.

>>> import gradkit.tf as tf
>>> tf.image.rgb_to_hsv(tf.constant([[0.0, 1.0, 0.0], [0.5, 0.5, 0.5]])).numpy().tolist()
[[0.3333333432674408, 1.0, 1.0], [0.0, 0.0, 0.5]]
>>> tf.image.rgb_to_grayscale(tf.constant([[[255, 0, 0]]], tf.uint8)).numpy().tolist()
[[[76]]]
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors
from gradkit._op_errors import FailedPreconditionError

from ._convert import call, convert
from ._image_dtype import converted

__all__ = [
    "grayscale_to_rgb",
    "hsv_to_rgb",
    "rgb_to_grayscale",
    "rgb_to_hsv",
    "rgb_to_yiq",
    "rgb_to_yuv",
    "yiq_to_rgb",
    "yuv_to_rgb",
]

_GRAY_WEIGHTS = (0.2989, 0.5870, 0.1140)  # TensorFlow's luma weights
# TensorFlow's matrices, applied as ``pixel @ matrix``.
_MATRICES = {
    "rgb_to_yiq": [[0.299, 0.59590059, 0.2115], [0.587, -0.27455667, -0.52273617], [0.114, -0.32134392, 0.31119955]],
    "yiq_to_rgb": [[1, 1, 1], [0.95598634, -0.27201283, -1.10674021], [0.6208248, -0.64720424, 1.70423049]],
    "rgb_to_yuv": [
        [0.299, -0.14714119, 0.61497538],
        [0.587, -0.28886916, -0.51496512],
        [0.114, 0.43601035, -0.10001026],
    ],
    "yuv_to_rgb": [[1, 1, 1], [0, -0.394642334, 2.03206185], [1.13988303, -0.58062185, 0]],
}


class _FailedPreconditionValueError(_errors.GradkitValueError, FailedPreconditionError):
    """A pixel of the wrong size for TensorFlow's HSV kernels, which refuse it with
    ``FailedPreconditionError``."""


def pixels_arg(
    images,
    fn: str,
    channels: int = 3,
    floats_only: bool = True,
    channel_error=_errors.InvalidArgumentValueError,
    dtype_error=_errors.GradkitTypeError,
):
    """``images`` converted, its last axis ``channels`` long and its dtype one the op takes. The
    error classes are those TensorFlow raises eagerly: InvalidArgumentError for the channels
    (FailedPreconditionError for HSV), TypeError or InvalidArgumentError for the dtype."""
    images = convert(images)
    if images.ndim < 1 or images.shape[-1] != channels:
        raise channel_error(
            f"tf.image.{fn} got a tensor of shape {list(images.shape)}: its last axis must hold {channels} "
            f"channel{'s' if channels > 1 else ''}, as TensorFlow requires."
        )
    # bfloat16 is a float to TensorFlow's image kernels (NumPy calls its kind "V").
    kind = "f" if images.dtype == jnp.bfloat16 else np.dtype(images.dtype).kind
    if (floats_only and kind != "f") or kind not in "iuf":
        wanted = "float" if floats_only else "integer or float"
        raise dtype_error(
            f"tf.image.{fn} got a {images.dtype} image; TensorFlow's kernel takes {wanted} images. "
            "Convert it first (tf.image.convert_image_dtype(image, tf.float32))."
        )
    return images


def _grayscale(images):
    gray = jnp.tensordot(
        converted(images, jnp.float32),
        jnp.asarray(_GRAY_WEIGHTS, jnp.float32),
        axes=[[-1], [-1]],
        precision=jax.lax.Precision.HIGHEST,
    )
    return converted(gray[..., None], images.dtype)


def rgb_to_grayscale(images, name=None):
    """``tf.image.rgb_to_grayscale``: luma, in the image's dtype, with one channel."""
    return call(_grayscale, pixels_arg(images, "rgb_to_grayscale", floats_only=False))


def _tiled(images):
    return jnp.repeat(images, 3, axis=-1)


def grayscale_to_rgb(images, name=None):
    """``tf.image.grayscale_to_rgb``: the one channel repeated three times."""
    images = convert(images)
    if images.ndim < 2 or images.shape[-1] != 1:
        raise _errors.GradkitValueError(
            f"tf.image.grayscale_to_rgb got a tensor of shape {list(images.shape)}: a grayscale image has at "
            "least two dimensions and a last axis of size 1, as TensorFlow requires."
        )
    return call(_tiled, images)


def _to_hsv(images):
    r, g, b = images[..., 0], images[..., 1], images[..., 2]
    # The largest and smallest channel picked with the tie rules of TensorFlow's RGBToHSV
    # gradient (red, then green, wins a tie for the largest; blue, then green, for the
    # smallest), so that at ties the gradient is TensorFlow's too; elsewhere it is the same.
    value = jnp.where((r >= b) & (r >= g), r, jnp.where((g > r) & (g >= b), g, b))
    smallest = jnp.where((b <= r) & (b <= g), b, jnp.where((g <= r) & (g < b), g, r))
    spread = value - smallest
    # Divisions guarded where they do not count (gray or black pixels), so the gradient there is 0.
    safe_value = jnp.where(value > 0, value, jnp.ones_like(value))
    saturation = jnp.where(value > 0, spread / safe_value, jnp.zeros_like(value))
    norm = 1 / (jnp.where(spread > 0, spread, jnp.ones_like(spread)) * 6)
    hue = jnp.where(
        r == value, norm * (g - b), jnp.where(g == value, norm * (b - r) + 2 / 6, norm * (r - g) + 4 / 6)
    ).astype(images.dtype)
    hue = jnp.where(spread > 0, hue, jnp.zeros_like(hue))
    hue = jnp.where(hue < 0, hue + 1, hue)
    return jnp.stack([hue, saturation, value], axis=-1)


def rgb_to_hsv(images, name=None):
    """``tf.image.rgb_to_hsv``: hue, saturation and value, each in [0, 1]."""
    return call(
        _to_hsv,
        pixels_arg(
            images,
            "rgb_to_hsv",
            channel_error=_FailedPreconditionValueError,
            dtype_error=_errors.InvalidArgumentTypeError,
        ),
    )


def _from_hsv(images):
    hue, saturation, value = images[..., 0], images[..., 1], images[..., 2]
    sixths = hue * 6

    def ramp(center, sign):
        return jnp.clip(sign * (jnp.abs(sixths - center) - (1 if sign > 0 else 2)), 0, 1)

    red, green, blue = ramp(3, 1), ramp(2, -1), ramp(4, -1)
    gray = 1 - saturation
    return jnp.stack([(gray + saturation * c) * value for c in (red, green, blue)], axis=-1)


def hsv_to_rgb(images, name=None):
    """``tf.image.hsv_to_rgb``: the inverse of ``rgb_to_hsv``."""
    return call(
        _from_hsv,
        pixels_arg(
            images,
            "hsv_to_rgb",
            channel_error=_FailedPreconditionValueError,
            dtype_error=_errors.InvalidArgumentTypeError,
        ),
    )


def _matrix_product(images, *, matrix):
    kernel = jnp.asarray(_MATRICES[matrix], images.dtype)
    return jnp.tensordot(images, kernel, axes=[[images.ndim - 1], [0]], precision=jax.lax.Precision.HIGHEST)


def rgb_to_yiq(images):
    """``tf.image.rgb_to_yiq``: luma Y and the chrominances I and Q."""
    return call(_matrix_product, pixels_arg(images, "rgb_to_yiq"), matrix="rgb_to_yiq")


def yiq_to_rgb(images):
    """``tf.image.yiq_to_rgb``: the inverse of ``rgb_to_yiq``."""
    return call(_matrix_product, pixels_arg(images, "yiq_to_rgb"), matrix="yiq_to_rgb")


def rgb_to_yuv(images):
    """``tf.image.rgb_to_yuv``: luma Y and the chrominances U and V."""
    return call(_matrix_product, pixels_arg(images, "rgb_to_yuv"), matrix="rgb_to_yuv")


def yuv_to_rgb(images):
    """``tf.image.yuv_to_rgb``: the inverse of ``rgb_to_yuv``."""
    return call(_matrix_product, pixels_arg(images, "yuv_to_rgb"), matrix="yuv_to_rgb")
