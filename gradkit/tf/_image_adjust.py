"""``tf.image.adjust_*`` and ``per_image_standardization``.

As in TensorFlow, an image that is not float16 or float32 is converted to float32 (values in
[0, 1]) for the adjustment and back to its dtype afterwards (saturating for brightness,
contrast and gamma). Hue and saturation follow TensorFlow's ``AdjustHue`` and
``AdjustSaturation`` kernels, which rotate the hue within each pixel's range of channel
values and scale its saturation (clipped to [0, 1]). Gradients are exact with respect to the
image and to the adjustment; contrast, hue and saturation have them too, where TensorFlow
has none.

>>> import gradkit.tf as tf
>>> tf.image.adjust_brightness(tf.constant([[[250, 10, 0]]], tf.uint8), 0.1).numpy().tolist()
[[[255, 35, 25]]]
>>> tf.image.adjust_hue(tf.constant([[[1.0, 0.0, 0.0]]]), 1 / 3).numpy().round(4).tolist()
[[[0.0, 1.0, 0.0]]]
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from . import _assertions
from ._convert import call, convert, known_value
from ._image_checks import at_least_3d
from ._image_color import pixels_arg
from ._image_dtype import converted

__all__ = [
    "adjust_brightness",
    "adjust_contrast",
    "adjust_gamma",
    "adjust_hue",
    "adjust_saturation",
    "per_image_standardization",
]


def _working(image):
    """The image as TensorFlow adjusts it: float16 and float32 as they are, others as float32."""
    if np.dtype(image.dtype) in (np.dtype("float16"), np.dtype("float32")):
        return image
    return converted(image, jnp.float32)


def _real(image, fn):
    if np.dtype(image.dtype).kind not in "iuf" and str(image.dtype) != "bfloat16":
        raise _errors.GradkitTypeError(
            f"tf.image.{fn} got a {image.dtype} image; it takes integer or float images, as TensorFlow does."
        )
    return image


def _brightness(image, delta):
    flat = _working(image)
    return converted(flat + delta.astype(flat.dtype), image.dtype, saturate=True)


def adjust_brightness(image, delta):
    """``tf.image.adjust_brightness``: ``delta`` added to every value (in [0, 1] units)."""
    return call(_brightness, _real(convert(image), "adjust_brightness"), convert(delta))


def _contrast(images, factor):
    flat = _working(images)
    x = flat.astype(jnp.float32)
    mean = jnp.mean(x, axis=(-3, -2), keepdims=True)
    adjusted = ((x - mean) * factor.astype(jnp.float32) + mean).astype(flat.dtype)
    return converted(adjusted, images.dtype, saturate=True)


def adjust_contrast(images, contrast_factor):
    """``tf.image.adjust_contrast``: each channel of each image moved away from its mean (over
    rows and columns) by ``contrast_factor``."""
    images = _real(at_least_3d(images, "adjust_contrast", _errors.InvalidArgumentValueError), "adjust_contrast")
    return call(_contrast, images, convert(contrast_factor))


def _gamma(image, gamma, gain):
    flat = _working(image)
    return converted(gain.astype(flat.dtype) * flat ** gamma.astype(flat.dtype), image.dtype, saturate=True)


def adjust_gamma(image, gamma=1, gain=1):
    """``tf.image.adjust_gamma``: ``gain * image ** gamma`` (in [0, 1] units)."""
    gamma_value = known_value(gamma)
    if gamma_value is not None and np.any(gamma_value < 0):
        raise _errors.GradkitValueError(
            f"tf.image.adjust_gamma got gamma={gamma_value.tolist()}: it must be a non-negative real "
            "number, as TensorFlow requires."
        )
    if gamma_value is None:  # known when the program runs: checked then, as TensorFlow's assertion
        _assertions.require(
            call(_non_negative, convert(gamma)),
            lambda *_: _assertions.failed("assertion failed: [Gamma should be a non-negative real number.]"),
        )
    image = _real(convert(image), "adjust_gamma")
    return call(_gamma, image, convert(gamma), convert(gain))


def _non_negative(x):
    return jnp.all(x >= 0)


def _ordered(r, g, b):
    """Each pixel's largest, middle and smallest channel and its sixth of the hue circle, with
    TensorFlow's comparisons (ties go where its kernel sends them)."""
    r_below_g = r < g

    def pick(when_r_below_g, when_not):
        return jnp.where(r_below_g, jnp.select(*when_r_below_g), jnp.select(*when_not))

    first = [b < r, b > g]
    second = [b < g, b > r]
    largest = pick((first, [g, b], g), (second, [r, b], r))
    middle = pick((first, [r, g], b), (second, [g, r], b))
    smallest = pick((first, [b, r], r), (second, [b, g], g))
    sixth = pick((first, [1, 3], 2), (second, [0, 4], 5))
    return largest, middle, smallest, sixth


