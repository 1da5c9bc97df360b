"""Keras 3's colour augmentation layers: ``RandomGrayscale``, ``RandomColorDegeneration``,
``RandomHue``, ``RandomSaturation`` and ``RandomColorJitter``.

Each follows Keras 3 on TensorFlow: its arguments, defaults, checks and ``get_config``, its
random parameters (``get_random_transformation``, in Keras' keys, shapes and ranges) and its
arithmetic (``transform_images``: TensorFlow's luma weights and HSV conversions); see
``augmentation_base`` for the call, ``training`` and the draws. The images hold 3 channels (RGB;
the grayscale layers also take 1). Gradients with respect to the images are JAX's of the same
arithmetic (the HSV conversions' are ``tf.image.rgb_to_hsv``'s and ``hsv_to_rgb``'s).

``RandomColorJitter``'s ``get_random_transformation`` gives the draws of its parts (Keras 3.15
gives None there and draws inside ``transform_images``, which gradkit also does when handed
None).

>>> import gradkit.tf as tf
>>> image = tf.constant([[[[255.0, 0.0, 0.0]]]])
>>> layer = tf.keras.layers.RandomGrayscale(factor=1.0)
>>> [round(v, 2) for v in layer.transform_images(image, [[[[True]]]])[0, 0, 0].numpy().tolist()]
[76.22, 76.22, 76.22]
>>> [round(v, 2) for v in tf.keras.layers.RandomHue(0.5).transform_images(image, {"factor": [1 / 3]})[0, 0, 0].numpy().tolist()]
[0.0, 255.0, 0.0]
"""

from __future__ import annotations

import numbers

import jax
import jax.numpy as jnp

from gradkit import _errors

from .. import _array
from .._convert import call, convert, wrap
from .._image_color import _from_hsv, _to_hsv
from . import layer_config
from .augmentation_base import BaseImageAugmentation, Draws, set_factor, tensor
from .augmentation_layers import RandomBrightness, RandomContrast
from .augmentation_pixels import (
    channel_axis,
    check_channels,
    checked_value_range,
    grayscale_jax,
    per_image_jax,
    rescale_jax,
)


def _batch_size(shape) -> int:
    return int(shape[0]) if len(shape) == 4 else 1


def _in_hsv(images, adjust, data_format):
    """``adjust(hue, saturation, value)`` applied to the images' HSV channels, back in RGB."""
    axis = channel_axis(images.ndim, data_format)
    hsv = _to_hsv(jnp.moveaxis(images, axis, -1))
    hsv = jnp.stack(adjust(hsv[..., 0], hsv[..., 1], hsv[..., 2]), axis=-1)
    return jnp.moveaxis(_from_hsv(hsv), -1, axis)


def _per_pixel_plane(values, images):
    """Per-image parameters shaped to broadcast over one channel plane (images' rank - 1)."""
    values = jnp.reshape(values, (-1,)).astype(images.dtype)
    return jnp.reshape(values, (values.shape[0], 1, 1)) if images.ndim == 4 else jnp.reshape(values, (1, 1))


# -- RandomGrayscale ---------------------------------------------------------------------------


def _grayscale_some(images, apply, *, data_format):
    gray = grayscale_jax(images, data_format=data_format)
    return jnp.where(per_image_jax(apply, images.ndim), gray, images)


