"""``tf.keras.layers.Resizing`` and ``CenterCrop``, as Keras 3 writes them on TensorFlow. Resizing: ``tf.image.resize`` to
``(height, width)`` after an optional centred crop (``crop_to_aspect_ratio``) or padding with
``fill_value`` (``pad_to_aspect_ratio``) to the target's aspect ratio, the crop and pad sizes
computed in float32 as Keras computes them. Float inputs come out in the layer's dtype; integer
inputs are rounded and cast back with saturation, as Keras does. Differentiable with respect to
a float input.

>>> import gradkit.tf as tf
>>> tf.keras.layers.Resizing(2, 2, crop_to_aspect_ratio=True)(tf.ones([1, 4, 8, 3])).shape
(1, 2, 2, 3)
"""

from __future__ import annotations

import numpy as np

from gradkit import _errors

from .. import _array, _image_resize, _math
from .._convert import convert
from .._saturate_cast import saturate_cast
from . import layer_config
from .base_layer import Layer
from .layer_names import KerasNamedLayer
from .spatial_args import standardize_data_format

_INTERPOLATIONS = ("bilinear", "nearest", "lanczos3", "lanczos5", "bicubic", "area")


def _f32_div_int(a: int, b: int) -> int:
    """``int(float32(a) / b)``: Keras' ``tf.cast(tf.cast(a, 'float32') / b, 'int32')``."""
    return int(np.float32(a) / np.float32(b))


class _ToSize:
    """A layer whose images come out ``height x width`` (in their data format)."""

    def compute_output_shape(self, input_shape):
        shape = list(input_shape)
        if self.data_format == "channels_first":
            shape[-2:] = [self.height, self.width]
        else:
            shape[-3:-1] = [self.height, self.width]
        return tuple(shape)


