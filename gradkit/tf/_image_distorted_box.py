"""``tf.image.sample_distorted_bounding_box`` and its stateless twin: a random crop window of an
image, as Inception-style augmentation draws it.

TensorFlow's kernel, step for step: each of ``max_attempts`` tries draws an aspect ratio from
``aspect_ratio_range``, a height between the smallest and largest that give an area (relative
to the image's) in ``area_range`` (each rounded to the nearest integer, ties to even; one
pixel more or less where rounding left the area outside), the width from the height and the
ratio, and the window's top left corner; a try is taken when its window has at least 10 pixels
and covers at least ``min_object_covered`` of one of ``bounding_boxes`` (in pixels, each box's
corners truncated). The first taken try is the window; without one, the whole image. The tries
are drawn together and chosen from in the program, so the op runs inside ``tf.function`` too.

It returns ``begin`` (``[y, x, 0]``) and ``size`` (``[height, width, -1]``) for ``tf.slice``,
and the window as a normalised box of shape ``[1, 1, 4]`` for ``tf.image.draw_bounding_boxes``.
The random numbers differ from TensorFlow's; ``seed`` follows ``gradkit.tf.random``'s rules.

>>> import gradkit.tf as tf
>>> begin, size, box = tf.image.stateless_sample_distorted_bounding_box(
...     [60, 80, 3], [[[0.1, 0.2, 0.5, 0.7]]], seed=[1, 2], min_object_covered=0.5)
>>> y, x, _ = begin.numpy().tolist(); h, w, _ = size.numpy().tolist()
>>> 0 <= y and y + h <= 60 and 0 <= x and x + w <= 80 and h * w >= 0.05 * 60 * 80
True
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from . import _assertions
from ._convert import call, convert
from ._image_random import _uniform

__all__ = ["sample_distorted_bounding_box", "stateless_sample_distorted_bounding_box"]

_MIN_PIXELS = 10  # TensorFlow's kMinArea: a window of fewer pixels is never taken
_EPSILON = 1e-7  # TensorFlow's kEps in the largest height's correction


def _crops(draws, height, width, min_area, max_area, min_ratio, max_ratio):
    """Each try's window (top, left, rows, cols) and whether the kernel's GenerateRandomCrop made it."""
    f32 = jnp.float32
    rows_in, cols_in = height.astype(f32), width.astype(f32)
    ratio = draws[:, 0] * (max_ratio - min_ratio) + min_ratio
    least, most = min_area * cols_in * rows_in, max_area * cols_in * rows_in
    low = jnp.round(jnp.sqrt(least / ratio)).astype(jnp.int32)
    high = jnp.round(jnp.sqrt(most / ratio)).astype(jnp.int32)
    # The largest height whose width (height * ratio, rounded) fits the image.
    narrower = ((width.astype(f32) + 0.5 - _EPSILON) / ratio).astype(jnp.int32)
    narrower = jnp.where(jnp.round(narrower * ratio) > width, narrower - 1, narrower)
    high = jnp.where(jnp.round(high * ratio) > width, narrower, high)
    high = jnp.minimum(high, height)
    low = jnp.minimum(low, high)
    rows = low + jnp.floor(draws[:, 1] * (high - low + 1).astype(f32)).astype(jnp.int32)
    rows = jnp.minimum(rows, high)
    cols = jnp.round(rows * ratio).astype(jnp.int32)
    area = (cols * rows).astype(f32)
    rows = jnp.where(area < least, rows + 1, rows)
    cols = jnp.round(rows * ratio).astype(jnp.int32)
    area = (cols * rows).astype(f32)
    rows = jnp.where(area > most, rows - 1, rows)
    cols = jnp.round(rows * ratio).astype(jnp.int32)
    area = (cols * rows).astype(f32)
    made = (
        (area >= least)
        & (area <= most)
        & (cols <= width)
        & (rows <= height)
        & (cols > 0)
        & (rows > 0)
        & (max_area > 0)
        & (min_area <= max_area)
    )
    top = jnp.where(rows < height, jnp.floor(draws[:, 2] * (height - rows).astype(f32)).astype(jnp.int32), 0)
    left = jnp.where(cols < width, jnp.floor(draws[:, 3] * (width - cols).astype(f32)).astype(jnp.int32), 0)
    top = jnp.clip(top, 0, jnp.maximum(height - rows - 1, 0))
    left = jnp.clip(left, 0, jnp.maximum(width - cols - 1, 0))
    return top, left, rows, cols, made


def _window(draws, image_size, boxes, min_covered, *, area_range, ratio_range):
    height, width = image_size[0].astype(jnp.int32), image_size[1].astype(jnp.int32)
    top, left, rows, cols, made = _crops(draws, height, width, *area_range, *ratio_range)
    boxes = boxes.reshape(-1, 4)
    if boxes.shape[0] == 0:  # (allowed by use_image_if_no_bounding_boxes) the image is the box
        corners = jnp.stack([jnp.zeros((), jnp.int32), jnp.zeros((), jnp.int32), height, width])[None]
    else:
        # TensorFlow's pixel corners: each coordinate times the side, truncated.
        sides = jnp.stack([height, width, height, width]).astype(jnp.float32)
        corners = (boxes.astype(jnp.float32) * sides[None, :]).astype(jnp.int32)
    y0, x0, y1, x1 = (corners[:, i][None, :] for i in range(4))
    box_area = ((y1 - y0) * (x1 - x0)).astype(jnp.float32)
    overlap_rows = jnp.minimum(top[:, None] + rows[:, None], y1) - jnp.maximum(top[:, None], y0)
    overlap_cols = jnp.minimum(left[:, None] + cols[:, None], x1) - jnp.maximum(left[:, None], x0)
    overlap = jnp.where((overlap_rows > 0) & (overlap_cols > 0), overlap_rows * overlap_cols, 0).astype(jnp.float32)
    # The fraction of each box the window covers, as TensorFlow divides it: a box of no area is
    # skipped; one given upside down has a negative area and an empty overlap (-0 of it).
    covers = (box_area != 0) & (overlap / jnp.where(box_area != 0, box_area, 1.0) >= min_covered)
    taken = made & (rows * cols >= _MIN_PIXELS) & jnp.any(covers, axis=1)
    first = jnp.argmax(taken)
    found = jnp.any(taken)
    top, left = jnp.where(found, top[first], 0), jnp.where(found, left[first], 0)
    rows, cols = jnp.where(found, rows[first], height), jnp.where(found, cols[first], width)
    begin = jnp.stack([top, left, jnp.zeros((), jnp.int32)]).astype(image_size.dtype)
    size = jnp.stack([rows, cols, -jnp.ones((), jnp.int32)]).astype(image_size.dtype)
    sides = jnp.stack([height, width, height, width]).astype(jnp.float32)
    box = jnp.stack([top, left, top + rows, left + cols]).astype(jnp.float32) / sides
    return begin, size, box.reshape(1, 1, 4)


def _valid_boxes(boxes):
    return jnp.all((boxes >= 0) & (boxes <= 1))


def _pair(value, default, what: str, fn: str) -> tuple:
    value = default if value is None else value
    pair = tuple(float(v) for v in np.asarray(value, np.float32).reshape(-1))
    if len(pair) != 2:
        raise _errors.InvalidArgumentValueError(
            f"tf.image.{fn} got {what}={value!r}; it takes two numbers (low, high), as TensorFlow requires."
        )
    return pair


def _sample(
    image_size,
    bounding_boxes,
    seed,
    min_object_covered,
    aspect_ratio_range,
    area_range,
    max_attempts,
    use_image_if_no_bounding_boxes,
    fn,
    stateless,
):
    size = convert(image_size)
    if tuple(size.shape) != (3,) or not jnp.issubdtype(size.dtype, jnp.integer):
        raise _errors.InvalidArgumentValueError(
            f"tf.image.{fn} got image_size of shape {tuple(size.shape)} and dtype {np.dtype(size.dtype).name}; it "
            "takes the image's [height, width, channels] as 3 integers, as TensorFlow requires (tf.shape(image))."
        )
    boxes = convert(bounding_boxes, "float32")
    if len(boxes.shape) != 3 or boxes.shape[-1] != 4:
        raise _errors.InvalidArgumentValueError(
            f"tf.image.{fn} got bounding_boxes of shape {tuple(boxes.shape)}; TensorFlow takes [batch, N, 4] boxes "
            "(ymin, xmin, ymax, xmax, each in [0, 1])."
        )
    ratios = _pair(aspect_ratio_range, (0.75, 1.33), "aspect_ratio_range", fn)
    areas = _pair(area_range, (0.05, 1.0), "area_range", fn)
    if min(ratios) <= 0:
        raise _errors.InvalidArgumentValueError(
            f"tf.image.{fn} got aspect_ratio_range={list(ratios)}; both must be positive, as TensorFlow requires."
        )
    if max(areas) > 1:
        raise _errors.InvalidArgumentValueError(
            f"tf.image.{fn} got area_range={list(areas)}; TensorFlow requires both at most 1 (a fraction of the image)."
        )
    attempts = 100 if max_attempts is None else int(max_attempts)
    if attempts <= 0:
        raise _errors.InvalidArgumentValueError(
            f"tf.image.{fn} got max_attempts={attempts}; it must be positive, as TensorFlow requires."
        )
    if boxes.shape[0] * boxes.shape[1] == 0 and not use_image_if_no_bounding_boxes:
        raise _errors.InvalidArgumentValueError(
            f"tf.image.{fn}: no bounding boxes provided as input. Pass use_image_if_no_bounding_boxes=True to take the "
            "whole image as the box, as TensorFlow requires."
        )
    covered = convert(min_object_covered, "float32")

    def bad_boxes(*_):
        return _assertions.failed(
            f"tf.image.{fn}: every bounding box coordinate must be in [0, 1] (a fraction of the image's side), as "
            "TensorFlow requires."
        )

    _assertions.require(call(_valid_boxes, boxes), bad_boxes)

    def negative(*_):
        return _assertions.failed(f"tf.image.{fn}: min_object_covered must be non-negative, as TensorFlow requires.")

    _assertions.require(call(jnp.greater_equal, covered, 0.0), negative)
    draws = _uniform([attempts, 4], 0.0, 1.0, seed, stateless)
    return call(
        _window,
        draws,
        size,
        boxes,
        covered,
        area_range=areas,
        ratio_range=ratios,
    )


def sample_distorted_bounding_box(
    image_size,
    bounding_boxes,
    seed=0,
    min_object_covered=0.1,
    aspect_ratio_range=None,
    area_range=None,
    max_attempts=None,
    use_image_if_no_bounding_boxes=None,
    name=None,
):
    """``tf.image.sample_distorted_bounding_box``: ``(begin, size, bboxes)`` of a random window; see the
    module docstring. ``seed=0`` (TensorFlow's default) draws from the global seed alone."""
    return _sample(
        image_size,
        bounding_boxes,
        seed or None,
        min_object_covered,
        aspect_ratio_range,
        area_range,
        max_attempts,
        use_image_if_no_bounding_boxes,
        "sample_distorted_bounding_box",
        stateless=False,
    )


def stateless_sample_distorted_bounding_box(
    image_size,
    bounding_boxes,
    seed,
    min_object_covered=0.1,
    aspect_ratio_range=None,
    area_range=None,
    max_attempts=None,
    use_image_if_no_bounding_boxes=None,
    name=None,
):
    """``tf.image.stateless_sample_distorted_bounding_box``: as ``sample_distorted_bounding_box``, the same
    window for the same shape-[2] ``seed``."""
    return _sample(
        image_size,
        bounding_boxes,
        seed,
        min_object_covered,
        aspect_ratio_range,
        area_range,
        max_attempts,
        use_image_if_no_bounding_boxes,
        "stateless_sample_distorted_bounding_box",
        stateless=True,
    )
