"""``tf.image``'s measures of images: ``total_variation``, ``image_gradients``, ``sobel_edges``,
``psnr``, ``ssim`` and ``ssim_multiscale``.

Each computes what TensorFlow's Python code computes, as one recorded op: PSNR and SSIM
convert both images to float32 in [0, 1] first (``max_val`` with them, so ``max_val=255``
fits uint8 images); SSIM filters with TensorFlow's ``filter_size`` Gaussian window (``VALID``,
so the images must be at least that large), averages the map over rows, columns and
channels, and MS-SSIM downsamples by 2 (mirroring an odd last row or column) between scales.
Gradients are exact, with respect to both images and ``max_val``.

>>> import gradkit.tf as tf
>>> x = tf.reshape(tf.range(9.0), [3, 3, 1])
>>> float(tf.image.total_variation(x))
24.0
>>> round(float(tf.image.psnr(x / 8, x / 8 * 0.9, max_val=1.0)), 3)
24.508
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from ._convert import call, convert, known_value
from ._image_checks import at_least_3d, images_arg
from ._image_dtype import converted
from ._math import _tf_abs

__all__ = ["image_gradients", "psnr", "sobel_edges", "ssim", "ssim_multiscale", "total_variation"]

_MSSSIM_WEIGHTS = (0.0448, 0.2856, 0.3001, 0.2363, 0.1333)  # TensorFlow's default power_factors
_HIGHEST = jax.lax.Precision.HIGHEST


def _total_variation(images):
    # tf.abs's, whose gradient at 0 is 0 (jnp.abs's is 1), as between equal neighbours.
    down = _tf_abs(images[..., 1:, :, :] - images[..., :-1, :, :])
    across = _tf_abs(images[..., :, 1:, :] - images[..., :, :-1, :])
    axes = (-3, -2, -1)
    return jnp.sum(down, axis=axes, dtype=images.dtype) + jnp.sum(across, axis=axes, dtype=images.dtype)


def total_variation(images, name=None):
    """``tf.image.total_variation``: the sum of absolute differences between neighbouring
    pixels (per image for a batch)."""
    images = images_arg(images, "total_variation")
    if np.dtype(images.dtype).kind not in "if" and images.dtype != jnp.bfloat16:
        raise _errors.InvalidArgumentTypeError(
            f"tf.image.total_variation got a {images.dtype} image; TensorFlow's absolute value takes float and "
            "signed integer images only. Cast it first (tf.cast(images, tf.int32)) or convert it "
            "(tf.image.convert_image_dtype(images, tf.float32))."
        )
    return call(_total_variation, images)


def _differences(image):
    zeros = jnp.zeros_like(image)
    dy = jnp.concatenate([image[:, 1:] - image[:, :-1], zeros[:, :1]], axis=1)
    dx = jnp.concatenate([image[:, :, 1:] - image[:, :, :-1], zeros[:, :, :1]], axis=2)
    return dy, dx


def image_gradients(image):
    """``tf.image.image_gradients``: ``(dy, dx)``, each pixel's difference with the next one
    down and across (0 on the last row and column)."""
    return tuple(call(_differences, images_arg(image, "image_gradients", ranks=(4,))))


_SOBEL = np.array([[[-1, -2, -1], [0, 0, 0], [1, 2, 1]], [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]]])


def _sobel(image):
    # A bfloat16 image is summed in float32 and rounded once, as TensorFlow's kernel does (float16
    # is summed in float16 there too).
    dtype = image.dtype
    if str(dtype) == "bfloat16":
        return _sobel(image.astype(jnp.float32)).astype(dtype)
    padded = jnp.pad(image, [(0, 0), (1, 1), (1, 1), (0, 0)], mode="reflect")
    height, width = image.shape[1:3]
    edges = []
    for kernel in _SOBEL:
        total = jnp.zeros_like(image)
        for a in range(3):
            for b in range(3):
                if kernel[a, b]:
                    total = total + padded[:, a : a + height, b : b + width] * np.asarray(kernel[a, b], image.dtype)
        edges.append(total)
    return jnp.stack(edges, axis=-1)


def sobel_edges(image):
    """``tf.image.sobel_edges``: each channel's vertical and horizontal Sobel responses, in a new
    last axis of size 2 (edges mirrored, as TensorFlow's REFLECT padding)."""
    image = images_arg(image, "sobel_edges", ranks=(4,), error=_errors.InvalidArgumentValueError)
    if np.dtype(image.dtype).kind != "f" and str(image.dtype) != "bfloat16":
        raise _errors.InvalidArgumentTypeError(
            f"tf.image.sobel_edges got a {image.dtype} image; TensorFlow's depthwise convolution takes float "
            "images. Convert it first (tf.image.convert_image_dtype(image, tf.float32))."
        )
    if min(image.shape[1:3]) < 2:
        # REFLECT padding of 1 needs 2 rows and 2 columns (TensorFlow's MirrorPad refuses fewer).
        raise _errors.InvalidArgumentValueError(
            f"tf.image.sobel_edges got images of {image.shape[1]} x {image.shape[2]} pixels: paddings must be less "
            "than the dimension size: 1, 1 not less than 1 (TensorFlow's error; its edges are mirrored). Pass "
            "images of at least 2 x 2 pixels."
        )
    return call(_sobel, image)


def _pair(img1, img2, fn):
    """Both images converted, with TensorFlow's shape checks: the last three axes equal, the
    leading (batch) axes broadcastable."""
    img1, img2 = at_least_3d(img1, fn), at_least_3d(img2, fn)
    heads_fit = True
    try:
        np.broadcast_shapes(img1.shape[:-3], img2.shape[:-3])
    except ValueError:
        heads_fit = False
    if img1.shape[-3:] != img2.shape[-3:] or not heads_fit:
        raise _errors.GradkitValueError(
            f"tf.image.{fn} got images of shapes {list(img1.shape)} and {list(img2.shape)}: their last three "
            "axes (height, width, channels) must be equal and their batch axes broadcastable, as TensorFlow "
            "requires."
        )
    return img1, img2


def _as_float_images(img1, img2, max_val):
    max_val = converted(max_val.astype(img1.dtype), jnp.float32)
    img1, img2 = converted(img1, jnp.float32), converted(img2, jnp.float32)
    shape = np.broadcast_shapes(img1.shape, img2.shape)
    return jnp.broadcast_to(img1, shape), jnp.broadcast_to(img2, shape), max_val


def _psnr(a, b, max_val):
    a, b, max_val = _as_float_images(a, b, max_val)
    mse = jnp.mean(jnp.square(a - b), axis=(-3, -2, -1))
    return 20 * jnp.log(max_val) / jnp.log(jnp.float32(10)) - np.float32(10 / np.log(10)) * jnp.log(mse)


def psnr(a, b, max_val, name=None):
    """``tf.image.psnr``: the peak signal-to-noise ratio of ``a`` against ``b`` in decibels, per image."""
    a, b = _pair(a, b, "psnr")
    return call(_psnr, a, b, convert(max_val))


def _gaussian_window(size, sigma):
    coords = jnp.arange(size, dtype=jnp.float32) - jnp.float32(size - 1) / 2
    g = jnp.square(coords) * (-0.5 / jnp.square(jnp.float32(sigma)))
    return jax.nn.softmax((g[None, :] + g[:, None]).reshape(-1)).reshape(size, size)


def _filtered(x, window):
    """``x`` ([..., height, width, channels]) averaged over each VALID window, per channel."""
    flat = x.reshape((-1, *x.shape[-3:]))
    channels = x.shape[-1]
    kernel = jnp.tile(window[:, :, None, None], (1, 1, 1, channels))
    y = jax.lax.conv_general_dilated(
        flat,
        kernel,
        (1, 1),
        "VALID",
        dimension_numbers=("NHWC", "HWIO", "NHWC"),
        feature_group_count=channels,
        precision=_HIGHEST,
    )
    return y.reshape((*x.shape[:-3], *y.shape[1:]))


def _ssim_per_channel(x, y, max_val, size, sigma, k1, k2, index_map=False):
    window = _gaussian_window(size, sigma)
    c1, c2 = (k1 * max_val) ** 2, (k2 * max_val) ** 2
    mean_x, mean_y = _filtered(x, window), _filtered(y, window)
    num0 = mean_x * mean_y * 2.0
    den0 = jnp.square(mean_x) + jnp.square(mean_y)
    luminance = (num0 + c1) / (den0 + c1)
    num1 = _filtered(x * y, window) * 2.0
    den1 = _filtered(jnp.square(x) + jnp.square(y), window)
    cs = (num1 - num0 + c2) / (den1 - den0 + c2)
    if index_map:
        return luminance * cs, cs
    return jnp.mean(luminance * cs, axis=(-3, -2)), jnp.mean(cs, axis=(-3, -2))


def _ssim(img1, img2, max_val, *, size, sigma, k1, k2, index_map):
    x, y, max_val = _as_float_images(img1, img2, max_val)
    per_channel, _ = _ssim_per_channel(x, y, max_val, size, sigma, k1, k2, index_map)
    return jnp.mean(per_channel, axis=-1)


def _filter_args(fn, img1, filter_size, filter_sigma, k1, k2, scales=1):
    values = {}
    for what, value in (("filter_size", filter_size), ("filter_sigma", filter_sigma), ("k1", k1), ("k2", k2)):
        known = known_value(value)
        if known is None or known.ndim != 0:
            raise _errors.GradkitValueError(
                f"tf.image.{fn} takes {what} as a Python number known while tracing; got {value!r}."
            )
        values[what] = known.item()
    size = int(values["filter_size"])
    smallest = min(img1.shape[-3:-1])
    for _ in range(scales - 1):  # each scale halves, an odd size padded first (see _halved)
        smallest = (smallest + 1) // 2
    if smallest < size:
        raise _errors.InvalidArgumentValueError(
            f"tf.image.{fn} got images of height x width {img1.shape[-3]} x {img1.shape[-2]}, smaller than "
            f"filter_size={size} at its coarsest scale ({smallest} there); TensorFlow's check fails too. Pass "
            "a smaller filter_size (or, for ssim_multiscale, fewer power_factors)."
        )
    return {"size": size, "sigma": float(values["filter_sigma"]), "k1": float(values["k1"]), "k2": float(values["k2"])}


def ssim(img1, img2, max_val, filter_size=11, filter_sigma=1.5, k1=0.01, k2=0.03, return_index_map=False):
    """``tf.image.ssim``: the structural similarity of ``img1`` and ``img2``, per image (or, with
    ``return_index_map=True``, per window position)."""
    img1, img2 = _pair(img1, img2, "ssim")
    static = _filter_args("ssim", img1, filter_size, filter_sigma, k1, k2)
    return call(_ssim, img1, img2, convert(max_val), **static, index_map=bool(return_index_map))


def _halved(x):
    """One MS-SSIM downsampling: an odd last row or column mirrored, then 2 x 2 averages."""
    flat = x.reshape((-1, *x.shape[-3:]))
    height, width = flat.shape[1:3]
    flat = jnp.pad(flat, [(0, 0), (0, height % 2), (0, width % 2), (0, 0)], mode="symmetric")
    pooled = jax.lax.reduce_window(flat, 0.0, jax.lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4
    return pooled.reshape((*x.shape[:-3], *pooled.shape[1:]))


def _ssim_multiscale(img1, img2, max_val, *, powers, size, sigma, k1, k2):
    x, y, max_val = _as_float_images(img1, img2, max_val)
    contrasts = []
    for scale in range(len(powers)):
        if scale:
            x, y = _halved(x), _halved(y)
        per_channel, cs = _ssim_per_channel(x, y, max_val, size, sigma, k1, k2)
        contrasts.append(jax.nn.relu(cs))
    stacked = jnp.stack(contrasts[:-1] + [jax.nn.relu(per_channel)], axis=-1)
    exponents = jnp.asarray(powers, jnp.float32).reshape((1,) * (stacked.ndim - 1) + (-1,))
    return jnp.mean(jnp.prod(stacked**exponents, axis=-1), axis=-1)


def ssim_multiscale(
    img1, img2, max_val, power_factors=_MSSSIM_WEIGHTS, filter_size=11, filter_sigma=1.5, k1=0.01, k2=0.03
):
    """``tf.image.ssim_multiscale``: MS-SSIM, one scale per power factor, each half the size of
    the one before."""
    img1, img2 = _pair(img1, img2, "ssim_multiscale")
    powers = known_value(power_factors)
    if powers is None or powers.ndim != 1 or powers.size == 0:
        raise _errors.GradkitValueError(
            "tf.image.ssim_multiscale takes power_factors as a non-empty list of Python numbers (one per "
            f"scale), known while tracing; got {power_factors!r}."
        )
    static = _filter_args("ssim_multiscale", img1, filter_size, filter_sigma, k1, k2, scales=powers.size)
    return call(_ssim_multiscale, img1, img2, convert(max_val), powers=tuple(float(p) for p in powers), **static)
