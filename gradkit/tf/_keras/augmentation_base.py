"""What Keras 3's random image-augmentation layers share (its ``BaseImagePreprocessingLayer``):
the call, the random draws, the ``factor`` argument and the image layout.

A layer's call draws the random parameters with ``get_random_transformation(images,
training=True, seed=None)`` and applies them with ``transform_images(images, transformation,
training=True)``; both are public, as in Keras, so a program can draw once and apply the same
transformation to several batches. ``training`` defaults to True in the call, as in Keras: a
layer called by itself augments; inside a model, ``fit`` calls it with ``training=True`` and
``predict``/``evaluate`` with ``training=False``, where it returns its input (cast to the
layer's dtype where Keras casts it; ``RandomCrop`` resizes its central window). Images are one image ``(height, width, channels)`` or a
batch ``(batch, height, width, channels)``; ``data_format="channels_first"`` puts the
channels before the height.

The draws are gradkit's (not TensorFlow's numbers): a layer made with ``seed=s`` draws from a
``SeedGenerator`` of its own, as in Keras, so two layers made with one seed transform alike (an
image and its segmentation mask); without one each call draws from ``gradkit.tf.random``'s global
sequence; inside a ``tf.function`` each call of the compiled program draws anew. ``seed=`` given to ``get_random_transformation`` as an int draws the same
transformation every time, as Keras' stateless seeds do.
"""

from __future__ import annotations

import numbers

import jax
import numpy as np

from gradkit import _errors
from gradkit._tape.tensor import Tensor

from .. import _array, _random
from .._convert import convert, wrap
from . import keras_random
from .base_layer import Layer
from .layer_names import KerasNamedLayer, keras_snake
from .spatial_args import standardize_data_format


class Draws:
    """The random numbers of one ``get_random_transformation`` call: from the layer's sequence
    (``seed=None``), or, for an int ``seed``, the same numbers at every call."""

    def __init__(self, layer, seed):
        if seed is not None and (not isinstance(seed, numbers.Integral) or isinstance(seed, bool)):
            raise _errors.GradkitTypeError(
                f"{type(layer).__name__} '{layer.name}'.get_random_transformation got seed={seed!r}; gradkit.tf takes "
                "None (the layer's own sequence of draws) or a Python int (the same draw at every call)."
            )
        self.op = f"keras_{keras_snake(type(layer).__name__)}"
        self.generator = layer.__dict__.get("_keras_seed_generator")
        self.seed = seed
        self.count = 0

    def _key(self, dtype):
        if self.seed is None:
            if self.generator is None:
                return _random._key(None, self.op, dtype)  # the global random sequence
            # A layer made with seed=s draws from its own generator, as Keras' SeedGenerator:
            # two layers made with one seed transform alike (an image and its mask).
            pair = self.generator.next()
            pair = pair.__gradkit_value__() if isinstance(pair, Tensor) else pair
            return jax.random.fold_in(jax.random.fold_in(jax.random.key(0), pair[0]), pair[1])
        key = jax.random.fold_in(jax.random.key(int(self.seed) & 0xFFFFFFFF), self.count)
        self.count += 1
        return key

    def uniform(self, shape, minval, maxval, dtype="float32"):
        """Uniform draws in ``[minval, maxval)`` (a JAX array, traced inside ``tf.function``)."""
        dtype = np.dtype(dtype)
        with jax.ensure_compile_time_eval():
            return jax.random.uniform(self._key(dtype), tuple(shape), dtype, minval, maxval)

    def chosen(self, batch: int, factor) -> jax.Array:
        """Which images of a batch get the transformation, as Keras draws it: a probability per
        image uniform in ``factor``'s range, then the image is chosen where a second uniform
        draw falls below it (a bool array of shape ``(batch,)``)."""
        probability = self.uniform((batch,), factor[0], factor[1])
        with jax.ensure_compile_time_eval():
            return self.uniform((batch,), 0.0, 1.0) < probability

    def normal(self, shape, dtype="float32"):
        """Standard normal draws (a JAX array, traced inside ``tf.function``)."""
        dtype = np.dtype(dtype)
        with jax.ensure_compile_time_eval():
            return _random.standard_normal(self._key(dtype), tuple(shape), dtype)


def tensor(value) -> Tensor:
    """A JAX array computed from draws, as a tensor (no tape records it)."""
    return Tensor.concrete(value)


def set_factor(factor, bounds, what: str) -> tuple:
    """Keras' ``_set_factor``: a number ``f`` is ``(max(-f, low), f)`` (``f`` within the bounds),
    two numbers are sorted; ValueError otherwise, as in Keras."""
    low, high = bounds
    message = (
        f"{what}: the `factor` argument should be a number (or a list of two numbers) in the range [{low}, {high}], "
        f"as Keras requires. Received: factor={factor!r}"
    )
    if isinstance(factor, (tuple, list)):
        if len(factor) != 2 or not all(isinstance(f, numbers.Real) for f in factor):
            raise _errors.GradkitValueError(message)
        if factor[0] > high or factor[1] < low:
            raise _errors.GradkitValueError(message)
        return tuple(sorted(factor))
    if isinstance(factor, numbers.Real):
        if factor < low or factor > high:
            raise _errors.GradkitValueError(message)
        factor = abs(factor)
        return (max(-factor, low), factor)
    raise _errors.GradkitValueError(message)


