"""Keras 3's ``RandomShear`` and ``RandomPerspective``: images sampled through a random shear
(an affine transform) or a random projective transform (the homography that moves the image's
corners to random nearby points).

Each follows Keras 3 on TensorFlow: its arguments, defaults, checks and ``get_config``, its
random parameters (``get_random_transformation``, in Keras' keys, shapes and ranges) and its
sampling (``affine_transform``, TensorFlow's ``ImageProjectiveTransformV3``); see
``augmentation_base`` for the call, ``training`` and the draws, and ``augmentation_affine_layers``
for ``fill_mode``, ``interpolation`` and the gradients (the exact adjoint of the sampling).
Outputs are in the layer's dtype, in training or not, as in Keras.

>>> import gradkit.tf as tf
>>> images = tf.reshape(tf.range(6.0), [1, 2, 3, 1])
>>> layer = tf.keras.layers.RandomShear(x_factor=1.0, fill_mode="constant")
>>> layer.transform_images(images, {"shear_factor": [[1.0, 0.0]]})[0, :, :, 0].numpy().tolist()
[[0.0, 1.0, 2.0], [4.0, 5.0, 0.0]]
"""

from __future__ import annotations

import numbers

import jax
import jax.numpy as jnp

from gradkit import _errors

from .._convert import call, convert
from . import layer_config
from .affine_transform import affine_transform
from .augmentation_affine_layers import _Geometric
from .augmentation_base import Draws, factor_pair, set_factor, tensor


def _batch_size(shape) -> int:
    return int(shape[0]) if len(shape) == 4 else 1


# -- RandomShear -----------------------------------------------------------------------------


def _shear_matrix(shear):
    shear = shear.astype(jnp.float32)
    one, zero = jnp.ones_like(shear[:, :1]), jnp.zeros_like(shear[:, :1])
    # [[1, s_x, 0], [s_y, 1, 0]]: the output pixel (x, y) reads the input at (x + s_x y, s_y x + y).
    return jnp.concatenate([one, shear[:, 0:1], zero, shear[:, 1:2], one, zero, zero, zero], axis=1)


def _shear_factor(factor, name: str) -> tuple:
    """Keras' shear factors: a number ``f`` in [0, 1] is ``(-f, f)``; two numbers in [0, 1], sorted."""
    message = (
        f"RandomShear: the `x_factor` and `y_factor` arguments should be a number (or a list of two numbers) in the "
        f"range [0, 1.0], as Keras requires. Received: {name}={factor!r}"
    )

    return factor_pair(factor, message, lambda v: 0.0 <= v <= 1.0, lambda f: (-abs(f), abs(f)))


class RandomShear(_Geometric):
    """``RandomShear(x_factor=0.0, y_factor=0.0, interpolation='bilinear', fill_mode='reflect',
    fill_value=0.0, data_format=None, seed=None)``: in training, each image sheared about its
    top-left corner: row ``y`` shifted sideways by ``s_x * y`` pixels and column ``x`` up or down
    by ``s_y * x``, with ``s_x`` and ``s_y`` drawn per image from the factors (a number ``f`` in
    [0, 1]: from ``[-f, f]``) and one random sign per image for both."""

    def __init__(
        self,
        x_factor=0.0,
        y_factor=0.0,
        interpolation="bilinear",
        fill_mode="reflect",
        fill_value=0.0,
        data_format=None,
        seed=None,
        **kwargs,
    ):
        x_factor = _shear_factor(x_factor, "x_factor")
        y_factor = _shear_factor(y_factor, "y_factor")
        super().__init__(fill_mode, interpolation, seed, fill_value, data_format, **kwargs)
        self.x_factor, self.y_factor = x_factor, y_factor

    def get_random_transformation(self, data, training=True, seed=None):
        """``{'shear_factor': (batch, 2) [s_x, s_y], 'input_shape': shape}`` (unbatched: (1, 2)),
        or None when not training."""
        if not training:
            return None
        shape = tuple(self._images(data).shape)
        batch = _batch_size(shape)
        draws = Draws(self, seed)
        dtype = self.compute_dtype
        with jax.ensure_compile_time_eval():
            sign = jnp.where(draws.uniform((batch, 1), 0.0, 1.0, dtype) > 0.5, -1.0, 1.0).astype(dtype)
            shear_y = draws.uniform((batch, 1), self.y_factor[0], self.y_factor[1], dtype)
            shear_x = draws.uniform((batch, 1), self.x_factor[0], self.x_factor[1], dtype)
            shear = jnp.concatenate([shear_x, shear_y], axis=1) * sign
        return {"shear_factor": tensor(shear), "input_shape": shape}

    def _matrix(self, transformation, images):
        return call(_shear_matrix, convert(transformation["shear_factor"]))


