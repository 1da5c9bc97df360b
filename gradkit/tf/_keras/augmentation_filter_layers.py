"""Keras 3's augmentation layers that filter each channel with a small kernel:
``RandomSharpness`` and ``RandomGaussianBlur``.

Each follows Keras 3 on TensorFlow: its arguments, defaults, checks and ``get_config``, its
random parameters (``get_random_transformation``, in Keras' keys, shapes and ranges) and its
arithmetic (``transform_images``: a depthwise convolution with zero padding, ``"same"`` size, as
``tf.nn.depthwise_conv2d``); see ``augmentation_base`` for the call, ``training`` and the draws.
Outputs are in the layer's dtype, in training or not, as in Keras; gradients with respect to
the images are JAX's of the same arithmetic.

>>> import gradkit.tf as tf
>>> image = tf.pad(tf.ones([1, 1, 1, 1]) * 13.0, [[0, 0], [1, 1], [1, 1], [0, 0]])  # one bright pixel
>>> smooth = tf.keras.layers.RandomSharpness(0.5).transform_images(image, {"factor": [0.0]})
>>> smooth[0, :, :, 0].numpy().round(3).tolist()  # factor 0: Keras' smoothing kernel
[[1.0, 1.0, 1.0], [1.0, 5.0, 1.0], [1.0, 1.0, 1.0]]
"""

from __future__ import annotations

import numbers

import jax
import jax.numpy as jnp

from gradkit import _errors

from .._convert import call, convert
from . import layer_config
from .augmentation_base import BaseImageAugmentation, Draws, set_factor, tensor
from .augmentation_pixels import checked_value_range, per_image_jax


def _batch_size(shape) -> int:
    return int(shape[0]) if len(shape) == 4 else 1


def _depthwise_same(images, kernel, *, data_format):
    """Each channel of ``images`` (rank 3 or 4) convolved with the 2-D ``kernel`` (zero
    padding, output the input's size), as ``tf.nn.depthwise_conv2d(..., padding="SAME")``."""
    single = images.ndim == 3
    batch = images[None] if single else images
    if data_format == "channels_first":
        batch = jnp.moveaxis(batch, 1, -1)
    channels = batch.shape[-1]
    filters = jnp.tile(kernel.astype(batch.dtype)[:, :, None, None], (1, 1, 1, channels))
    out = jax.lax.conv_general_dilated(
        batch,
        filters,
        window_strides=(1, 1),
        padding="SAME",
        dimension_numbers=("NHWC", "HWIO", "NHWC"),
        feature_group_count=channels,
        precision=jax.lax.Precision.HIGHEST,
    )
    if data_format == "channels_first":
        out = jnp.moveaxis(out, -1, 1)
    return out[0] if single else out


# -- RandomSharpness ---------------------------------------------------------------------------

# Keras' smoothing kernel: 1/13 around, 5/13 at the centre.
_SMOOTH_EDGE, _SMOOTH_CENTRE = 1.0 / 13.0, 5.0 / 13.0


def _sharpen(images, factor, *, data_format, value_range):
    kernel = jnp.full((3, 3), _SMOOTH_EDGE, images.dtype).at[1, 1].set(_SMOOTH_CENTRE)
    smoothed = _depthwise_same(images, kernel, data_format=data_format)
    sharpness = per_image_jax((factor * 2).astype(images.dtype), images.ndim)
    sharpened = images + (1.0 - sharpness) * (smoothed - images)
    return jnp.clip(sharpened, value_range[0], value_range[1])


