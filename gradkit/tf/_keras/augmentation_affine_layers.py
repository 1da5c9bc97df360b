"""Keras 3's random geometric augmentation layers: ``RandomRotation``, ``RandomZoom`` and
``RandomTranslation``.

Each draws per-image parameters (Keras' shapes and ranges), builds Keras' transform from them
(output pixel to input point, ``affine_transform``'s convention) and samples the images
through it: ``fill_mode`` ``"reflect"`` (the default), ``"wrap"``, ``"constant"`` (with
``fill_value``) or ``"nearest"``, ``interpolation`` ``"bilinear"`` (the default) or
``"nearest"``. The images' gradient is the exact adjoint of the sampling (see
``affine_transform`` for how TensorFlow's registered gradient differs). Inputs come out in the
layer's dtype (integer images as floats), as in Keras.

>>> import gradkit.tf as tf
>>> images = tf.reshape(tf.range(6.0), [1, 2, 3, 1])
>>> layer = tf.keras.layers.RandomTranslation(0.0, (0.3, 0.4), fill_mode="constant")
>>> moved = layer.transform_images(images, {"translations": [[1.0, 0.0]]})  # one pixel right
>>> moved[0, :, :, 0].numpy().tolist()
[[0.0, 0.0, 1.0], [0.0, 3.0, 4.0]]
>>> bool((layer(images, training=False) == images).numpy().all())
True
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp

from .._convert import call, convert
from . import layer_config
from .affine_transform import FILL_MODES, INTERPOLATIONS, affine_transform
from .augmentation_base import BaseImageAugmentation, Draws, check_choice, factor_pair, set_factor, tensor


def rotation_matrix(angle, height: int, width: int):
    """Keras' ``_compute_affine_matrix`` for rotations about the image centre by ``angle``
    (degrees, shape (batch,)): rows of 8 (a JAX computation, float32 as in Keras)."""
    dtype = angle.dtype
    zeros = jnp.zeros_like(angle)
    theta = angle * jnp.asarray(math.pi / 180.0, dtype)
    shear_x = jnp.tan(zeros * jnp.asarray(math.pi / 180.0, dtype))
    shear_y = shear_x
    cx = 0.5 * (jnp.asarray(width, dtype) - 1)
    cy = 0.5 * (jnp.asarray(height, dtype) - 1)
    cos, sin = jnp.cos(theta), jnp.sin(theta)
    scale = jnp.ones_like(angle)
    a0 = scale * (cos + shear_x * sin)
    a1 = scale * (-sin + shear_x * cos)
    a2 = zeros + cx - cx * a0 - cy * a1
    b0 = scale * (shear_y * cos + sin)
    b1 = scale * (shear_y * -sin + cos)
    b2 = zeros + cy - cx * b0 - cy * b1
    columns = [a0, a1, a2, b0, b1, b2, zeros, zeros]
    return jnp.stack(columns, axis=1)


class _Geometric(BaseImageAugmentation):
    """A layer that samples its images through an affine transform."""

    def __init__(self, fill_mode, interpolation, seed, fill_value, data_format, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        what = type(self).__name__
        check_choice(fill_mode, FILL_MODES, "fill_mode", what)
        check_choice(interpolation, INTERPOLATIONS, "interpolation", what)
        self.fill_mode, self.interpolation, self.fill_value = fill_mode, interpolation, fill_value
        self.seed = self._draw_seed = seed

    def _matrix(self, transformation, images):
        raise NotImplementedError

    def transform_images(self, images, transformation, training=True):
        images = self._as_compute_dtype(images)
        if not training or transformation is None:
            return images
        return affine_transform(
            images,
            self._matrix(transformation, images),
            interpolation=self.interpolation,
            fill_mode=self.fill_mode,
            fill_value=self.fill_value,
            data_format=self.data_format,
        )


class RandomRotation(_Geometric):
    """``RandomRotation(factor, fill_mode='reflect', interpolation='bilinear', seed=None,
    fill_value=0.0, data_format=None)``: in training, each image rotated about its centre by an
    angle drawn from ``factor`` (fractions of a full turn: ``0.1`` is up to 36 degrees either
    way, ``(-0.1, 0.2)`` from -36 to 72 degrees; a positive angle turns counter-clockwise)."""

    def __init__(
        self,
        factor,
        fill_mode="reflect",
        interpolation="bilinear",
        seed=None,
        fill_value=0.0,
        data_format=None,
        **kwargs,
    ):
        super().__init__(fill_mode, interpolation, seed, fill_value, data_format, **kwargs)
        self.factor = set_factor(factor, (-1, 1), "RandomRotation")

    def get_random_transformation(self, data, training=True, seed=None):
        """``{'angle': (batch,) degrees, 'rotation_matrix': (batch, 8) (unbatched: (8,)),
        'image_height', 'image_width', 'batch_size'}``, or None when not training."""
        if not training:
            return None
        shape = tuple(self._images(data).shape)
        batch = self._batch(shape)
        height, width = self._height_width(shape)
        with jax.ensure_compile_time_eval():
            angle = Draws(self, seed).uniform((batch,), self.factor[0] * 360.0, self.factor[1] * 360.0)
            matrix = rotation_matrix(angle, height, width)
            if len(shape) == 3:
                matrix = matrix[0]
        return {
            "angle": tensor(angle),
            "rotation_matrix": tensor(matrix),
            "image_height": height,
            "image_width": width,
            "batch_size": batch,
        }

    def _matrix(self, transformation, images):
        return transformation["rotation_matrix"]


def _zoom_matrix(width_zoom, height_zoom, *, height, width):
    zooms = jnp.concatenate([width_zoom, height_zoom], axis=1).astype(jnp.float32)
    n = zooms.shape[0]
    x_offset = ((jnp.float32(width) - 1.0) / 2.0) * (1.0 - zooms[:, 0:1])
    y_offset = ((jnp.float32(height) - 1.0) / 2.0) * (1.0 - zooms[:, 1:])
    zero = jnp.zeros((n, 1), jnp.float32)
    return jnp.concatenate([zooms[:, 0:1], zero, x_offset, zero, zooms[:, 1:], y_offset, zero, zero], axis=1)


def _translation_matrix(translations):
    translations = translations.astype(jnp.float32)
    one, zero = jnp.ones_like(translations[:, :1]), jnp.zeros_like(translations[:, :1])
    return jnp.concatenate([one, zero, -translations[:, 0:1], zero, one, -translations[:, 1:], zero, zero], axis=1)


def _shift_factor(factor, name: str, what: str, open_low: bool) -> tuple:
    """Keras' zoom and translation factors: a number ``f`` is ``(-|f|, |f|)``, two numbers are
    sorted; each within [-1, 1] ((-1, 1] for a zoom)."""
    interval = "(-1.0, 1.0]" if open_low else "[-1.0, 1.0]"
    message = (
        f"{what}: the `height_factor` and `width_factor` arguments should be a number (or a list of two numbers) "
        f"in the range {interval}, as Keras requires. Received: {name}={factor!r}"
    )

    return factor_pair(
        factor,
        message,
        lambda v: -1.0 <= v <= 1.0 and not (open_low and v == -1.0),
        lambda f: (-abs(f), abs(f)),
        number_types=(int, float),
    )


class RandomZoom(_Geometric):
    """``RandomZoom(height_factor, width_factor=None, fill_mode='reflect',
    interpolation='bilinear', seed=None, fill_value=0.0, data_format=None)``: in training, each
    image zoomed about its centre. The factors are fractions in (-1, 1]: a positive one zooms
    out (``0.2``: by 0 to 20%), a negative one zooms in; ``width_factor=None`` zooms both axes
    by the height's factor, keeping the aspect ratio."""

    def __init__(
        self,
        height_factor,
        width_factor=None,
        fill_mode="reflect",
        interpolation="bilinear",
        seed=None,
        fill_value=0.0,
        data_format=None,
        **kwargs,
    ):
        super().__init__(fill_mode, interpolation, seed, fill_value, data_format, **kwargs)
        self.height_factor, self.width_factor = height_factor, width_factor
        self.height_lower, self.height_upper = _shift_factor(height_factor, "height_factor", "RandomZoom", True)
        if width_factor is not None:
            self.width_lower, self.width_upper = _shift_factor(width_factor, "width_factor", "RandomZoom", True)

    def get_random_transformation(self, data, training=True, seed=None):
        """``{'height_zoom': (batch, 1), 'width_zoom': (batch, 1), 'input_shape': shape}``
        (unbatched: (1, 1) each), or None when not training."""
        if not training:
            return None
        shape = tuple(self._images(data).shape)
        zoom_shape = (self._batch(shape), 1)
        draws = Draws(self, seed)
        height_zoom = draws.uniform(zoom_shape, 1.0 + self.height_lower, 1.0 + self.height_upper)
        width_zoom = height_zoom
        if self.width_factor is not None:
            width_zoom = draws.uniform(zoom_shape, 1.0 + self.width_lower, 1.0 + self.width_upper)
        return {"height_zoom": tensor(height_zoom), "width_zoom": tensor(width_zoom), "input_shape": shape}

    def _matrix(self, transformation, images):
        height, width = self._height_width(images.shape)
        zooms = (convert(transformation["width_zoom"]), convert(transformation["height_zoom"]))
        return call(_zoom_matrix, *zooms, height=height, width=width)