# -- RandomPerspective -----------------------------------------------------------------------


def _homography(start, end):
    """Keras' ``compute_homography_matrix`` (float32): per image, the 8 numbers of the projective
    transform taking each of the 4 ``end`` points to its ``start`` point."""
    start, end = start.astype(jnp.float32), end.astype(jnp.float32)
    ex, ey, sx, sy = end[:, :, 0], end[:, :, 1], start[:, :, 0], start[:, :, 1]
    one, zero = jnp.ones_like(ex), jnp.zeros_like(ex)
    x_rows = jnp.stack([ex, ey, one, zero, zero, zero, -sx * ex, -sx * ey], axis=-1)
    y_rows = jnp.stack([zero, zero, zero, ex, ey, one, -sy * ex, -sy * ey], axis=-1)
    coefficients = jnp.reshape(jnp.stack([x_rows, y_rows], axis=2), (start.shape[0], 8, 8))
    targets = jnp.reshape(jnp.stack([sx, sy], axis=2), (start.shape[0], 8, 1))
    return jnp.reshape(jnp.linalg.solve(coefficients, targets), (start.shape[0], 8))


def _select(apply, transformed, images):
    return jnp.where(jnp.reshape(apply, (-1, 1, 1, 1)), transformed, images)


class RandomPerspective(_Geometric):
    """``RandomPerspective(factor=1.0, scale=1.0, interpolation='bilinear', fill_value=0.0,
    seed=None, data_format=None)``: in training, each image, with a probability drawn from
    ``factor`` (a number ``f`` in [0, 1]: from ``[0, f]``), warped so that each corner moves by
    up to ``scale / 2`` of its own coordinates (``scale`` in [0, 1]); pixels from outside the
    image read ``fill_value``."""

    def __init__(
        self, factor=1.0, scale=1.0, interpolation="bilinear", fill_value=0.0, seed=None, data_format=None, **kwargs
    ):
        factor = set_factor(factor, (0, 1), "RandomPerspective")
        if not isinstance(scale, numbers.Real) or scale < 0.0 or scale > 1.0:
            raise _errors.GradkitValueError(
                f"RandomPerspective: the `scale` argument should be a number in the range [0, 1], as Keras requires. "
                f"Received: scale={scale!r}"
            )
        super().__init__("constant", interpolation, seed, fill_value, data_format, **kwargs)
        self.factor, self.scale = factor, scale

    def get_random_transformation(self, data, training=True, seed=None):
        """``{'apply_perspective': bool (batch,), 'start_points': (batch, 4, 2), 'end_points':
        (batch, 4, 2), 'input_shape': shape}`` (the corners as (x, y); unbatched: a batch of 1),
        or None when not training."""
        if not training:
            return None
        shape = tuple(self._images(data).shape)
        batch = _batch_size(shape)
        height, width = self._height_width(shape)
        draws = Draws(self, seed)
        dtype = self.compute_dtype
        with jax.ensure_compile_time_eval():
            apply = draws.chosen(batch, self.factor)
            moves = draws.uniform((batch, 4, 2), -0.5 * self.scale, 0.5 * self.scale, dtype)
            corners = [[0.0, 0.0], [width - 1, 0.0], [0.0, height - 1], [width - 1, height - 1]]
            start = jnp.repeat(jnp.asarray([corners], dtype), batch, axis=0)
            end = start + start * moves
        return {
            "apply_perspective": tensor(apply),
            "start_points": tensor(start),
            "end_points": tensor(end),
            "input_shape": shape,
        }

    def _matrix(self, transformation, images):
        return call(_homography, convert(transformation["start_points"]), convert(transformation["end_points"]))

    def transform_images(self, images, transformation, training=True):
        images = self._as_compute_dtype(images)
        if not training or transformation is None:
            return images
        single = images.ndim == 3
        batch = images[None] if single else images
        warped = affine_transform(
            batch,
            self._matrix(transformation, batch),
            interpolation=self.interpolation,
            fill_mode="constant",
            fill_value=self.fill_value,
            data_format=self.data_format,
        )
        out = call(_select, convert(transformation["apply_perspective"]), warped, batch)
        return out[0] if single else out


layer_config.BUILTIN.update(
    {
        "RandomShear": ("data_format", "x_factor", "y_factor", "fill_mode", "interpolation", "seed", "fill_value"),
        "RandomPerspective": ("data_format", "factor", "scale", "interpolation", "fill_value", "seed"),
    }
)