class RandomSharpness(BaseImageAugmentation):
    """``RandomSharpness(factor, value_range=(0, 255), data_format=None, seed=None)``: in
    training, each image moved away from (or towards) a smoothed copy of itself,
    ``x + (1 - 2f) * (smooth - x)``, ``f`` drawn per image from ``factor`` (a number ``f`` in
    [0, 1]: from ``[0, f]``; 0 smooths, 0.5 keeps, 1 sharpens), then clipped to ``value_range``.
    The smoothing pads with zeros, so the border darkens where the image is smoothed, as in Keras."""

    def __init__(self, factor, value_range=(0, 255), data_format=None, seed=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.factor = set_factor(factor, (0, 1), "RandomSharpness")
        self.value_range = checked_value_range(value_range, "RandomSharpness")
        self.seed = self._draw_seed = seed

    def get_random_transformation(self, data, training=True, seed=None):
        """``{'factor': (batch,)}`` (unbatched: (1,)); drawn in inference too, as in Keras."""
        batch = _batch_size(self._images(data).shape)
        return {"factor": tensor(Draws(self, seed).uniform((batch,), self.factor[0], self.factor[1]))}

    def transform_images(self, images, transformation=None, training=True):
        images = self._as_compute_dtype(images)
        if not training or transformation is None:
            return images
        return call(
            _sharpen,
            images,
            convert(transformation["factor"]),
            data_format=self.data_format,
            value_range=tuple(float(v) for v in self.value_range),
        )


# -- RandomGaussianBlur ------------------------------------------------------------------------


def _gaussian_1d(size: int, sigma):
    x = jnp.arange(size, dtype=sigma.dtype) - (size - 1) / 2
    kernel = jnp.exp(-0.5 * (x / sigma) ** 2)
    return kernel / jnp.sum(kernel)


def _blur(images, apply, sigma, *, kernel_size, data_format, value_range):
    sigma = sigma.astype(images.dtype)
    # Keras' kernel: the outer product of the second size's and the first size's profiles,
    # read as kernel_size[0] rows by kernel_size[1] columns.
    outer = jnp.outer(_gaussian_1d(kernel_size[1], sigma[1]), _gaussian_1d(kernel_size[0], sigma[0]))
    kernel = jnp.reshape(outer, kernel_size)
    blurred = _depthwise_same(images, kernel, data_format=data_format)
    out = jnp.where(per_image_jax(apply, images.ndim), blurred, images)
    return jnp.clip(out, value_range[0], value_range[1])


def _kernel_size(kernel_size) -> tuple:
    """Keras' ``kernel_size``: one odd number, or two; ValueError otherwise."""
    odd = (
        "RandomGaussianBlur: `kernel_size` must be an odd number (or a list of two odd numbers), as Keras requires. "
        f"Received: kernel_size={kernel_size!r}"
    )
    if isinstance(kernel_size, (tuple, list)):
        if len(kernel_size) != 2 or not all(isinstance(k, numbers.Real) for k in kernel_size):
            raise _errors.GradkitValueError(odd)
        if kernel_size[0] % 2 == 0 or kernel_size[1] % 2 == 0:
            raise _errors.GradkitValueError(odd)
        return tuple(kernel_size)
    if isinstance(kernel_size, numbers.Real) and not isinstance(kernel_size, bool):
        if kernel_size % 2 == 0:
            raise _errors.GradkitValueError(odd)
        return (kernel_size, kernel_size)
    raise _errors.GradkitValueError(odd)


class RandomGaussianBlur(BaseImageAugmentation):
    """``RandomGaussianBlur(factor=1.0, kernel_size=3, sigma=1.0, value_range=(0, 255),
    data_format=None, seed=None)``: in training, each image blurred with probability drawn from
    ``factor`` (a number ``f`` in [0, 1]: from ``[0, f]``) by a ``kernel_size`` Gaussian kernel
    (odd sizes), then clipped to ``value_range``. The kernel's two standard deviations are drawn
    once per call from ``sigma`` (in [0, 1], as Keras requires; a number ``s``: from ``[0, s]``)."""

    def __init__(
        self, factor=1.0, kernel_size=3, sigma=1.0, value_range=(0, 255), data_format=None, seed=None, **kwargs
    ):
        super().__init__(data_format=data_format, **kwargs)
        self.factor = set_factor(factor, (0, 1), "RandomGaussianBlur")
        self.kernel_size = _kernel_size(kernel_size)
        self.sigma = set_factor(sigma, (0, 1), "RandomGaussianBlur (its `sigma` argument)")
        self.value_range = value_range
        self.seed = self._draw_seed = seed

    def get_random_transformation(self, data, training=True, seed=None):
        """``{'should_apply_blur': bool (batch,), 'blur_factor': (2,)}`` (unbatched: (1,) and
        (2,)), or None when not training."""
        if not training:
            return None
        batch = _batch_size(self._images(data).shape)
        draws = Draws(self, seed)
        with jax.ensure_compile_time_eval():
            apply = draws.chosen(batch, self.factor)
            sigma = draws.uniform((2,), self.sigma[0], self.sigma[1], self.compute_dtype) + 1e-6
        return {"should_apply_blur": tensor(apply), "blur_factor": tensor(sigma)}

    def transform_images(self, images, transformation=None, training=True):
        images = self._as_compute_dtype(images)
        if not training or transformation is None:
            return images
        return call(
            _blur,
            images,
            convert(transformation["should_apply_blur"]),
            convert(transformation["blur_factor"]),
            kernel_size=tuple(int(k) for k in self.kernel_size),
            data_format=self.data_format,
            value_range=tuple(float(v) for v in self.value_range),
        )


layer_config.BUILTIN.update(
    {
        "RandomSharpness": ("data_format", "factor", "value_range", "seed"),
        "RandomGaussianBlur": ("data_format", "factor", "kernel_size", "sigma", "value_range", "seed"),
    }
)
