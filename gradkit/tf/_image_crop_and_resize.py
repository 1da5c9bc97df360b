"""``tf.image.crop_and_resize``: boxes of a batch of images, each sampled on a fixed grid.

A box ``[y1, x1, y2, x2]`` in normalized coordinates spans pixel rows ``y1 * (height - 1)`` to
``y2 * (height - 1)`` (``y1 > y2`` flips the crop); its ``crop_height`` rows are sampled evenly
between them (one row: the middle), and likewise its columns. A sample outside the image takes
``extrapolation_value``. The arithmetic is TensorFlow's kernel's, in float32, in its order, so
the values agree to float32 rounding (a sample within rounding of an edge of the image may fall
on the other side of it than in TensorFlow).

Gradients are TensorFlow's: with respect to the image, each sample's weights scatter the
upstream gradient back; with respect to the boxes, the derivative of the bilinear samples with
respect to their coordinates (zero for an extrapolated sample). TensorFlow's kernel of that
gradient computes the samples' coordinates in another order than its forward kernel, and may
put a sample on the other side of a pixel there (the last one of a box ending exactly on the
image's edge, from inside it): gradkit takes the slope at the forward kernel's coordinates. For ``method="nearest"`` the
samples do not move with the boxes between pixel centres; TensorFlow's gradient with respect
to the boxes is then the bilinear one, by design, and so is gradkit's (a custom JVP).

>>> import gradkit.tf as tf
>>> image = tf.reshape(tf.range(16.0), [1, 4, 4, 1])
>>> tf.image.crop_and_resize(image, [[0.0, 0.0, 1.0, 1.0]], [0], [2, 2])[0, :, :, 0].numpy().tolist()
[[0.0, 3.0], [12.0, 15.0]]
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from . import _assertions
from ._convert import call, convert, known_value

__all__ = ["crop_and_resize"]

_METHODS = ("bilinear", "nearest")


def _sample_points(start, end, size: int, length: int):
    """Where a box's ``size`` samples fall along an axis of ``length`` pixels: ``[boxes, size]``,
    as TensorFlow's kernel computes them (its float32 expressions, in its order)."""
    if size > 1:
        # The barrier keeps XLA from folding ``* (length - 1) / (size - 1)`` into one constant
        # factor, and (the divisor a full array, not a broadcast scalar) from dividing as a
        # multiplication by the rounded reciprocal: both round differently from TensorFlow's
        # division. A sample TensorFlow puts exactly on a pixel (where the bilinear slope
        # changes) would move off it, and the boxes' gradient with it; the last sample of a box
        # reaching the image's edge would fall outside it (the extrapolation value, not the pixel).
        extent = (end - start) * (length - 1)
        extent, steps = jax.lax.optimization_barrier((extent, jnp.full(extent.shape, size - 1, jnp.float32)))
        scale = extent / steps
        return start[:, None] * (length - 1) + jnp.arange(size, dtype=jnp.float32)[None, :] * scale[:, None]
    return (0.5 * (start + end) * (length - 1))[:, None]


def _grid(image, boxes, crop_height: int, crop_width: int):
    """The samples' coordinates and where they fall inside the image."""
    height, width = image.shape[1], image.shape[2]
    in_y = _sample_points(boxes[:, 0], boxes[:, 2], crop_height, height)
    in_x = _sample_points(boxes[:, 1], boxes[:, 3], crop_width, width)
    inside = ((in_y >= 0) & (in_y <= height - 1))[:, :, None] & ((in_x >= 0) & (in_x <= width - 1))[:, None, :]
    return in_y, in_x, inside[..., None]


def _pixels(image, box_indices, rows, cols):
    """``image[box, row, col, :]`` for every box and sample: ``[boxes, crop_height, crop_width, depth]``
    (indices clipped into the image: an outside sample's value is replaced afterwards)."""
    rows = jnp.clip(rows, 0, image.shape[1] - 1)
    cols = jnp.clip(cols, 0, image.shape[2] - 1)
    return image[box_indices[:, None, None], rows[:, :, None], cols[:, None, :]]


def _bilinear(image, boxes, box_indices, crop_height, crop_width, extrapolation_value):
    in_y, in_x, inside = _grid(image, boxes, crop_height, crop_width)
    top, left = jnp.floor(in_y), jnp.floor(in_x)
    bottom, right = jnp.ceil(in_y), jnp.ceil(in_x)
    y_lerp = (in_y - top)[:, :, None, None]
    x_lerp = (in_x - left)[:, None, :, None]
    top, bottom, left, right = (a.astype(jnp.int32) for a in (top, bottom, left, right))
    top_left = _pixels(image, box_indices, top, left)
    top_right = _pixels(image, box_indices, top, right)
    bottom_left = _pixels(image, box_indices, bottom, left)
    bottom_right = _pixels(image, box_indices, bottom, right)
    upper = top_left + (top_right - top_left) * x_lerp
    lower = bottom_left + (bottom_right - bottom_left) * x_lerp
    return jnp.where(inside, upper + (lower - upper) * y_lerp, jnp.float32(extrapolation_value))


@partial(jax.custom_jvp, nondiff_argnums=(3, 4, 5))
def _nearest(image, boxes, box_indices, crop_height, crop_width, extrapolation_value):
    in_y, in_x, inside = _grid(image, boxes, crop_height, crop_width)
    # roundf, as TensorFlow's kernel: halves away from zero (the samples used are not negative).
    rows, cols = (jnp.floor(a + 0.5).astype(jnp.int32) for a in (in_y, in_x))
    return jnp.where(inside, _pixels(image, box_indices, rows, cols), jnp.float32(extrapolation_value))


