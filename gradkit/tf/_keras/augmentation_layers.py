"""Keras 3's random augmentation layers other than the affine ones: ``RandomFlip``,
``RandomContrast``, ``RandomBrightness`` and ``RandomCrop`` (the rotation, zoom and translation
layers are in ``augmentation_affine_layers``).

Each follows Keras 3 on TensorFlow: its arguments, defaults, checks and ``get_config``, its
random parameters (``get_random_transformation``, in Keras' shapes and ranges) and its
arithmetic (``transform_images``); see ``augmentation_base`` for the call, ``training`` and the
draws. Each is differentiable with respect to the images, with TensorFlow's gradients (at a
clipped value's bound the gradient passes, as in ``tf.clip_by_value``).

``RandomCrop`` crops a random ``height x width`` window in training (one window for the whole
batch, as Keras); otherwise it takes the largest central window of the target's aspect ratio
and resizes it (bilinear) to the target, the inference behaviour Keras documents (and Keras 2
had). Keras 3.15 itself returns the input uncropped when ``training`` is false, which its
issue #21868 reports as a bug: the output then lacks the shape ``compute_output_shape`` gives.

>>> import gradkit.tf as tf
>>> images = tf.reshape(tf.range(12.0), [1, 3, 4, 1])
>>> flip = tf.keras.layers.RandomFlip("horizontal", seed=1)
>>> bool((flip(images, training=False) == images).numpy().all())  # inference: the input
True
>>> flip.transform_images(images, {"flips": [[[[True]]]]})[0, :, :, 0].numpy().tolist()
[[3.0, 2.0, 1.0, 0.0], [7.0, 6.0, 5.0, 4.0], [11.0, 10.0, 9.0, 8.0]]
>>> tf.keras.layers.RandomCrop(2, 2)(images, training=False)[0, :, :, 0].numpy().tolist()  # 3 x 3, resized
[[1.25, 2.75], [7.25, 8.75]]
"""

from __future__ import annotations

import random as _py_random

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from .. import _array, _image_resize, _math
from .._convert import call, convert, known_value, wrap
from . import layer_config
from .augmentation_base import BaseImageAugmentation, Draws, set_factor, tensor

HORIZONTAL, VERTICAL, HORIZONTAL_AND_VERTICAL = "horizontal", "vertical", "horizontal_and_vertical"
_MODES = (HORIZONTAL, VERTICAL, HORIZONTAL_AND_VERTICAL)


def _per_image(values, ndim):
    """Per-image parameters (shape (batch, 1, 1, 1) or (1, 1, 1)) with ``ndim`` axes."""
    if values.ndim < ndim:
        return jnp.reshape(values, (1,) * (ndim - values.ndim) + values.shape)
    return values


def _flip(images, flips, *, axes):
    flips = _per_image(flips.astype(bool), images.ndim)
    for axis in axes:
        images = jnp.where(flips, jnp.flip(images, axis), images)
    return images


