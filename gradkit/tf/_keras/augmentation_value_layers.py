"""Keras 3's augmentation layers that remap pixel values within ``value_range``:
``RandomInvert``, ``Solarization``, ``RandomPosterization``, ``AutoContrast`` and
``Equalization``.

Each follows Keras 3 on TensorFlow: its arguments, defaults, checks and ``get_config``, its
random parameters (``get_random_transformation``, in Keras' keys, shapes and ranges) and its
arithmetic (``transform_images``); see ``augmentation_base`` for the call, ``training`` and the
draws. ``AutoContrast`` and ``Equalization`` have no random parameters; ``AutoContrast``, as in
Keras, stretches the images in inference too. The gradients with respect to the images are JAX's of the same arithmetic
(``RandomPosterization`` rounds to whole levels: its gradient is zero, as TensorFlow's cast to
``uint8`` gives none).

>>> import gradkit.tf as tf
>>> images = tf.constant([[[[0.0], [64.0]], [[128.0], [255.0]]]])
>>> tf.keras.layers.RandomInvert().transform_images(images, {"apply_inversion": [True]})[0, :, :, 0].numpy().tolist()
[[255.0, 191.0], [127.0, 0.0]]
>>> tf.keras.layers.AutoContrast()(images / 2, training=False)[0, :, :, 0].numpy().round(3).tolist()
[[0.0, 64.0], [128.0, 255.0]]
"""

from __future__ import annotations

import numbers

import jax
import jax.numpy as jnp

from gradkit import _errors

from .._convert import call, convert, wrap
from . import layer_config
from .augmentation_base import BaseImageAugmentation, Draws, factor_pair, set_factor, tensor
from .augmentation_pixels import checked_value_range, per_image_jax, rescale_jax, spatial_axes


def _batch_size(shape) -> int:
    return int(shape[0]) if len(shape) == 4 else 1


# -- RandomInvert ------------------------------------------------------------------------------


def _invert(images, apply, *, top):
    return jnp.where(per_image_jax(apply, images.ndim), jnp.asarray(top, images.dtype) - images, images)