@_nearest.defjvp
def _nearest_jvp(crop_height, crop_width, extrapolation_value, primals, tangents):
    image, boxes, box_indices = primals
    d_image, d_boxes, _ = tangents
    out = _nearest(image, boxes, box_indices, crop_height, crop_width, extrapolation_value)
    along_image = _nearest(d_image, boxes, box_indices, crop_height, crop_width, 0.0)
    _, along_boxes = jax.jvp(
        lambda b: _bilinear(image, b, box_indices, crop_height, crop_width, extrapolation_value), (boxes,), (d_boxes,)
    )
    return out, along_image + along_boxes


def _crop_and_resize(image, boxes, box_indices, *, crop_height, crop_width, method, extrapolation_value):
    image = image.astype(jnp.float32)
    boxes = boxes.astype(jnp.float32)
    box_indices = box_indices.astype(jnp.int32)
    sample = _bilinear if method == "bilinear" else _nearest
    return sample(image, boxes, box_indices, crop_height, crop_width, extrapolation_value)


def _crop_size(crop_size) -> tuple[int, int]:
    known = known_value(crop_size)
    if known is None:
        raise _errors.GradkitValueError(
            "tf.image.crop_and_resize got a traced crop_size inside tf.function: gradkit needs it known "
            "while tracing, since it fixes the result's shape. Pass a list of two Python ints."
        )
    if known.dtype.kind not in "iu" or known.shape != (2,):
        raise _errors.InvalidArgumentValueError(
            f"[gradkit] tf.image.crop_and_resize got crop_size={known.tolist()!r}: it must be two integers "
            "[crop_height, crop_width], as in TensorFlow."
        )
    height, width = (int(v) for v in known)
    if height <= 0 or width <= 0:
        raise _errors.InvalidArgumentValueError(
            f"[gradkit] tf.image.crop_and_resize got crop_size=[{height}, {width}]: crop dimensions must be "
            "positive, as in TensorFlow."
        )
    return height, width


def _out_of_range(values, batch: int) -> _errors.GradkitOutOfRangeError:
    bad = values[(values < 0) | (values >= batch)]
    return _errors.GradkitOutOfRangeError(
        f"tf.image.crop_and_resize got box_indices {bad.tolist()[:5]} for a batch of {batch} images: "
        f"box_index has values outside [0, batch_size), as TensorFlow refuses. Each box names the image "
        f"it crops, from 0 to {batch - 1}."
    )


def crop_and_resize(image, boxes, box_indices, crop_size, method="bilinear", extrapolation_value=0.0, name=None):
    """``tf.image.crop_and_resize``: ``[num_boxes, crop_height, crop_width, depth]`` float32 crops."""
    image, boxes, box_indices = convert(image), convert(boxes), convert(box_indices)
    if method not in _METHODS:
        raise _errors.InvalidArgumentValueError(
            f"[gradkit] tf.image.crop_and_resize got method={method!r}: TensorFlow allows 'bilinear' and "
            "'nearest'. For other resampling, crop with tf.image.crop_to_bounding_box and resize with "
            "tf.image.resize."
        )
    if image.ndim != 4 or np.dtype(image.dtype).kind not in "iuf":
        raise _errors.InvalidArgumentValueError(
            f"[gradkit] tf.image.crop_and_resize got an image of shape {list(image.shape)} and dtype "
            f"{image.dtype}: it takes a 4-D [batch, height, width, depth] image of integers or floats, as "
            "TensorFlow does (tf.expand_dims(image, 0) makes a batch of one image)."
        )
    if image.shape[1] <= 0 or image.shape[2] <= 0:
        raise _errors.InvalidArgumentValueError(
            f"[gradkit] tf.image.crop_and_resize got an image of shape {list(image.shape)}: its height and "
            "width must be positive, as in TensorFlow."
        )
    if boxes.ndim != 2 or boxes.shape[1] != 4:
        raise _errors.InvalidArgumentValueError(
            f"[gradkit] tf.image.crop_and_resize got boxes of shape {list(boxes.shape)}: they must be "
            "[num_boxes, 4], each [y1, x1, y2, x2] in normalized coordinates, as in TensorFlow."
        )
    if box_indices.ndim != 1 or box_indices.shape[0] != boxes.shape[0]:
        raise _errors.InvalidArgumentValueError(
            f"[gradkit] tf.image.crop_and_resize got box_indices of shape {list(box_indices.shape)} for "
            f"{boxes.shape[0]} boxes: box_index has incompatible shape; give one image index per box."
        )
    crop_height, crop_width = _crop_size(crop_size)
    batch = image.shape[0]
    indices = box_indices if np.dtype(box_indices.dtype).kind in "iu" else call(_as_int32, box_indices)
    _assertions.require(call(_in_batch, indices, batch=batch), lambda ok, values: _out_of_range(values, batch), indices)
    return call(
        _crop_and_resize,
        image,
        boxes,
        indices,
        crop_height=crop_height,
        crop_width=crop_width,
        method=method,
        extrapolation_value=float(extrapolation_value),
    )


def _as_int32(x):
    return x.astype(jnp.int32)


def _in_batch(indices, *, batch):
    return (indices >= 0) & (indices < batch)
