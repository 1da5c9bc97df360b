"""``keras.ops.image``'s filters: ``gaussian_blur``, ``sobel_edges`` and ``ssim``, as Keras 3 has
them on TensorFlow (arguments, defaults, ``data_format``, dtypes); differentiable with respect to
float images.

>>> import gradkit.tf as tf
>>> image = tf.ones((1, 5, 5, 1))
>>> round(float(tf.keras.ops.image.ssim(image, image, filter_size=3)[0]), 4)
1.0
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from ... import _array, _image_quality
from ..._convert import call
from ..augmentation_filter_layers import _depthwise_same, _gaussian_1d
from ..spatial_args import standardize_data_format
from .dispatch import cast, keras_op, tensor
from .dtype_rules import float_of, is_float
from .image_geometry_ops import _images, _where

NAMES = "gaussian_blur sobel_edges ssim"


def _format(name, data_format):
    return standardize_data_format(data_format, _where(name))


# -- filters -----------------------------------------------------------------------------------


def _gaussian(images, sigma, *, kernel_size, data_format):
    # Keras' kernel: the outer product of the second size's and the first size's profiles, read
    # as kernel_size[0] rows by kernel_size[1] columns.
    profile = jnp.outer(_gaussian_1d(kernel_size[1], sigma[1]), _gaussian_1d(kernel_size[0], sigma[0]))
    return _depthwise_same(images, jnp.reshape(profile, kernel_size), data_format=data_format)


@keras_op
def gaussian_blur(images, kernel_size=(3, 3), sigma=(1.0, 1.0), data_format=None):
    """``keras.ops.image.gaussian_blur(images, kernel_size=(3, 3), sigma=(1.0, 1.0),
    data_format=None)``: each channel convolved with a Gaussian of ``kernel_size`` taps and
    standard deviations ``sigma`` (height, width), zero-padded to the images' size."""
    images = _images("gaussian_blur", images)
    if not is_float(images.dtype):
        raise _errors.GradkitTypeError(
            f"{_where('gaussian_blur')} got {np.dtype(images.dtype).name} images; it takes floats (Keras on "
            "TensorFlow fails on integers). Cast them first: tf.cast(images, tf.float32)."
        )
    kernel_size = tuple(int(k) for k in kernel_size)
    sigma = tensor(sigma, images.dtype)
    if len(kernel_size) != 2 or min(kernel_size) < 1 or tuple(sigma.shape) != (2,):
        raise _errors.GradkitValueError(
            f"{_where('gaussian_blur')} got kernel_size={kernel_size} and sigma of shape {list(sigma.shape)}: it "
            "takes two positive kernel sizes and two sigmas, (height, width)."
        )
    fmt = _format("gaussian_blur", data_format)
    return call(_gaussian, images, sigma, kernel_size=kernel_size, data_format=fmt)


@keras_op
def sobel_edges(images, data_format=None):
    """``keras.ops.image.sobel_edges(images, data_format=None)``: each channel's vertical and
    horizontal Sobel responses ``[dy, dx]`` in a new last axis (a batch of float images,
    edges mirrored), as ``tf.image.sobel_edges``."""
    fmt = _format("sobel_edges", data_format)
    images = _images("sobel_edges", images, ranks=(4,))
    if fmt == "channels_last":
        return _image_quality.sobel_edges(images)
    edges = _image_quality.sobel_edges(_array.transpose(images, (0, 2, 3, 1)))
    return _array.transpose(edges, (0, 3, 1, 2, 4))


def _ssim(image1, image2, *, max_val, filter_size, filter_sigma, k1, k2):
    # Keras' _ssim: per channel, Gaussian-weighted means over valid windows, the SSIM map averaged.
    x = jnp.arange(filter_size, dtype=image1.dtype) - (filter_size - 1) / 2.0
    profile = jnp.exp(-(x**2) / (2.0 * filter_sigma**2))
    profile = profile / jnp.sum(profile)
    kernel = jnp.outer(profile, profile)[:, :, None, None]

    def mean(v):  # (batch, height, width, channels) -> (batch * channels, h', w')
        planes = jnp.reshape(jnp.transpose(v, (0, 3, 1, 2)), (-1, *v.shape[1:3], 1))
        return jax.lax.conv_general_dilated(
            planes, kernel, (1, 1), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC"), precision="highest"
        )

    c1, c2 = (k1 * max_val) ** 2, (k2 * max_val) ** 2
    mu1, mu2 = mean(image1), mean(image2)
    sigma1 = mean(image1 * image1) - mu1 * mu1
    sigma2 = mean(image2 * image2) - mu2 * mu2
    sigma12 = mean(image1 * image2) - mu1 * mu2
    ssim_map = ((2.0 * mu1 * mu2 + c1) * (2.0 * sigma12 + c2)) / ((mu1 * mu1 + mu2 * mu2 + c1) * (sigma1 + sigma2 + c2))
    per_plane = jnp.mean(ssim_map, axis=(1, 2, 3))
    return jnp.mean(jnp.reshape(per_plane, (image1.shape[0], image1.shape[3])), axis=-1)


@keras_op
def ssim(image1, image2, max_val=1.0, filter_size=11, filter_sigma=1.5, k1=0.01, k2=0.03, data_format=None):
    """``keras.ops.image.ssim(image1, image2, max_val=1.0, filter_size=11, filter_sigma=1.5,
    k1=0.01, k2=0.03, data_format=None)``: the structural similarity of each pair of images
    (a scalar for one pair, shape ``(batch,)`` for a batch), averaged over channels, in
    ``image1``'s dtype (Keras' formula, windows inside the image only)."""
    fmt = _format("ssim", data_format)
    image1, image2 = _images("ssim", image1), _images("ssim", image2)
    original = image1.dtype
    compute = float_of(original)
    image1, image2 = cast(image1, compute), cast(image2, compute)
    if tuple(image1.shape) != tuple(image2.shape):
        raise _errors.GradkitValueError(
            f"{_where('ssim')} got image1 of shape {list(image1.shape)} and image2 of shape {list(image2.shape)}: "
            "they must have the same shape."
        )
    single = image1.ndim == 3
    pair = [_array.expand_dims(v, 0) if single else v for v in (image1, image2)]
    if fmt == "channels_first":
        pair = [_array.transpose(v, (0, 2, 3, 1)) for v in pair]
    if min(pair[0].shape[1:3]) < int(filter_size):
        raise _errors.GradkitValueError(
            f"{_where('ssim')} got images of {pair[0].shape[1]} x {pair[0].shape[2]} pixels and filter_size="
            f"{filter_size}: the filter must fit in the image (Keras' valid windows are empty). Pass a smaller "
            "filter_size."
        )
    static = dict(max_val=float(max_val), filter_size=int(filter_size), filter_sigma=float(filter_sigma))
    out = call(_ssim, *pair, **static, k1=float(k1), k2=float(k2))
    return cast(_array.squeeze(out, 0) if single else out, original)