class RandomInvert(BaseImageAugmentation):
    """``RandomInvert(factor=1.0, value_range=(0, 255), seed=None, data_format=None)``: in
    training, each image inverted (``value_range[1] - x``) with a probability drawn per image
    from ``factor`` (a number ``f`` in [0, 1]: from ``[0, f]``; two numbers: between them)."""

    def __init__(self, factor=1.0, value_range=(0, 255), seed=None, data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.factor = set_factor(factor, (0, 1), "RandomInvert")
        self.value_range = value_range
        self.seed = self._draw_seed = seed

    def get_random_transformation(self, data, training=True, seed=None):
        """``{'apply_inversion': bool (batch,)}`` (unbatched: (1,)), or None when not training."""
        if not training:
            return None
        batch = _batch_size(self._images(data).shape)
        draws = Draws(self, seed)
        with jax.ensure_compile_time_eval():
            apply = draws.chosen(batch, self.factor)
        return {"apply_inversion": tensor(apply)}

    def transform_images(self, images, transformation, training=True):
        if not training or transformation is None:
            return wrap(convert(images))
        images = self._as_compute_dtype(images)
        return call(_invert, images, convert(transformation["apply_inversion"]), top=float(self.value_range[1]))


# -- Solarization ------------------------------------------------------------------------------


def _solarize(images, additions, thresholds, *, value_range):
    dtype = images.dtype
    shifted = rescale_jax(images, value_range, (0, 255), dtype)
    shifted = jnp.clip(shifted + per_image_jax(additions, images.ndim).astype(dtype), 0, 255)
    full = jnp.asarray(255, dtype)
    flipped = jnp.where(shifted < per_image_jax(thresholds, images.ndim).astype(dtype), shifted, full - shifted)
    return rescale_jax(flipped, (0, 255), value_range, dtype)


def _solarization_factor(factor, name: str) -> tuple:
    """Keras' Solarization factors: a number ``f`` in [0, 1] is ``(0, f)``; two are sorted."""
    message = (
        f"Solarization: the `addition_factor` and `threshold_factor` arguments should be a number (or a list of "
        f"two numbers) in the range [0, 1], as Keras requires. Received: {name}={factor!r}"
    )

    return factor_pair(factor, message, lambda v: 0.0 <= v <= 1.0, lambda f: (0, f))


class Solarization(BaseImageAugmentation):
    """``Solarization(addition_factor=0.0, threshold_factor=0.0, value_range=(0, 255),
    seed=None)``: in training, each image (on a 0-255 scale) raised by an addition, clipped to
    [0, 255], and its pixels at or above a threshold turned to ``255 - x``. The addition and the
    threshold are drawn per image, Keras' way: from ``addition_factor[0]`` to
    ``addition_factor[1] * 255`` (a number ``f``: ``(0, f)``), and likewise the threshold. With
    the defaults every pixel is solarized. The output is in the layer's dtype, in training or
    not, as in Keras."""

    def __init__(self, addition_factor=0.0, threshold_factor=0.0, value_range=(0, 255), seed=None, **kwargs):
        super().__init__(**kwargs)
        self.seed = self._draw_seed = seed
        self.addition_factor = _solarization_factor(addition_factor, "addition_factor")
        self.threshold_factor = _solarization_factor(threshold_factor, "threshold_factor")
        self.value_range = checked_value_range(value_range, "Solarization")

    def get_random_transformation(self, data, training=True, seed=None):
        """``{'additions': (batch, 1, 1, 1), 'thresholds': (batch, 1, 1, 1)}`` (unbatched: (1, 1, 1)
        each), or None when not training."""
        if not training:
            return None
        shape = tuple(self._images(data).shape)
        factor_shape = (shape[0], 1, 1, 1) if len(shape) == 4 else (1, 1, 1)
        draws = Draws(self, seed)
        additions = draws.uniform(
            factor_shape, self.addition_factor[0], self.addition_factor[1] * 255, self.compute_dtype
        )
        thresholds = draws.uniform(
            factor_shape, self.threshold_factor[0], self.threshold_factor[1] * 255, self.compute_dtype
        )
        return {"additions": tensor(additions), "thresholds": tensor(thresholds)}

    def transform_images(self, images, transformation, training=True):
        images = self._as_compute_dtype(images)
        if not training or transformation is None:
            return images
        additions, thresholds = convert(transformation["additions"]), convert(transformation["thresholds"])
        return call(_solarize, images, additions, thresholds, value_range=tuple(self.value_range))


# -- RandomPosterization -----------------------------------------------------------------------

_MAX_BITS = 8


def _posterize(images, shift, *, value_range, dtype):
    levels = rescale_jax(images, value_range, (0, 255), dtype).astype(jnp.uint8)
    shift = per_image_jax(shift.astype(jnp.uint8), images.ndim)
    levels = jnp.left_shift(jnp.right_shift(levels, shift), shift)
    return rescale_jax(levels.astype(dtype), (0, 255), value_range, dtype)


class RandomPosterization(BaseImageAugmentation):
    """``RandomPosterization(factor, value_range=(0, 255), data_format=None, seed=None)``: in
    training, each image (on a 0-255 scale, truncated to whole levels) kept to its top ``bits``
    bits per channel, ``bits`` drawn per image from ``factor`` (a number ``f`` in [1, 8]: a whole
    number in ``[1, f)``, or 1 when ``f`` is 1; two numbers: from the first up to, not
    including, the second, or the one where they are equal). Integer images come out as floats
    in training, as in Keras."""

    def __init__(self, factor, value_range=(0, 255), data_format=None, seed=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.factor = set_factor(factor, (1, _MAX_BITS), "RandomPosterization")
        self.value_range = checked_value_range(value_range, "RandomPosterization")
        self.seed = self._draw_seed = seed

    def get_random_transformation(self, data, training=True, seed=None):
        """``{'shift_factor': uint8 (batch,)}`` (unbatched: (1,)): the bits each image drops
        (8 - ``bits``). Drawn in inference too, as in Keras."""
        batch = _batch_size(self._images(data).shape)
        low, high = self.factor
        with jax.ensure_compile_time_eval():
            if low != high:
                bits = jnp.floor(Draws(self, seed).uniform((batch,), int(low), int(high))).astype(jnp.uint8)
            else:
                bits = jnp.full((batch,), int(low), jnp.uint8)
            shift = jnp.uint8(_MAX_BITS) - bits
        return {"shift_factor": tensor(shift)}

    def transform_images(self, images, transformation=None, training=True):
        if not training or transformation is None:
            return wrap(convert(images))
        shift = convert(transformation["shift_factor"])
        return call(_posterize, images, shift, value_range=tuple(self.value_range), dtype=str(self.compute_dtype))


# -- AutoContrast ------------------------------------------------------------------------------


def _auto_contrast(images, *, value_range, dtype, axes):
    original = images
    scaled = rescale_jax(images, value_range, (0, 255), dtype).astype(dtype)
    low = jnp.min(scaled, axis=axes, keepdims=True)
    high = jnp.max(scaled, axis=axes, keepdims=True)
    # Keras divides by high - low and returns the input where that gives NaN (a constant
    # channel, or a NaN pixel); the guard keeps those values and makes their gradient 0, not NaN.
    flat = high == low
    scale = jnp.asarray(255.0, dtype) / jnp.where(flat, jnp.ones_like(high), high - low)
    stretched = jnp.clip(scaled * scale + (-low * scale), 0.0, 255.0)
    results = rescale_jax(stretched, (0, 255), value_range, dtype)
    keep = flat | jnp.isnan(results)
    return jnp.where(keep, original.astype(results.dtype), results)


class AutoContrast(BaseImageAugmentation):
    """``AutoContrast(value_range=(0, 255))``: each channel of each image stretched so that its
    lowest value becomes ``value_range[0]`` and its highest ``value_range[1]`` (a constant
    channel, or one with a NaN, stays as it is). Nothing is random, and it applies in inference
    too, as in Keras. The output is in the layer's dtype.

    With ``data_format="channels_first"`` the lowest and highest values are taken over each
    channel's pixels, as with channels last (Keras 3.15 takes them over the channels and rows of
    each column there)."""

    def __init__(self, value_range=(0, 255), **kwargs):
        super().__init__(**kwargs)
        self.value_range = checked_value_range(value_range, "AutoContrast")

    def get_random_transformation(self, data, training=True, seed=None):
        """None: AutoContrast draws nothing."""
        return None

    def transform_images(self, images, transformation=None, training=True):
        images = wrap(convert(images))
        axes = spatial_axes(images.ndim, self.data_format)
        return call(
            _auto_contrast, images, value_range=tuple(self.value_range), dtype=str(self.compute_dtype), axes=axes
        )


# -- Equalization ------------------------------------------------------------------------------


def _scale_values(values, source, target):
    """Keras' ``Equalization._scale_values``: the scale and offset in Python floats."""
    scale = (target[1] - target[0]) / (source[1] - source[0])
    return values * scale + (target[0] - source[0] * scale)


def _equalize_channel(channel, *, value_range, bins):
    channel = _scale_values(channel, value_range, (0, 255))
    scaled = (channel.astype(jnp.float32) - jnp.float32(0)) * (bins - 1) / jnp.float32(255)
    indices = jnp.clip(scaled.astype(jnp.int32), 0, bins - 1)
    histogram = jnp.bincount(jnp.reshape(indices, (-1,)), length=bins)
    cdf = jnp.cumsum(histogram)
    cdf_min = cdf[jnp.argmax(cdf > 0)]
    denominator = cdf[-1] - cdf_min
    denominator = jnp.where(denominator == 0, jnp.ones_like(denominator), denominator)
    # Keras divides the integers in float64 (TensorFlow's truediv of int32), then rounds half to
    # even. Done here in integers, exactly: XLA's CPU float32 division by a scalar multiplies by
    # its reciprocal, which turns ties such as 5355 / 126 = 42.5 into 42.500004 (rounded up).
    numerator = (cdf - cdf_min) * 255
    quotient, remainder = numerator // denominator, numerator % denominator
    up = (2 * remainder > denominator) | ((2 * remainder == denominator) & (quotient % 2 == 1))
    lookup = jnp.clip(quotient + up.astype(quotient.dtype), 0, 255).astype(channel.dtype)
    levels = jnp.clip((channel / 255.0) * (bins - 1), 0, bins - 1).astype(jnp.int32)
    equalized = jnp.where(jnp.count_nonzero(histogram) <= 1, channel, lookup[levels])
    return _scale_values(equalized, (0, 255), value_range)


def _equalize(images, *, value_range, bins, axis):
    channels = [
        _equalize_channel(jnp.take(images, index, axis=axis), value_range=value_range, bins=bins)
        for index in range(images.shape[axis])
    ]
    return jnp.stack(channels, axis=axis).astype(images.dtype)


class Equalization(BaseImageAugmentation):
    """``Equalization(value_range=(0, 255), bins=256, data_format=None)``: in training, each
    channel's values spread evenly over ``value_range`` by histogram equalization (``bins``
    bins on a 0-255 scale; one histogram per channel over the whole batch, as in Keras; a
    channel with a single level stays as it is). Nothing is random. The output takes whole
    levels of the 0-255 scale, so its gradient with respect to the images is zero."""

    def __init__(self, value_range=(0, 255), bins=256, data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        if not isinstance(bins, numbers.Integral) or isinstance(bins, bool) or bins < 1:
            raise _errors.GradkitValueError(
                f"Equalization got bins={bins!r}: it takes the number of bins, an int >= 1."
            )
        self.bins = bins
        self.value_range = checked_value_range(value_range, "Equalization")

    def get_random_transformation(self, data, training=True, seed=None):
        """None: Equalization draws nothing."""
        return None

    def transform_images(self, images, transformation=None, training=True):
        if not training:
            return wrap(convert(images))
        images = self._as_compute_dtype(images)
        axis = images.ndim - 3 if self.data_format == "channels_first" else images.ndim - 1
        value_range = tuple(float(v) for v in self.value_range)
        return call(_equalize, images, value_range=value_range, bins=int(self.bins), axis=axis)


layer_config.BUILTIN.update(
    {
        "Equalization": ("data_format", "bins", "value_range"),
        "RandomInvert": ("data_format", "factor", "value_range", "seed"),
        "Solarization": ("data_format", "value_range", "addition_factor", "threshold_factor", "seed"),
        "RandomPosterization": ("data_format", "factor", "value_range", "seed"),
        "AutoContrast": ("data_format", "value_range"),
    }
)
