"""``tf.image.draw_bounding_boxes``: box outlines painted onto a batch of images.

Each box ``[y_min, x_min, y_max, x_max]`` (fractions of the image) is scaled by ``size - 1`` and
truncated to whole pixels, as TensorFlow's kernel does, and its four one-pixel edges are painted
in the box's color (``colors`` cycled over a batch element's boxes, else TensorFlow's table of
ten). An edge outside the image is left out; an inverted box, or one wholly outside, is not
drawn. On gray images the default boxes are white. TensorFlow defines no gradient for the op, so it cuts every tape's path.

>>> import gradkit.tf as tf
>>> image = tf.zeros([1, 3, 3, 3])
>>> out = tf.image.draw_bounding_boxes(image, [[[0.0, 0.0, 1.0, 1.0]]], [[1.0, 0.0, 0.0]])
>>> out.numpy()[0, :, :, 0].tolist()
[[1.0, 1.0, 1.0], [1.0, 0.0, 1.0], [1.0, 1.0, 1.0]]
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from gradkit import _errors
from gradkit._tape import record

from ._convert import call, convert

__all__ = ["draw_bounding_boxes"]

# TensorFlow's default colors (RGBA), cycled over the boxes.
_TABLE = np.array(
    [
        [1, 1, 0, 1],
        [0, 0, 1, 1],
        [1, 0, 0, 1],
        [0, 1, 0, 1],
        [0.5, 0, 0.5, 1],
        [0.5, 0.5, 0, 1],
        [0.5, 0, 0, 1],
        [0, 0, 0.5, 1],
        [0, 1, 1, 1],
        [1, 0, 1, 1],
    ],
    np.float32,
)


def _draw(images, boxes, colors):
    _, height, width, depth = images.shape
    rows = jnp.arange(height)[None, :, None]
    cols = jnp.arange(width)[None, None, :]
    canvas = images
    for k in range(boxes.shape[1]):  # in order: a later box paints over an earlier one
        box = boxes[:, k, :].astype(jnp.float32)
        # C++'s float-to-int64 conversion: toward zero.
        top = jnp.trunc(box[:, 0] * (height - 1)).astype(jnp.int32)[:, None, None]
        left = jnp.trunc(box[:, 1] * (width - 1)).astype(jnp.int32)[:, None, None]
        bottom = jnp.trunc(box[:, 2] * (height - 1)).astype(jnp.int32)[:, None, None]
        right = jnp.trunc(box[:, 3] * (width - 1)).astype(jnp.int32)[:, None, None]
        drawn = (top <= bottom) & (left <= right) & (top < height) & (bottom >= 0) & (left < width) & (right >= 0)
        in_cols = (cols >= jnp.maximum(left, 0)) & (cols <= jnp.minimum(right, width - 1))
        in_rows = (rows >= jnp.maximum(top, 0)) & (rows <= jnp.minimum(bottom, height - 1))
        edges = (
            ((rows == top) & in_cols)
            | ((rows == bottom) & in_cols)
            | ((cols == left) & in_rows)
            | ((cols == right) & in_rows)
        )
        color = colors[k % colors.shape[0], :depth].astype(canvas.dtype)[None, None, None, :]
        canvas = jnp.where((drawn & edges)[..., None], color, canvas)
    return canvas


def draw_bounding_boxes(images, boxes, colors, name=None):
    """``tf.image.draw_bounding_boxes(images, boxes, colors)`` (``colors=None``: TensorFlow's table); see the
    module docstring."""
    # A NumPy array or list is converted to float32, as TensorFlow converts it for this kernel.
    given_array = isinstance(images, (np.ndarray, list, tuple))
    images, boxes = convert(images, np.float32 if given_array else None), convert(boxes, np.float32)
    if images.ndim != 4 or images.shape[-1] not in (1, 3, 4):
        raise _errors.InvalidArgumentValueError(
            f"tf.image.draw_bounding_boxes got images of shape {tuple(images.shape)}; it takes a batch of images "
            "[batch, height, width, depth] with depth 1, 3 or 4, as TensorFlow's kernel does."
        )
    if np.dtype(images.dtype) not in (np.dtype("float32"), np.dtype("float16")):
        raise _errors.InvalidArgumentTypeError(
            f"tf.image.draw_bounding_boxes got {images.dtype} images; TensorFlow's kernel takes float32 or float16 "
            "images. Convert them first (tf.image.convert_image_dtype(images, tf.float32))."
        )
    if boxes.ndim != 3 or boxes.shape[-1] != 4 or boxes.shape[0] != images.shape[0]:
        raise _errors.InvalidArgumentValueError(
            f"tf.image.draw_bounding_boxes got boxes of shape {tuple(boxes.shape)} for {images.shape[0]} images; "
            "give [batch, num_boxes, 4] boxes, [y_min, x_min, y_max, x_max] each, one row of boxes per image."
        )
    table = _TABLE.copy() if colors is None else np.asarray(convert(colors), np.float32)
    if colors is None and images.shape[-1] == 1:
        table[:, 0] = 1.0  # TensorFlow draws boxes white on gray images
    if table.ndim != 2 or table.shape[0] == 0 or table.shape[1] < images.shape[-1]:
        raise _errors.InvalidArgumentValueError(
            f"tf.image.draw_bounding_boxes got colors of shape {table.shape} for images of depth "
            f"{images.shape[-1]}: colors must have equal or more channels than the image provided (TensorFlow's "
            "error). Give a [num_colors, channels] table with at least as many channels as the images."
        )
    return call(_draw, images, boxes, jnp.asarray(table))


record.cut_by_design(_draw, "tf.image.draw_bounding_boxes")
