"""Keras 3's ``RandomErasing``: a random rectangle of each image replaced by noise or a fill
value.

It follows Keras 3 on TensorFlow: its arguments, defaults, checks and ``get_config``, its random
parameters (``get_random_transformation``: Keras' keys, with the rectangles as boolean masks of
the images' shape and the fill values drawn in full) and its arithmetic; see
``augmentation_base`` for the call, ``training`` and the draws. The output is in the layer's
dtype, in training or not, as in Keras. The images' gradient passes where they are kept and is
zero inside an erased rectangle.

>>> import gradkit.tf as tf
>>> images = tf.ones([1, 2, 3, 1])
>>> masks = [[[[False], [True], [True]], [[False], [False], [False]]]]
>>> layer = tf.keras.layers.RandomErasing(fill_value=0.0)
>>> transformation = {"apply_erasing": [True], "batch_masks": masks, "fill_value": tf.zeros([1, 2, 3, 1])}
>>> layer.transform_images(images, transformation)[0, :, :, 0].numpy().tolist()
[[1.0, 0.0, 0.0], [1.0, 1.0, 1.0]]
"""

from __future__ import annotations

import numbers

import jax
import jax.numpy as jnp

from gradkit import _errors

from .._convert import call, convert
from . import layer_config
from .augmentation_base import BaseImageAugmentation, Draws, set_factor, tensor
from .augmentation_pixels import channel_axis, inside_rectangles, per_image_jax


def _batch_size(shape) -> int:
    return int(shape[0]) if len(shape) == 4 else 1


def _erase(images, masks, fill, apply):
    masks = jnp.reshape(masks, images.shape) if masks.size == images.size else jnp.broadcast_to(masks, images.shape)
    fill = fill.astype(images.dtype)
    fill = jnp.reshape(fill, images.shape) if fill.size == images.size else jnp.broadcast_to(fill, images.shape)
    erased = jnp.where(masks, fill, images)
    return jnp.where(per_image_jax(apply, images.ndim), erased, images)


class RandomErasing(BaseImageAugmentation):
    """``RandomErasing(factor=1.0, scale=(0.02, 0.33), fill_value=None, value_range=(0, 255),
    seed=None, data_format=None)``: in training, each image, with a probability drawn from
    ``factor`` (a number ``f`` in [0, 1]: from ``[0, f]``), has a rectangle replaced: its height
    and width are the image's times the square roots of two fractions drawn from ``scale``, its
    place is random. The rectangle takes ``fill_value`` (a number, or one per channel), or,
    with ``fill_value=None``, normal noise times ``value_range[1]``; either clipped to
    ``value_range``."""

    def __init__(
        self,
        factor=1.0,
        scale=(0.02, 0.33),
        fill_value=None,
        value_range=(0, 255),
        seed=None,
        data_format=None,
        **kwargs,
    ):
        super().__init__(data_format=data_format, **kwargs)
        self.factor = set_factor(factor, (0, 1), "RandomErasing")
        self.scale = set_factor(scale, (0, 1), "RandomErasing (its `scale` argument)")
        self.fill_value = fill_value
        self.value_range = value_range
        self.seed = self._draw_seed = seed

    def _fill(self, draws, shape):
        """Keras' ``_get_fill_value``: the values of the erased pixels, for images of ``shape``."""
        fill = self.fill_value
        dtype = self.compute_dtype
        if fill is None:
            values = draws.normal(shape, dtype) * self.value_range[1]
        elif isinstance(fill, (tuple, list)) and len(fill) == 3:
            per_channel = jnp.asarray(fill, dtype)
            if self.data_format == "channels_first":  # one value per channel (Keras: per column)
                per_channel = jnp.reshape(per_channel, (3, 1, 1))
            values = jnp.broadcast_to(per_channel, shape)
        elif isinstance(fill, numbers.Real) and not isinstance(fill, bool):
            values = jnp.ones(shape, dtype) * fill
        else:
            raise _errors.GradkitValueError(
                f"{self._what()}: the `fill_value` argument should be a number (or a list of three numbers), as "
                f"Keras requires. Received: fill_value={fill!r}"
            )
        return jnp.clip(values, self.value_range[0], self.value_range[1])

    def get_random_transformation(self, data, training=True, seed=None):
        """``{'apply_erasing': bool (batch,), 'batch_masks': bool (batch, height, width,
        channels), 'fill_value': the images' shape}`` (unbatched: masks of a batch of 1, fill
        values of one image), or None when not training."""
        if not training:
            return None
        shape = tuple(self._images(data).shape)
        batch = _batch_size(shape)
        height, width = self._height_width(shape)
        dtype = self.compute_dtype
        draws = Draws(self, seed)
        with jax.ensure_compile_time_eval():
            fractions = jnp.sqrt(draws.uniform((batch, 2), self.scale[0], self.scale[1], dtype))

            def bounds(length, fraction):
                extent = fraction * length
                start = draws.uniform((batch,), 0.0, 1.0, dtype) * (length - extent)
                return start, start + extent

            x0, x1 = bounds(width, fractions[:, 0])
            y0, y1 = bounds(height, fractions[:, 1])
            inside = inside_rectangles(x0, x1, y0, y1, height, width, dtype)
            axis = channel_axis(4, self.data_format)
            masks = jnp.repeat(jnp.expand_dims(inside, axis), shape[channel_axis(len(shape), self.data_format)], axis)
            apply = draws.chosen(batch, self.factor)
            fill = self._fill(draws, shape)
        return {"apply_erasing": tensor(apply), "batch_masks": tensor(masks), "fill_value": tensor(fill)}

    def transform_images(self, images, transformation=None, training=True):
        images = self._as_compute_dtype(images)
        if not training or transformation is None:
            return images
        masks, fill = convert(transformation["batch_masks"]), convert(transformation["fill_value"])
        return call(_erase, images, masks, fill, convert(transformation["apply_erasing"]))


layer_config.BUILTIN.update(
    {"RandomErasing": ("data_format", "factor", "scale", "fill_value", "value_range", "seed")},
)