def factor_pair(factor, message: str, valid, single, number_types=numbers.Real) -> tuple:
    """Keras' reading of a two-sided factor argument: two numbers, each ``valid``, sorted; or one
    ``valid`` number ``f``, made a pair by ``single(f)``. ValueError ``message`` otherwise, as in Keras."""

    def check(value):
        if not isinstance(value, number_types) or not valid(value):
            raise _errors.GradkitValueError(message)

    if isinstance(factor, (tuple, list)):
        if len(factor) != 2:
            raise _errors.GradkitValueError(message)
        check(factor[0])
        check(factor[1])
        return tuple(sorted(factor))
    if isinstance(factor, number_types):
        check(factor)
        return single(factor)
    raise _errors.GradkitValueError(message)


def check_choice(value, choices, name: str, what: str) -> None:
    """A ``fill_mode`` or ``interpolation`` Keras does not know: NotImplementedError, as Keras raises."""
    if value not in choices:
        raise _errors.GradkitNotImplementedError(
            f"{what} got {name}={value!r}: Keras' augmentation layers take one of {choices}."
        )


class SingleExampleForms:
    """Keras' single-example forms of ``transform_images`` / ``transform_labels`` /
    ``transform_segmentation_masks``: the example as a batch of one, the result unbatched."""

    def transform_single_image(self, image, transformation, training=True):
        """``transform_images`` on one image (rank 3), with a transformation drawn for it."""
        return self._single(self.transform_images, image, transformation, training)

    def transform_single_label(self, label, transformation, training=True):
        """``transform_labels`` on one example's labels."""
        return self._single(self.transform_labels, label, transformation, training)

    def transform_single_segmentation_mask(self, segmentation_mask, transformation, training=True):
        """``transform_segmentation_masks`` on one example's mask."""
        return self._single(self.transform_segmentation_masks, segmentation_mask, transformation, training)

    @staticmethod
    def _single(transform, value, transformation, training):
        batch = _array.expand_dims(convert(value), 0)
        return _array.squeeze(transform(batch, transformation, training=training), 0)


class BaseImageAugmentation(KerasNamedLayer, Layer):
    """The base of the random augmentation layers: see the module docstring."""

    _keras_data_layer = True  # inputs in the compute dtype in a graph (base_layer.py)

    def __init__(self, data_format=None, bounding_box_format=None, **kwargs):
        super().__init__(**kwargs)
        if bounding_box_format is not None:
            raise _errors.GradkitNotImplementedError(
                f"{type(self).__name__} got bounding_box_format={bounding_box_format!r}: gradkit.tf's augmentation "
                "layers transform images only (no bounding boxes, labels or masks). Leave it out."
            )
        self.bounding_box_format = None
        self.data_format = standardize_data_format(data_format, type(self).__name__)
        self.seed = None
        self._draw_seed = None

    @property
    def _draw_seed(self):
        """The ``seed=`` the layer was made with: an int gives it a SeedGenerator of its own."""
        return self.__dict__.get("_keras_draw_seed")

    @_draw_seed.setter
    def _draw_seed(self, seed) -> None:
        self.__dict__["_keras_draw_seed"] = seed
        integer = isinstance(seed, numbers.Integral) and not isinstance(seed, bool)
        keras_random.own_generator(self, int(seed) if integer else None)

    # -- the image layout -------------------------------------------------------------------

    def _what(self) -> str:
        return f"{type(self).__name__} '{self.name}'"

    def _images(self, data):
        """The images of ``data`` (Keras also takes a dict with an ``"images"`` entry), converted."""
        if isinstance(data, dict):
            if "images" not in data:
                raise _errors.GradkitKeyError(
                    f"{self._what()} got a dict without an 'images' entry (keys {sorted(data)}); pass the images."
                )
            data = data["images"]
        images = convert(data)
        if images.ndim not in (3, 4):
            raise _errors.GradkitValueError(
                f"{self._what()} got images of shape {list(images.shape)}: it takes rank 3 (a single image) or "
                "rank 4 (a batch of images), as Keras does."
            )
        return images

    def _height_width(self, shape) -> tuple:
        """The height and width of images of ``shape`` (rank 3 or 4) in the layer's data format."""
        axes = (-2, -1) if self.data_format == "channels_first" else (-3, -2)
        return int(shape[axes[0]]), int(shape[axes[1]])

    def _batch(self, shape) -> int:
        return int(shape[0]) if len(shape) == 4 else 1

    def _as_compute_dtype(self, images):
        """``images`` in the layer's dtype (Keras' cast in ``transform_images``)."""
        images = convert(images)
        if np.dtype(images.dtype) == np.dtype(self.compute_dtype):
            return wrap(images)
        return _array.cast(images, self.compute_dtype)

    # -- the call -----------------------------------------------------------------------------

    def call(self, inputs, training=True):
        if isinstance(inputs, dict):
            raise _errors.GradkitTypeError(
                f"{self._what()} got a dict: gradkit.tf's augmentation layers take images (a tensor), not Keras' "
                "dicts of images, bounding boxes, labels and masks. Pass the images."
            )
        images = self._images(inputs)
        if np.issubdtype(np.dtype(images.dtype), np.floating):  # Keras casts float inputs to the layer's dtype
            images = self._as_compute_dtype(images)
        transformation = self.get_random_transformation(images, training=training)
        if images.ndim == 4:
            return self.transform_images(images, transformation, training=training)
        batch = _array.expand_dims(images, 0)
        return _array.squeeze(self.transform_images(batch, transformation, training=training), 0)

    def get_random_transformation(self, data, training=True, seed=None):
        """The random parameters of one call on ``data`` (None where there are none)."""
        return None

    def transform_images(self, images, transformation, training=True):
        """``images`` transformed by ``transformation`` (from ``get_random_transformation``)."""
        raise NotImplementedError

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)