class RandomFlip(BaseImageAugmentation):
    """``RandomFlip(mode='horizontal_and_vertical', seed=None, data_format=None)``: in training,
    each image flipped with probability 1/2, left-right (``'horizontal'``), top-bottom
    (``'vertical'``) or both at once (``'horizontal_and_vertical'``)."""

    def __init__(self, mode=HORIZONTAL_AND_VERTICAL, seed=None, data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        if mode not in _MODES:
            raise _errors.GradkitValueError(f"RandomFlip got mode={mode!r}: Keras takes one of {_MODES}.")
        self.mode = mode
        self.seed = self._draw_seed = seed

    def get_random_transformation(self, data, training=True, seed=None):
        """``{'flips': bool (batch, 1, 1, 1) (unbatched: (1, 1, 1)), 'input_shape': shape}``, or None."""
        if not training:
            return None
        shape = tuple(self._images(data).shape)
        flips_shape = (1, 1, 1) if len(shape) == 3 else (shape[0], 1, 1, 1)
        with jax.ensure_compile_time_eval():
            flips = Draws(self, seed).uniform(flips_shape, 0.0, 1.0) <= 0.5
        return {"flips": tensor(flips), "input_shape": shape}

    def transform_images(self, images, transformation, training=True):
        images = self._as_compute_dtype(images)
        if not training or transformation is None:
            return images
        first = self.data_format == "channels_first"
        horizontal, vertical = (images.ndim - 1, images.ndim - 2) if first else (images.ndim - 2, images.ndim - 3)
        axes = {HORIZONTAL: (horizontal,), VERTICAL: (vertical,), HORIZONTAL_AND_VERTICAL: (horizontal, vertical)}
        return call(_flip, images, convert(transformation["flips"]), axes=axes[self.mode])


def _adjust_contrast(images, factor, *, axes):
    mean = jnp.mean(jnp.mean(images, axis=axes[0], keepdims=True), axis=axes[1], keepdims=True)
    return (images - mean) * _per_image(factor.astype(images.dtype), images.ndim) + mean


def _per_image_shape(shape) -> tuple:
    return (1, 1, 1) if len(shape) == 3 else (shape[0], 1, 1, 1)


class RandomContrast(BaseImageAugmentation):
    """``RandomContrast(factor, value_range=(0, 255), seed=None)``: in training, each image's
    deviation from its mean (per channel) scaled by a factor drawn from ``[1 - lower, 1 +
    upper]`` (``factor`` a number ``f`` in [0, 1]: lower = upper = f), then clipped to
    ``value_range``. Integer images come out as floats (Keras documents this; Keras 3.15 on
    TensorFlow fails on them)."""

    def __init__(self, factor, value_range=(0, 255), seed=None, **kwargs):
        super().__init__(**kwargs)
        self.factor = set_factor(factor, (0, 1), "RandomContrast")
        self.value_range = value_range
        self.seed = self._draw_seed = seed

    def get_random_transformation(self, data, training=True, seed=None):
        """``{'contrast_factor': (batch, 1, 1, 1) (unbatched: (1, 1, 1))}`` (zeros when not training)."""
        shape = _per_image_shape(tuple(self._images(data).shape))
        if not training:
            return {"contrast_factor": _array.zeros(shape)}
        low, high = 1.0 - self.factor[0], 1.0 + self.factor[1]
        return {"contrast_factor": tensor(Draws(self, seed).uniform(shape, low, high, self.compute_dtype))}

    def transform_images(self, images, transformation, training=True):
        if not training:
            return wrap(convert(images))
        images = self._as_compute_dtype(images)
        axes = (images.ndim - 2, images.ndim - 1) if self.data_format == "channels_first" else (-3, -2)
        out = call(_adjust_contrast, images, convert(transformation["contrast_factor"]), axes=axes)
        return _math.clip_by_value(out, self.value_range[0], self.value_range[1])


def _add_delta(images, delta):
    return images + _per_image(delta, images.ndim)


class RandomBrightness(BaseImageAugmentation):
    """``RandomBrightness(factor, value_range=(0, 255), seed=None)``: in training, each image
    shifted by a delta drawn from ``factor`` (a number ``f`` in [-1, 1]: ``[-f, f]``) times the
    width of ``value_range``, then clipped to ``value_range``. Integer images stay integers (the
    delta cast to their dtype), as in Keras."""

    def __init__(self, factor, value_range=(0, 255), seed=None, **kwargs):
        super().__init__(**kwargs)
        self.factor = set_factor(factor, (-1, 1), "RandomBrightness")
        if not isinstance(value_range, (tuple, list)) or len(value_range) != 2:
            raise _errors.GradkitValueError(
                "RandomBrightness: the `value_range` argument should be a list of two numbers, as Keras requires. "
                f"Received: value_range={value_range!r}"
            )
        self.value_range = sorted(value_range)
        self.seed = self._draw_seed = seed

    def get_random_transformation(self, data, training=True, seed=None):
        """``{'rgb_delta': (batch, 1, 1, 1) (unbatched: (1, 1, 1))}`` (zeros when not training)."""
        shape = _per_image_shape(tuple(self._images(data).shape))
        if not training:
            return {"rgb_delta": _array.zeros(shape)}
        with jax.ensure_compile_time_eval():
            delta = Draws(self, seed).uniform(shape, self.factor[0], self.factor[1])
            delta = delta * (self.value_range[1] - self.value_range[0])
        return {"rgb_delta": tensor(delta)}

    def transform_images(self, images, transformation, training=True):
        images = wrap(convert(images))
        if not training:
            return images
        delta = _array.cast(convert(transformation["rgb_delta"]), images.dtype)
        return _math.clip_by_value(call(_add_delta, images, delta), self.value_range[0], self.value_range[1])


def _dynamic_crop(images, top, left, *, size, axes):
    starts = [jnp.zeros((), jnp.int32)] * images.ndim
    sizes = list(images.shape)
    for axis, start, length in zip(axes, (top, left), size):
        starts[axis] = jnp.asarray(start, jnp.int32)
        sizes[axis] = length
    return jax.lax.dynamic_slice(images, starts, sizes)


class RandomCrop(BaseImageAugmentation):
    """``RandomCrop(height, width, seed=None, data_format=None)``: in training, a random
    ``height x width`` window of images larger than that on both sides (the same window for the
    whole batch); otherwise the largest central window of the target's aspect ratio, resized
    (bilinear) to ``height x width``. The output is in the layer's dtype."""

    def __init__(self, height, width, seed=None, data_format=None, name=None, **kwargs):
        super().__init__(data_format=data_format, name=name, **kwargs)
        for what, value in (("height", height), ("width", width)):
            if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value <= 0:
                raise _errors.GradkitValueError(
                    f"RandomCrop got {what}={value!r}: it takes the output's {what} as an int > 0."
                )
        self.height, self.width = int(height), int(width)
        # Keras gives a layer without a seed a random one, which its config shows.
        self.seed = seed if seed is not None else _py_random.randint(1, int(1e9))
        self._draw_seed = seed

    def _axes(self, ndim) -> tuple:
        return (ndim - 2, ndim - 1) if self.data_format == "channels_first" else (ndim - 3, ndim - 2)

    def _central_box(self, input_height, input_width) -> tuple:
        """Keras' largest central window of the target's aspect ratio: (top, left, height, width)."""
        crop_height = max(min(input_height, int(float(input_width * self.height) / self.width)), 1)
        crop_width = max(min(input_width, int(float(input_height * self.width) / self.height)), 1)
        top, left = int(float(input_height - crop_height) / 2), int(float(input_width - crop_width) / 2)
        return top, left, crop_height, crop_width

    def get_random_transformation(self, data, training=True, seed=None):
        """``(top, left)``: int32 scalars drawn in training (when the images are larger than the
        target on both sides), else Python ints, the corner of the central window."""
        input_height, input_width = self._height_width(self._images(data).shape)
        if training and input_height > self.height and input_width > self.width:
            draws = Draws(self, seed)
            with jax.ensure_compile_time_eval():
                top = draws.uniform((), 0.0, float(input_height - self.height + 1)).astype(jnp.int32)
                left = draws.uniform((), 0.0, float(input_width - self.width + 1)).astype(jnp.int32)
            return tensor(top), tensor(left)
        return self._central_box(input_height, input_width)[:2]

    def _window(self, images, top, left, height, width):
        axes = self._axes(images.ndim)
        window = [slice(None)] * images.ndim
        window[axes[0]], window[axes[1]] = slice(top, top + height), slice(left, left + width)
        return images[tuple(window)]

    def _to_size(self, images):
        """``images`` resized (bilinear) to ``height x width`` where they are not that size."""
        axes = self._axes(images.ndim)
        if (images.shape[axes[0]], images.shape[axes[1]]) == (self.height, self.width):
            return images
        first, rank = self.data_format == "channels_first", images.ndim
        if first:
            images = _array.transpose(images, (0, 2, 3, 1) if rank == 4 else (1, 2, 0))
        images = _image_resize.resize(images, (self.height, self.width), method="bilinear")
        if first:
            images = _array.transpose(images, (0, 3, 1, 2) if rank == 4 else (2, 0, 1))
        return self._as_compute_dtype(images)

    def transform_images(self, images, transformation, training=True):
        """In training, the ``height x width`` window at ``transformation = (top, left)`` (Keras'
        arithmetic: where the images are smaller, the part of that window they hold, resized);
        otherwise, or without a transformation, the central window of the target's aspect
        ratio, resized."""
        images = self._as_compute_dtype(images)
        if not training or transformation is None:
            box = self._central_box(*self._height_width(images.shape))
            return self._to_size(self._window(images, *box))
        top, left = transformation
        known = [known_value(v) for v in (top, left)]
        if all(k is not None for k in known):
            return self._to_size(self._window(images, int(known[0]), int(known[1]), self.height, self.width))
        axes = self._axes(images.ndim)
        if images.shape[axes[0]] < self.height or images.shape[axes[1]] < self.width:
            raise _errors.GradkitValueError(
                f"{self._what()} got a traced crop offset for images of shape {list(images.shape)}, smaller than "
                f"the {self.height} x {self.width} window; pass images at least that large."
            )
        offsets = (convert(top), convert(left))
        return call(_dynamic_crop, images, *offsets, size=(self.height, self.width), axes=axes)

    def compute_output_shape(self, input_shape):
        shape = list(input_shape)
        axes = self._axes(len(shape))
        shape[axes[0]], shape[axes[1]] = self.height, self.width
        return tuple(shape)


layer_config.BUILTIN.update(
    {
        "RandomFlip": ("data_format", "seed", "mode"),
        "RandomContrast": ("data_format", "factor", "value_range", "seed"),
        "RandomBrightness": ("data_format", "factor", "value_range", "seed"),
        "RandomCrop": ("data_format", "height", "width", "seed"),
    }
)