class Resizing(_ToSize, KerasNamedLayer, Layer):
    """``Resizing(height, width, interpolation='bilinear', crop_to_aspect_ratio=False,
    pad_to_aspect_ratio=False, fill_mode='constant', fill_value=0.0, antialias=False, data_format=None)``."""

    _keras_data_layer = True  # inputs in the compute dtype in a graph (base_layer.py)

    def __init__(
        self,
        height,
        width,
        interpolation="bilinear",
        crop_to_aspect_ratio=False,
        pad_to_aspect_ratio=False,
        fill_mode="constant",
        fill_value=0.0,
        antialias=False,
        data_format=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.height, self.width = height, width
        self.interpolation = interpolation
        self.data_format = standardize_data_format(data_format, "Resizing")
        self.crop_to_aspect_ratio, self.pad_to_aspect_ratio = crop_to_aspect_ratio, pad_to_aspect_ratio
        self.fill_mode, self.fill_value = fill_mode, fill_value
        self.antialias = bool(antialias)

    def _check(self, images):
        what = f"Resizing '{self.name}'"
        if self.interpolation not in _INTERPOLATIONS:
            raise _errors.GradkitValueError(
                f"{what} got interpolation={self.interpolation!r}: Keras takes one of {_INTERPOLATIONS}."
            )
        if self.fill_mode != "constant":
            raise _errors.GradkitValueError(
                f"{what} got fill_mode={self.fill_mode!r}: only 'constant' is supported, as in Keras."
            )
        if self.pad_to_aspect_ratio and self.crop_to_aspect_ratio:
            raise _errors.GradkitValueError(
                f"{what}: only one of `pad_to_aspect_ratio` and `crop_to_aspect_ratio` can be True, as in Keras."
            )
        if len(images.shape) not in (3, 4):
            raise _errors.GradkitValueError(
                f"{what} got images of shape {list(images.shape)}: it takes rank 3 (one image) or rank 4 (a batch), "
                "as Keras does."
            )

    def call(self, inputs):
        if isinstance(inputs, dict):
            raise _errors.GradkitTypeError(
                f"Resizing '{self.name}' got a dict: gradkit.tf's Resizing takes images (a tensor), not Keras' "
                "dicts of images, bounding boxes and masks. Pass the images."
            )
        images = convert(inputs)
        self._check(images)
        integer = np.dtype(images.dtype).kind in "iu"
        if not integer:
            images = _array.cast(images, self.compute_dtype)
        rank = len(images.shape)
        if self.data_format == "channels_first":
            images = _array.transpose(images, (0, 2, 3, 1) if rank == 4 else (1, 2, 0))
        if self.crop_to_aspect_ratio:
            images = self._crop(images)
        elif self.pad_to_aspect_ratio:
            images = self._pad(images)
        resized = _image_resize.resize(
            images, (self.height, self.width), method=self.interpolation, antialias=self.antialias
        )
        if self.data_format == "channels_first":
            resized = _array.transpose(resized, (0, 3, 1, 2) if rank == 4 else (2, 0, 1))
        if np.dtype(resized.dtype) == np.dtype(images.dtype):
            return resized
        if integer:
            resized = _math.round(resized)
        return saturate_cast(resized, images.dtype)

    def _crop(self, images):
        height, width = images.shape[-3], images.shape[-2]
        crop_height = max(min(height, _f32_div_int(width * self.height, self.width)), 1)
        crop_width = max(min(width, _f32_div_int(height * self.width, self.height)), 1)
        top, left = int(np.float32(height - crop_height) / 2), int(np.float32(width - crop_width) / 2)
        return images[..., top : top + crop_height, left : left + crop_width, :]

    def _pad(self, images):
        height, width = images.shape[-3], images.shape[-2]
        pad_height = max(height, _f32_div_int(width * self.height, self.width))
        pad_width = max(width, _f32_div_int(height * self.width, self.height))
        top, left = int(np.float32(pad_height - height) / 2), int(np.float32(pad_width - width) / 2)
        # Keras pads each side by the start offset (the image stays centred).
        if top > 0:
            band = _array.fill([*images.shape[:-3], top, width, images.shape[-1]], self.fill_value)
            band = _array.cast(band, images.dtype)
            images = _array.concat([band, images, band], axis=len(images.shape) - 3)
        if left > 0:
            band = _array.fill([*images.shape[:-2], left, images.shape[-1]], self.fill_value)
            band = _array.cast(band, images.dtype)
            images = _array.concat([band, images, band], axis=len(images.shape) - 2)
        return images


class CenterCrop(_ToSize, KerasNamedLayer, Layer):
    """``CenterCrop(height, width, data_format=None)``: the central ``height x width`` window, in the
    layer's dtype; an image smaller than that on either side is cropped to the target's aspect
    ratio and resized (bilinear), as Keras' ``smart_resize``."""

    _keras_data_layer = True  # inputs in the compute dtype in a graph (base_layer.py)

    def __init__(self, height, width, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.height, self.width = height, width
        self.data_format = standardize_data_format(data_format, "CenterCrop")

    def call(self, inputs):
        images = _array.cast(convert(inputs), self.compute_dtype)
        rank = len(images.shape)
        if rank not in (3, 4):
            raise _errors.GradkitValueError(
                f"CenterCrop '{self.name}' got images of shape {list(images.shape)}: it takes rank 3 (one image) or "
                "rank 4 (a batch), as Keras does."
            )
        first = self.data_format == "channels_first"
        if first:
            images = _array.transpose(images, (0, 2, 3, 1) if rank == 4 else (1, 2, 0))
        height, width = images.shape[-3], images.shape[-2]
        if height >= self.height and width >= self.width:
            top, left = (height - self.height) // 2, (width - self.width) // 2
            out = images[..., top : top + self.height, left : left + self.width, :]
        else:
            # Keras' smart_resize, its sizes from Python floats (the shapes are known).
            crop_height = max(min(height, int(float(width * self.height) / self.width)), 1)
            crop_width = max(min(width, int(float(height * self.width) / self.height)), 1)
            top, left = int(float(height - crop_height) / 2), int(float(width - crop_width) / 2)
            cropped = images[..., top : top + crop_height, left : left + crop_width, :]
            out = _image_resize.resize(cropped, (self.height, self.width), method="bilinear")
        if first:
            out = _array.transpose(out, (0, 3, 1, 2) if rank == 4 else (2, 0, 1))
        return out


layer_config.BUILTIN.update(
    {
        "CenterCrop": ("data_format", "height", "width"),
        "Resizing": (
            "data_format",
            "height",
            "width",
            "interpolation",
            "crop_to_aspect_ratio",
            "pad_to_aspect_ratio",
            "fill_mode",
            "fill_value",
            "antialias",
        ),
    }
)
