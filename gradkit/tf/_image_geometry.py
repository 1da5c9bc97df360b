"""``tf.image``'s geometry: flips, transposition, rotation, crops, pads and patches.

Every op keeps the image's dtype and moves values without changing them, so its gradient
moves the upstream gradient back (zeros where padding was added). Offsets, sizes, ``k`` and
the crop fraction fix the result's shape, so they must be known while a program is traced.

>>> import gradkit.tf as tf
>>> image = tf.reshape(tf.range(6), [2, 3, 1])
>>> tf.image.flip_left_right(image)[:, :, 0].numpy().tolist()
[[2, 1, 0], [5, 4, 3]]
>>> tf.image.pad_to_bounding_box(image, 1, 0, 3, 4)[:, :, 0].numpy().tolist()
[[0, 0, 0, 0], [0, 1, 2, 0], [3, 4, 5, 0]]
"""

from __future__ import annotations

import itertools
import math

import jax
import jax.numpy as jnp

from gradkit import _errors
from gradkit._core import dynamic_index, frames
from gradkit._op_errors import OutOfRangeError, UnimplementedError
from gradkit._tape.tensor import Tensor

from . import _assertions
from ._convert import call, convert, known_value, static_ints
from ._image_checks import concrete_int, images_arg

__all__ = [
    "central_crop",
    "crop_to_bounding_box",
    "extract_patches",
    "flip_left_right",
    "flip_up_down",
    "pad_to_bounding_box",
    "resize_with_crop_or_pad",
    "rot90",
    "transpose",
]


def _flip(image, *, axis):
    return jnp.flip(image, axis)


def _rot90(image, *, k):
    return jnp.rot90(image, k, axes=(image.ndim - 3, image.ndim - 2))


def _rot90_traced(image, k):
    """``_rot90`` by a ``k`` known only when the program runs (a square image: every turn keeps
    its shape)."""
    turns = [lambda im, t=t: _rot90(im, k=t) for t in range(4)]
    return jax.lax.switch(jnp.mod(k, 4).astype(jnp.int32), turns, image)


def _swap_height_width(image):
    return jnp.swapaxes(image, -3, -2)


def _window(image, *, top, left, height, width):
    return image[..., top : top + height, left : left + width, :]


def _padded(image, *, top, left, bottom, right):
    widths = [(0, 0)] * (image.ndim - 3) + [(top, bottom), (left, right), (0, 0)]
    return jnp.pad(image, widths)


def _window_at(image, top, left, *, height, width):
    """``_window`` at offsets known only when the program runs (checked to fit by then)."""
    start = _starts(image, top, left)
    return jax.lax.dynamic_slice(image, start, (*image.shape[:-3], height, width, image.shape[-1]))


def _placed_at(image, top, left, *, height, width):
    """``_padded`` at offsets known only when the program runs (checked to fit by then)."""
    canvas = jnp.zeros((*image.shape[:-3], height, width, image.shape[-1]), image.dtype)
    return jax.lax.dynamic_update_slice(canvas, image, _starts(image, top, left))


def _runtime(top: int, left: int) -> tuple:
    """Known offsets as device scalars, runtime inputs of the program (checked to fit already)."""
    return dynamic_index.starts_array(top), dynamic_index.starts_array(left)


def _starts(image, top, left) -> list:
    # One integer type for every start, as jax requires (a Python 0 is int64 under x64).
    return [jnp.asarray(s, jnp.int32) for s in [0] * (image.ndim - 3) + [top, left, 0]]


def _fits(top, left, *, rows, cols):
    return (top >= 0) & (left >= 0) & (top <= rows) & (left <= cols)


def _offsets(fn: str, offset_height, offset_width):
    """The offsets as Python ints, or (either traced inside ``tf.function``) as int32 tensors: they do
    not change the result's shape, so they may be values of the program, as in TensorFlow."""
    if known_value(offset_height) is not None and known_value(offset_width) is not None:
        top, left = concrete_int(offset_height, fn, "offset_height"), concrete_int(offset_width, fn, "offset_width")
        _non_negative(fn, offset_height=top, offset_width=left)
        return top, left
    return tuple(convert(v, "int32") for v in (offset_height, offset_width))