class RandomTranslation(_Geometric):
    """``RandomTranslation(height_factor, width_factor, fill_mode='reflect',
    interpolation='bilinear', seed=None, fill_value=0.0, data_format=None)``: in training, each
    image shifted by fractions of its height and width drawn from the factors (in [-1, 1]; a
    number ``f`` draws from ``[-f, f]``; positive shifts move the content down and right)."""

    def __init__(
        self,
        height_factor,
        width_factor,
        fill_mode="reflect",
        interpolation="bilinear",
        seed=None,
        fill_value=0.0,
        data_format=None,
        **kwargs,
    ):
        super().__init__(fill_mode, interpolation, seed, fill_value, data_format, **kwargs)
        self.height_factor, self.width_factor = height_factor, width_factor
        what = "RandomTranslation"
        self.height_lower, self.height_upper = _shift_factor(height_factor, "height_factor", what, False)
        self.width_lower, self.width_upper = _shift_factor(width_factor, "width_factor", what, False)

    def get_random_transformation(self, data, training=True, seed=None):
        """``{'translations': (batch, 2) float32 [dx, dy] in pixels, 'input_shape': shape}``
        (unbatched: (1, 2)), or None when not training."""
        if not training:
            return None
        shape = tuple(self._images(data).shape)
        batch = self._batch(shape)
        height, width = self._height_width(shape)
        draws = Draws(self, seed)
        with jax.ensure_compile_time_eval():
            dy = draws.uniform((batch, 1), self.height_lower, self.height_upper) * height
            dx = draws.uniform((batch, 1), self.width_lower, self.width_upper) * width
            translations = jnp.concatenate([dx, dy], axis=1).astype(jnp.float32)
        return {"translations": tensor(translations), "input_shape": shape}

    def _matrix(self, transformation, images):
        return call(_translation_matrix, convert(transformation["translations"]))


_GEOMETRIC = ("fill_mode", "interpolation", "seed", "fill_value")
layer_config.BUILTIN.update(
    {
        "RandomRotation": ("data_format", "factor", "fill_mode", "fill_value", "interpolation", "seed"),
        "RandomZoom": ("data_format", "height_factor", "width_factor", *_GEOMETRIC),
        "RandomTranslation": ("data_format", "height_factor", "width_factor", *_GEOMETRIC),
    }
)