class RandomGrayscale(BaseImageAugmentation):
    """``RandomGrayscale(factor=0.5, data_format=None, seed=None)``: in training, each image
    turned to gray with probability ``factor`` (in [0, 1]), its channels all set to its luma
    (TensorFlow's weights 0.2989, 0.5870, 0.1140). Integer images stay integers (the luma
    truncated), as in Keras."""

    def __init__(self, factor=0.5, data_format=None, seed=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        if not isinstance(factor, numbers.Real):
            raise _errors.GradkitTypeError(
                f"RandomGrayscale got factor={factor!r}: it takes one number in [0, 1], the probability of turning "
                "an image gray, as Keras does."
            )
        if factor < 0 or factor > 1:
            raise _errors.GradkitValueError(
                f"RandomGrayscale: `factor` should be between 0 and 1, as Keras requires. Received: factor={factor}"
            )
        self.factor = factor
        self.seed = self._draw_seed = seed

    def get_random_transformation(self, data, training=True, seed=None):
        """bool ``(batch, 1, 1, 1)`` (unbatched: (1, 1, 1, 1)): which images turn gray (drawn in
        inference too, as in Keras)."""
        batch = _batch_size(self._images(data).shape)
        with jax.ensure_compile_time_eval():
            apply = Draws(self, seed).uniform((batch,), 0.0, 1.0) < self.factor
            apply = jnp.reshape(apply, (batch, 1, 1, 1))
        return tensor(apply)

    def transform_images(self, images, transformation, training=True):
        images = wrap(convert(images))
        if not training:
            return images
        check_channels(images, self.data_format, (1, 3), self._what())
        if transformation is None:
            transformation = self.get_random_transformation(images)
        return call(_grayscale_some, images, convert(transformation), data_format=self.data_format)


# -- RandomColorDegeneration -------------------------------------------------------------------


def _degenerate(images, factor, *, data_format, value_range):
    gray = grayscale_jax(images, data_format=data_format)
    mixed = images + per_image_jax(factor, images.ndim).astype(images.dtype) * (gray - images)
    return jnp.clip(mixed, value_range[0], value_range[1])


class RandomColorDegeneration(BaseImageAugmentation):
    """``RandomColorDegeneration(factor, value_range=(0, 255), data_format=None, seed=None)``: in
    training, each image blended towards its grayscale version, ``x + f * (gray - x)``, with
    ``f`` drawn per image from ``factor`` (a number ``f`` in [0, 1]: from ``[-f, f]``; negative
    blends push colours away from gray), then clipped to ``value_range``."""

    def __init__(self, factor, value_range=(0, 255), data_format=None, seed=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.factor = set_factor(factor, (-1, 1), "RandomColorDegeneration")
        self.value_range = checked_value_range(value_range, "RandomColorDegeneration")
        self.seed = self._draw_seed = seed

    def get_random_transformation(self, data, training=True, seed=None):
        """``{'factor': (batch, 1, 1, 1)}`` (unbatched: (1, 1, 1, 1)); drawn in inference too, as in Keras."""
        batch = _batch_size(self._images(data).shape)
        factor = Draws(self, seed).uniform((batch, 1, 1, 1), self.factor[0], self.factor[1])
        return {"factor": tensor(factor)}

    def transform_images(self, images, transformation=None, training=True):
        if not training or transformation is None:
            return wrap(convert(images))
        images = self._as_compute_dtype(images)
        check_channels(images, self.data_format, (1, 3), self._what())
        return call(
            _degenerate,
            images,
            convert(transformation["factor"]),
            data_format=self.data_format,
            value_range=tuple(float(v) for v in self.value_range),
        )


# -- RandomHue -------------------------------------------------------------------------------


def _shift_hue(images, factor, *, value_range, data_format):
    dtype = images.dtype
    unit = rescale_jax(images, value_range, (0, 1))
    shift = _per_pixel_plane(factor, unit)

    def adjust(hue, saturation, value):
        hue = hue + shift
        hue = jnp.where(hue > 1.0, hue - 1.0, hue)
        hue = jnp.where(hue < 0.0, hue + 1.0, hue)
        return hue, saturation, value

    rgb = jnp.clip(_in_hsv(unit, adjust, data_format), 0, 1)
    return rescale_jax(rgb, (0, 1), value_range).astype(dtype)


class RandomHue(BaseImageAugmentation):
    """``RandomHue(factor, value_range=(0, 255), data_format=None, seed=None)``: in training,
    each image's hue turned by a fraction of a full turn drawn per image: a magnitude from
    ``factor`` (a number ``f`` in [0, 1]: from ``[0, f]``) halved, with a random sign (``0.5``
    turns by up to a quarter turn either way)."""

    def __init__(self, factor, value_range=(0, 255), data_format=None, seed=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.factor = set_factor(factor, (0, 1), "RandomHue")
        self.value_range = value_range
        self.seed = self._draw_seed = seed

    def get_random_transformation(self, data, training=True, seed=None):
        """``{'factor': (batch,)}`` (unbatched: (1,)), the hue shifts in turns; drawn in inference
        too, as in Keras."""
        batch = _batch_size(self._images(data).shape)
        draws = Draws(self, seed)
        with jax.ensure_compile_time_eval():
            sign = jnp.where(draws.uniform((batch,), 0.0, 1.0) > 0.5, -1.0, 1.0).astype(jnp.float32)
            magnitude = draws.uniform((batch,), self.factor[0], self.factor[1])
        return {"factor": tensor(sign * magnitude * 0.5)}

    def transform_images(self, images, transformation=None, training=True):
        if not training or transformation is None:
            return wrap(convert(images))
        images = self._as_compute_dtype(images)
        check_channels(images, self.data_format, (3,), self._what())
        value_range = tuple(float(v) for v in self.value_range)
        factor = convert(transformation["factor"])
        return call(_shift_hue, images, factor, value_range=value_range, data_format=self.data_format)


# -- RandomSaturation ------------------------------------------------------------------------

_EPSILON = 1e-7  # Keras' backend.epsilon()


def _scale_saturation(images, factor, *, value_range, data_format):
    scale = _per_pixel_plane(factor, images)

    def adjust(hue, saturation, value):
        return hue, jnp.clip(saturation * scale, value_range[0], value_range[1]), value

    return _in_hsv(images, adjust, data_format)


class RandomSaturation(BaseImageAugmentation):
    """``RandomSaturation(factor, value_range=(0, 255), data_format=None, seed=None)``: in
    training, each image's saturation multiplied by ``f / (1 - f)``, ``f`` drawn per image from
    ``factor`` (a number ``f`` in [0, 1]: from ``[-f, f]``; two numbers: between them; 0.5 keeps
    the saturation, 0 makes the image gray, 1 saturates it fully), the result clipped below by
    ``value_range[0]`` (Keras' arithmetic: ``value_range`` bounds the saturation). Integer images
    come out as floats (Keras 3.15 on TensorFlow fails on them)."""

    def __init__(self, factor, value_range=(0, 255), data_format=None, seed=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.factor = set_factor(factor, (-1, 1), "RandomSaturation")
        self.value_range = checked_value_range(value_range, "RandomSaturation")
        self.seed = self._draw_seed = seed

    def get_random_transformation(self, data, training=True, seed=None):
        """``{'factor': (batch,)}`` (unbatched: (1,)), the saturation multipliers; drawn in
        inference too, as in Keras."""
        batch = _batch_size(self._images(data).shape)
        with jax.ensure_compile_time_eval():
            factor = Draws(self, seed).uniform((batch,), self.factor[0], self.factor[1])
            factor = factor / (1 - factor + _EPSILON)
        return {"factor": tensor(factor)}

    def transform_images(self, images, transformation=None, training=True):
        if not training or transformation is None:
            return wrap(convert(images))
        images = wrap(convert(images))
        if not jnp.issubdtype(images.dtype, jnp.floating):
            images = self._as_compute_dtype(images)
        check_channels(images, self.data_format, (3,), self._what())
        factor = _array.cast(convert(transformation["factor"]), self.compute_dtype)
        value_range = tuple(float(v) for v in self.value_range)
        return call(_scale_saturation, images, factor, value_range=value_range, data_format=self.data_format)


# -- RandomColorJitter -----------------------------------------------------------------------

_JITTER_PARTS = ("brightness", "contrast", "saturation", "hue")


class RandomColorJitter(BaseImageAugmentation):
    """``RandomColorJitter(value_range=(0, 255), brightness_factor=None, contrast_factor=None,
    saturation_factor=None, hue_factor=None, seed=None, data_format=None)``: in training,
    ``RandomBrightness``, ``RandomContrast``, ``RandomSaturation`` and ``RandomHue`` applied in
    that order, each where its factor is given (with ``value_range`` and ``seed``), as in Keras.
    The parts follow the layer's ``data_format`` (Keras 3.15 gives them the default)."""

    def __init__(
        self,
        value_range=(0, 255),
        brightness_factor=None,
        contrast_factor=None,
        saturation_factor=None,
        hue_factor=None,
        seed=None,
        data_format=None,
        **kwargs,
    ):
        super().__init__(data_format=data_format, **kwargs)
        self.value_range = value_range
        self.brightness_factor = brightness_factor
        self.contrast_factor = contrast_factor
        self.saturation_factor = saturation_factor
        self.hue_factor = hue_factor
        self.seed = self._draw_seed = seed
        common = dict(value_range=value_range, seed=seed, data_format=self.data_format)
        self.random_brightness = None if brightness_factor is None else RandomBrightness(brightness_factor, **common)
        self.random_contrast = None if contrast_factor is None else RandomContrast(contrast_factor, **common)
        self.random_saturation = None if saturation_factor is None else RandomSaturation(saturation_factor, **common)
        self.random_hue = None if hue_factor is None else RandomHue(hue_factor, **common)

    def _parts(self):
        for name in _JITTER_PARTS:
            layer = getattr(self, f"random_{name}")
            if layer is not None:
                yield name, layer

    def get_random_transformation(self, data, training=True, seed=None):
        """``{'brightness': ..., 'contrast': ..., 'saturation': ..., 'hue': ...}``: each given
        part's own transformation, or None when not training."""
        if not training:
            return None
        images = self._images(data)
        if seed is not None and (not isinstance(seed, numbers.Integral) or isinstance(seed, bool)):
            Draws(self, seed)  # the seed error every layer gives
        # An int seed gives each part its own fixed draw (the same seed would repeat the numbers).
        return {
            name: layer.get_random_transformation(images, seed=None if seed is None else 4 * int(seed) + index)
            for index, (name, layer) in enumerate(self._parts())
        }

    def transform_images(self, images, transformation=None, training=True):
        if not training:
            return wrap(convert(images))
        images = self._as_compute_dtype(images)
        if transformation is None:
            transformation = self.get_random_transformation(images)
        for name, layer in self._parts():
            images = layer.transform_images(images, transformation[name])
        return self._as_compute_dtype(images)


layer_config.BUILTIN.update(
    {
        "RandomGrayscale": ("data_format", "factor"),
        "RandomColorDegeneration": ("data_format", "factor", "value_range", "seed"),
        "RandomHue": ("data_format", "factor", "value_range", "seed"),
        "RandomSaturation": ("data_format", "factor", "value_range", "seed"),
        "RandomColorJitter": (
            "data_format",
            "value_range",
            "brightness_factor",
            "contrast_factor",
            "saturation_factor",
            "hue_factor",
            "seed",
        ),
    }
)