def _require_fit(fn: str, top, left, rows: int, cols: int, what: str) -> None:
    """Check, when the program runs, that the traced offsets place the box as ``what`` says."""
    ok = call(_fits, top, left, rows=rows, cols=cols)

    def failed(_, top, left):
        return _assertions.failed(
            f"tf.image.{fn}: offsets ({int(top)}, {int(left)}) {what}; TensorFlow requires offsets >= 0 that "
            "keep the box inside."
        )

    _assertions.require(ok, failed, top, left)


def flip_left_right(image):
    """``tf.image.flip_left_right``: the width axis reversed."""
    image = images_arg(image, "flip_left_right")
    return call(_flip, image, axis=image.ndim - 2)


def flip_up_down(image):
    """``tf.image.flip_up_down``: the height axis reversed."""
    image = images_arg(image, "flip_up_down")
    return call(_flip, image, axis=image.ndim - 3)


def transpose(image, name=None):
    """``tf.image.transpose``: height and width swapped."""
    return call(_swap_height_width, images_arg(image, "transpose"))


def rot90(image, k=1, name=None):
    """``tf.image.rot90``: rotated counter-clockwise by ``k`` quarter turns."""
    image = images_arg(image, "rot90")
    height, width = image.shape[-3:-1]
    if known_value(k) is None and height == width:
        k = convert(k)
        if k.ndim != 0 or not jnp.issubdtype(k.dtype, jnp.integer):
            raise _errors.GradkitTypeError(
                f"tf.image.rot90 got k of shape {tuple(k.shape)} and dtype {k.dtype}: it must be an integer scalar, "
                "as in TensorFlow. Pass an int32 scalar."
            )
        return call(_rot90_traced, image, k)
    return call(_rot90, image, k=concrete_int(k, "rot90", "k") % 4)


def _non_negative(fn, **values):
    for what, value in values.items():
        if value < 0:
            raise _errors.GradkitValueError(
                f"tf.image.{fn} got {what}={value}: it must be >= 0, as TensorFlow requires."
            )


def crop_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """``tf.image.crop_to_bounding_box``: the ``target_height x target_width`` window whose top
    left corner is at ``(offset_height, offset_width)``."""
    fn = "crop_to_bounding_box"
    image = images_arg(image, fn)
    height, width = concrete_int(target_height, fn, "target_height"), concrete_int(target_width, fn, "target_width")
    top, left = _offsets(fn, offset_height, offset_width)
    if height <= 0 or width <= 0:
        raise _errors.GradkitValueError(
            f"tf.image.{fn} got a target of {height} x {width}: both sides must be > 0, as TensorFlow requires."
        )
    image_height, image_width = image.shape[-3:-1]
    if isinstance(top, Tensor):
        if height > image_height or width > image_width:
            raise _errors.GradkitValueError(
                f"tf.image.{fn}: a box of {height} x {width} is larger than the {image_height} x {image_width} "
                "image; TensorFlow requires the image to hold it. Pad first (tf.image.pad_to_bounding_box)."
            )
        rows, cols = image_height - height, image_width - width
        _require_fit(fn, top, left, rows, cols, f"put the {height} x {width} box past the image")
        return call(_window_at, image, top, left, height=height, width=width)
    if top + height > image_height or left + width > image_width:
        raise _errors.GradkitValueError(
            f"tf.image.{fn}: the box {height} x {width} at ({top}, {left}) reaches past the "
            f"{image_height} x {image_width} image; TensorFlow requires the image to hold it. "
            "Pad first (tf.image.pad_to_bounding_box) or pass a smaller box."
        )
    if not frames.under_jax_trace():  # eagerly the offsets are inputs: a random crop compiles once
        return call(_window_at, image, *_runtime(top, left), height=height, width=width)
    return call(_window, image, top=top, left=left, height=height, width=width)