def _hue_rotated(image, delta):
    x = image.astype(jnp.float32)
    largest, middle, smallest, sixth = _ordered(x[..., 0], x[..., 1], x[..., 2])
    spread = largest - smallest
    flat = spread == 0
    ratio = (middle - smallest) / jnp.where(flat, jnp.ones_like(spread), spread)
    rising = sixth % 2 == 0
    hue = jnp.where(flat, 0.0, sixth + jnp.where(rising, ratio, 1 - ratio))
    hue = hue + delta.astype(jnp.float32) * 6
    hue = hue - 6 * jnp.floor(jax.lax.stop_gradient(hue) / 6)
    hue = jnp.where(hue >= 6, hue - 6, hue)  # rounding may land on 6 itself
    sixth = jnp.floor(jax.lax.stop_gradient(hue)).astype(jnp.int32)
    ratio = hue - sixth
    ratio = jnp.where(sixth % 2 == 0, ratio, 1 - ratio)
    middle = smallest + ratio * spread
    channels = {
        0: (largest, middle, smallest),
        1: (middle, largest, smallest),
        2: (smallest, largest, middle),
        3: (smallest, middle, largest),
        4: (middle, smallest, largest),
        5: (largest, smallest, middle),
    }
    out = [
        jnp.select([sixth == k for k in range(5)], [channels[k][c] for k in range(5)], channels[5][c]) for c in range(3)
    ]
    return jnp.stack(out, axis=-1).astype(image.dtype)


def _hue(image, delta):
    flat = _working(image)
    return converted(_hue_rotated(flat, delta), image.dtype)


def adjust_hue(image, delta, name=None):
    """``tf.image.adjust_hue``: the hue turned by ``delta`` (a fraction of the circle, in [-1, 1])."""
    image = pixels_arg(
        at_least_3d(image, "adjust_hue", _errors.InvalidArgumentValueError), "adjust_hue", floats_only=False
    )
    check_range(delta, -1.0, 1.0, "adjust_hue", "delta")
    return call(_hue, image, convert(delta))


def _saturation_scaled(image, factor):
    x = image.astype(jnp.float32)
    r, g, b = x[..., 0], x[..., 1], x[..., 2]
    value = jnp.max(x, axis=-1)
    spread = value - jnp.min(x, axis=-1)
    saturation = jnp.where(value > 0, spread / jnp.where(value > 0, value, jnp.ones_like(value)), 0.0)
    norm = 1 / (6 * jnp.where(spread > 0, spread, jnp.ones_like(spread)))
    hue = jnp.where(r == value, norm * (g - b), jnp.where(g == value, norm * (b - r) + 2 / 6, norm * (r - g) + 4 / 6))
    hue = jnp.where(spread > 0, hue, 0.0)
    hue = jnp.where(hue < 0, hue + 1, hue)
    saturation = jnp.clip(saturation * factor.astype(jnp.float32), 0.0, 1.0)
    chroma = saturation * value
    base = value - chroma
    sixths = hue * 6
    sixth = jnp.trunc(jax.lax.stop_gradient(sixths)).astype(jnp.int32)
    rising = chroma * (1 - jnp.abs(jnp.mod(sixths, 2.0) - 1))
    zero = jnp.zeros_like(chroma)
    table = [
        (chroma, rising, zero),
        (rising, chroma, zero),
        (zero, chroma, rising),
        (zero, rising, chroma),
        (rising, zero, chroma),
        (chroma, zero, rising),
    ]
    out = [jnp.select([sixth == k for k in range(6)], [table[k][c] for k in range(6)], zero) + base for c in range(3)]
    return jnp.stack(out, axis=-1).astype(image.dtype)


def _saturation(image, factor):
    flat = _working(image)
    return converted(_saturation_scaled(flat, factor), image.dtype)


def adjust_saturation(image, saturation_factor, name=None):
    """``tf.image.adjust_saturation``: each pixel's saturation times ``saturation_factor``,
    clipped to [0, 1]; hue and value kept."""
    image = pixels_arg(
        at_least_3d(image, "adjust_saturation", _errors.InvalidArgumentValueError),
        "adjust_saturation",
        floats_only=False,
    )
    return call(_saturation, image, convert(saturation_factor))


def check_range(value, low, high, fn, what):
    known = known_value(value)
    if known is not None and (np.any(known < low) or np.any(known > high)):
        raise _errors.GradkitValueError(
            f"tf.image.{fn} got {what}={known.tolist()}: it must lie in [{low}, {high}], as TensorFlow requires."
        )


def _standardized(image):
    x = image.astype(jnp.float32)
    axes = (-3, -2, -1)
    count = np.prod(x.shape[-3:])
    mean = jnp.mean(x, axis=axes, keepdims=True)
    variance = jnp.var(x, axis=axes, keepdims=True)
    # A flat image's standard deviation is 0: its square root is guarded so that the gradient
    # there is 0, as TensorFlow's (whose sqrt gradient is 0 for a zero upstream), not NaN.
    positive = variance > 0
    stddev = jnp.where(positive, jnp.sqrt(jnp.where(positive, variance, 1.0)), 0.0)
    floor = jnp.asarray(1 / np.sqrt(np.float32(count)), jnp.float32)
    # tf.maximum's gradient goes to its first argument on a tie.
    return (x - mean) / jnp.where(stddev >= floor, stddev, floor)


def per_image_standardization(image):
    """``tf.image.per_image_standardization``: each image (the last three axes) scaled to mean 0
    and standard deviation 1 (at least ``1 / sqrt(number of values)`` for a flat image); float32."""
    image = _real(at_least_3d(image, "per_image_standardization"), "per_image_standardization")
    return call(_standardized, image)