def pad_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """``tf.image.pad_to_bounding_box``: the image placed at ``(offset_height, offset_width)``
    in a ``target_height x target_width`` image of zeros."""
    fn = "pad_to_bounding_box"
    image = images_arg(image, fn)
    height, width = concrete_int(target_height, fn, "target_height"), concrete_int(target_width, fn, "target_width")
    top, left = _offsets(fn, offset_height, offset_width)
    image_height, image_width = image.shape[-3:-1]
    if isinstance(top, Tensor):
        if height < image_height or width < image_width:
            raise _errors.GradkitValueError(
                f"tf.image.{fn}: the {image_height} x {image_width} image does not fit in {height} x {width}; "
                "TensorFlow requires the target to hold it. Pass a larger target."
            )
        rows, cols = height - image_height, width - image_width
        _require_fit(fn, top, left, rows, cols, f"put the image past the {height} x {width} target")
        return call(_placed_at, image, top, left, height=height, width=width)
    bottom, right = height - top - image_height, width - left - image_width
    if bottom < 0 or right < 0:
        raise _errors.GradkitValueError(
            f"tf.image.{fn}: the {image_height} x {image_width} image at ({top}, {left}) does not fit in "
            f"{height} x {width}; TensorFlow requires the target to hold it. Pass a larger target, or crop "
            "first (tf.image.crop_to_bounding_box)."
        )
    if not frames.under_jax_trace():  # eagerly the offsets are inputs (see gradkit._core.dynamic_index)
        return call(_placed_at, image, *_runtime(top, left), height=height, width=width)
    return call(_padded, image, top=top, left=left, bottom=bottom, right=right)


def resize_with_crop_or_pad(image, target_height, target_width):
    """``tf.image.resize_with_crop_or_pad``: cropped or padded with zeros, about the centre, to
    ``target_height x target_width``."""
    fn = "resize_with_crop_or_pad"
    image = images_arg(image, fn)
    height, width = (
        concrete_int(v, fn, w) for v, w in ((target_height, "target_height"), (target_width, "target_width"))
    )
    if height <= 0 or width <= 0:
        raise _errors.GradkitValueError(
            f"tf.image.{fn} got a target of {height} x {width}: both sides must be > 0, as TensorFlow requires."
        )
    image_height, image_width = image.shape[-3:-1]
    cropped = crop_to_bounding_box(
        image,
        max(-(height - image_height) // 2, 0),
        max(-(width - image_width) // 2, 0),
        min(height, image_height),
        min(width, image_width),
    )
    return pad_to_bounding_box(
        cropped, max((height - image_height) // 2, 0), max((width - image_width) // 2, 0), height, width
    )


def central_crop(image, central_fraction):
    """``tf.image.central_crop``: the central ``central_fraction`` of the height and of the width."""
    image = images_arg(image, "central_crop")
    fraction = known_value(central_fraction)
    if fraction is None or fraction.ndim != 0:
        raise _errors.GradkitValueError(
            "tf.image.central_crop takes central_fraction as a Python number, known while tracing "
            f"(it fixes the result's shape); got {central_fraction!r}."
        )
    fraction = float(fraction)
    if not 0.0 < fraction <= 1.0:
        raise _errors.GradkitValueError(
            f"tf.image.central_crop got central_fraction={fraction}: it must be within (0, 1], as in TensorFlow."
        )
    if fraction == 1.0:
        return call(_window, image, top=0, left=0, height=image.shape[-3], width=image.shape[-2])
    height, width = image.shape[-3:-1]
    top, left = int((height - height * fraction) / 2), int((width - width * fraction) / 2)
    return call(_window, image, top=top, left=left, height=height - 2 * top, width=width - 2 * left)


def _patches(images, *, sizes, strides, rates, padding):
    """Every window of ``images`` ``[batch, *spatial, depth]`` (any number of spatial axes), each
    flattened into the last axis in spatial-offset order, then depth: TensorFlow's
    ``extract_patches`` (two axes) and ``extract_volume_patches`` (three, rates 1)."""
    batch, spatial, depth = images.shape[0], images.shape[1:-1], images.shape[-1]
    spans = [(k - 1) * r + 1 for k, r in zip(sizes, rates)]
    if padding == "SAME":
        outs = [-(-n // s) for n, s in zip(spatial, strides)]
        totals = [max((o - 1) * s + e - n, 0) for o, s, e, n in zip(outs, strides, spans, spatial)]
        images = jnp.pad(images, [(0, 0), *[(t // 2, t - t // 2) for t in totals], (0, 0)])
    else:
        outs = [max((n - e) // s + 1, 0) for n, e, s in zip(spatial, spans, strides)]
    if 0 in outs:
        return jnp.zeros((batch, *outs, math.prod(sizes) * depth), images.dtype)
    taps = []
    for offsets in itertools.product(*(range(k) for k in sizes)):
        start = (0, *(o * r for o, r in zip(offsets, rates)), 0)
        limit = (batch, *(b + (o - 1) * s + 1 for b, o, s in zip(start[1:], outs, strides)), depth)
        taps.append(jax.lax.slice(images, start, limit, (1, *strides, 1)))
    return jnp.concatenate(taps, axis=-1)


class _UnimplementedValueError(_errors.GradkitValueError, UnimplementedError):
    """A batch or depth window other than 1, which TensorFlow's ExtractImagePatches kernel refuses
    with ``UnimplementedError``."""


class _OutOfRangeValueError(_errors.GradkitValueError, OutOfRangeError):
    """A window size, stride or rate below 1, which TensorFlow's kernel refuses with ``OutOfRangeError``."""


def _window_args(**args):
    """``sizes``, ``strides`` and ``rates`` as (rows, cols) pairs, refused with TensorFlow's classes
    in the order it checks them: any length but 4 (InvalidArgumentError), then a batch or depth
    entry but 1 (UnimplementedError), then rows or cols below 1 (OutOfRangeError)."""
    values = {what: static_ints(value) for what, value in args.items()}
    checks = (
        (lambda v: len(v) != 4, _errors.InvalidArgumentValueError),
        (lambda v: v[0] != 1 or v[3] != 1, _UnimplementedValueError),
        (lambda v: min(v) < 1, _OutOfRangeValueError),
    )
    for refused, error in checks:
        for what, v in values.items():
            if refused(v):
                raise error(
                    f"tf.image.extract_patches got {what}={list(v)}: it takes [1, rows, cols, 1] with positive "
                    "rows and cols, as TensorFlow does."
                )
    return {what: v[1:3] for what, v in values.items()}


def extract_patches(images, sizes, strides, rates, padding, name=None):
    """``tf.image.extract_patches``: every ``sizes`` window of ``images`` (4-D), flattened in
    row, column, channel order into the last axis."""
    images = images_arg(images, "extract_patches", ranks=(4,), error=_errors.InvalidArgumentValueError)
    if padding not in ("SAME", "VALID"):
        raise _errors.InvalidArgumentValueError(
            f"tf.image.extract_patches got padding={padding!r}: TensorFlow takes 'SAME' or 'VALID'."
        )
    args = _window_args(sizes=sizes, strides=strides, rates=rates)
    if padding == "VALID":
        _check_valid_outputs("tf.image.extract_patches", images.shape[1:3], **args)
    return call(_patches, images, **args, padding=padding)


def _check_valid_outputs(fn: str, spatial, *, sizes, strides, rates) -> None:
    """TensorFlow's check of a VALID window's output size, ``(n - span + stride) / stride`` in C's
    integer division (truncating toward zero): negative is refused, so a window that overshoots
    the input by less than a stride gives an empty result, by more an error."""
    for n, k, s, r in zip(spatial, sizes, strides, rates):
        span = (k - 1) * r + 1
        room = n - span + s
        out = -(-room // s) if room < 0 else room // s
        if out < 0:
            raise _errors.InvalidArgumentValueError(
                f"{fn}: Computed output size would be negative: {out} [input_size: {n}, effective_filter_size: "
                f"{span}, stride: {s}] (TensorFlow's error). Use a smaller window, or padding='SAME'."
            )
