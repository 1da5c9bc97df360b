"""Keras 3's augmentation layers that mix the images of a batch with one another: ``MixUp``
(each image blended with another one) and ``CutMix`` (a rectangle of another image pasted into
each one), their labels mixed in the same proportions.

Each follows Keras 3 on TensorFlow: its arguments, defaults, checks and ``get_config``, its
random parameters (``get_random_transformation``, in Keras' keys, shapes and dtypes) and its
arithmetic (``transform_images``, ``transform_labels``, ``transform_segmentation_masks``); see
``augmentation_base`` for ``training`` and the draws. Unlike gradkit.tf's other augmentation
layers they take Keras' dicts, ``{"images": ..., "labels": ...}`` (and ``"segmentation_masks"``),
since mixing images without their labels is rarely what a program wants; a dict's other entries
pass through. Gradients with respect to the images (and labels) are JAX's of the same arithmetic.

>>> import gradkit.tf as tf
>>> images = tf.reshape(tf.range(2.0), [2, 1, 1, 1])  # two one-pixel images: 0 and 1
>>> mix = {"mix_weight": [0.75, 0.5], "permutation_order": [1, 0]}
>>> tf.keras.layers.MixUp().transform_images(images, mix)[:, 0, 0, 0].numpy().tolist()
[0.25, 0.5]
>>> labels = tf.constant([[1.0, 0.0], [0.0, 1.0]])
>>> tf.keras.layers.MixUp().transform_labels(labels, mix).numpy().tolist()
[[0.75, 0.25], [0.5, 0.5]]
"""

from __future__ import annotations

import math
import numbers

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from .. import _array
from .._convert import call, convert, known_value, wrap
from . import layer_config
from .augmentation_base import BaseImageAugmentation, Draws, SingleExampleForms, set_factor, tensor
from .augmentation_pixels import channel_axis, inside_rectangles, is_float
from .backend_config import floatx

# Keras draws MixUp's permutation as int64; JAX has 64-bit integers only with jax_enable_x64,
# and asking for int64 without it warns, so the order is int32 there.
_INDEX64 = jax.dtypes.canonicalize_dtype(np.int64)


class _MixingDraws(Draws):
    """``Draws`` with the two kinds of draw mixing needs: Beta weights and a permutation."""

    def beta(self, shape, a, b, dtype="float32"):
        """Beta(a, b) draws (a JAX array, traced inside ``tf.function``)."""
        dtype = np.dtype(dtype)
        with jax.ensure_compile_time_eval():
            return jax.random.beta(self._key(dtype), a, b, tuple(shape), dtype)

    def permutation(self, n: int, dtype):
        """``0 .. n-1`` shuffled (Keras' ``shuffle`` of ``arange(n)``)."""
        dtype = np.dtype(dtype)
        with jax.ensure_compile_time_eval():
            return jax.random.permutation(self._key(dtype), jnp.arange(n, dtype=dtype))


# -- the arithmetic (JAX arrays in and out; run as one recorded op each) ------------------------


def _per_example(weights, ndim: int):
    """One weight per example (any shape holding them: Keras' (batch,) or (batch, 1, 1, 1)),
    shaped ``(batch, 1, ..., 1)`` to broadcast over values of rank ``ndim``."""
    return jnp.reshape(weights, (-1,) + (1,) * (ndim - 1))


def _mix_up(values, weights, order):
    """``w * x + (1 - w) * x[order]``, per example, in ``values``' dtype (Keras' formula)."""
    weights = _per_example(weights, values.ndim).astype(values.dtype)
    return weights * values + (1.0 - weights) * jnp.take(values, order, axis=0)


def _cut_mix(values, masks, order, *, data_format):
    """``x[order]`` where ``masks`` is set, ``x`` elsewhere (Keras' ``where``)."""
    if masks.shape != values.shape:
        # Keras' masks repeat one rectangle over the images' channels; values with another
        # channel count (a segmentation mask, with one channel or none) get that rectangle.
        spatial = jnp.any(masks, axis=channel_axis(4, data_format))
        if values.ndim == 4:
            spatial = jnp.expand_dims(spatial, channel_axis(4, data_format))
        masks = jnp.broadcast_to(spatial, values.shape)
    return jnp.where(masks, jnp.take(values, order, axis=0), values)


# -- what the two layers share --------------------------------------------------------------


def _checked_seed(seed, what: str):
    """Keras' ``SeedGenerator`` check: None or a Python int, else ValueError."""
    if seed is not None and not isinstance(seed, int):
        raise _errors.GradkitValueError(
            f"{what} got seed={seed!r}: the layer's seed must be None or a Python int, as Keras requires "
            f"(e.g. seed=42 or seed=int({seed!r}))."
        )
    return seed


class _BatchMixing(SingleExampleForms, BaseImageAugmentation):
    """The base of ``MixUp`` and ``CutMix``: Keras' call on images or on a dict of images, labels
    and segmentation masks, and the checks of a transformation given back to them."""

    def __init__(self, seed=None, data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.seed = self._draw_seed = _checked_seed(seed, type(self).__name__)

    def call(self, inputs, training=True):
        if isinstance(inputs, dict):
            return self._call_dict(inputs, training)
        images = self._autocast(self._images(inputs))
        transformation = self.get_random_transformation(images, training=training)
        if images.ndim == 3:
            return self.transform_single_image(images, transformation, training=training)
        return self.transform_images(images, transformation, training=training)

    def _call_dict(self, data, training):
        if "bounding_boxes" in data:
            # Keras raises ValueError for boxes when the layer has no bounding_box_format, and a
            # gradkit.tf layer never has one.
            raise _errors.GradkitValueError(
                f"{self._what()} got a dict with a 'bounding_boxes' entry: gradkit.tf's {type(self).__name__} mixes "
                "'images', 'labels' and 'segmentation_masks', not bounding boxes (it takes no bounding_box_format). "
                "Leave the boxes out of the dict."
            )
        self._images(data)  # the 'images' entry is there and has rank 3 or 4
        data = {key: self._autocast(value) for key, value in data.items()}
        single = data["images"].ndim == 3
        transformation = self.get_random_transformation(data, training=training)
        out = dict(data)  # the caller's dict is left as it is; its other entries pass through
        for key, batched, one in (
            ("images", self.transform_images, self.transform_single_image),
            ("labels", self.transform_labels, self.transform_single_label),
            ("segmentation_masks", self.transform_segmentation_masks, self.transform_single_segmentation_mask),
        ):
            if key in data:
                out[key] = (one if single else batched)(data[key], transformation, training=training)
        return out

    def _autocast(self, value):
        """A float tensor in the layer's dtype, as Keras' call casts its float inputs."""
        if hasattr(value, "dtype") and is_float(value.dtype) and np.dtype(value.dtype) != np.dtype(self.compute_dtype):
            return _array.cast(value, self.compute_dtype)
        return value

    def transform_bounding_boxes(self, bounding_boxes, transformation, training=True):
        """Not implemented: gradkit.tf's augmentation layers take no bounding boxes."""
        raise _errors.GradkitNotImplementedError(
            f"{self._what()}.transform_bounding_boxes: gradkit.tf's augmentation layers transform no bounding boxes "
            "(they take no bounding_box_format). Mix images, labels or segmentation masks."
        )

    def compute_output_shape(self, input_shape):
        return input_shape if isinstance(input_shape, dict) else tuple(input_shape)

    # -- checks of a transformation (given back, possibly from elsewhere) ---------------------

    def _order(self, transformation, values, what: str):
        """The transformation's ``permutation_order``, checked against ``values``' batch."""
        order = convert(transformation["permutation_order"])
        batch = int(values.shape[0]) if values.ndim else 0
        if values.ndim == 0 or order.ndim != 1 or int(order.shape[0]) != batch:
            raise _errors.GradkitValueError(
                f"{self._what()}.{what} got {list(values.shape)} values for a permutation_order of shape "
                f"{list(order.shape)}: it mixes the examples along the first axis, so pass values with a batch axis "
                "as long as the transformation's permutation_order (draw the transformation for this batch)."
            )
        if not np.issubdtype(np.dtype(order.dtype), np.integer):
            raise _errors.GradkitTypeError(
                f"{self._what()}.{what} got a permutation_order of dtype {np.dtype(order.dtype).name}: it holds the "
                "index of each example's partner, so pass integers (as get_random_transformation draws them)."
            )
        known = known_value(order)
        if known is not None and known.size and (known.min() < 0 or known.max() >= batch):
            # TensorFlow's gather (Keras' take) raises InvalidArgumentError for such an index.
            raise _errors.GradkitInvalidArgumentError(
                f"{self._what()}.{what} got permutation_order {known.tolist()}: each entry must be in [0, {batch}) for "
                f"a batch of {batch}. Pass the permutation drawn for this batch."
            )
        return order

    def _weights(self, transformation, batch: int, what: str):
        weights = convert(transformation["mix_weight"])
        if int(np.prod(weights.shape)) != batch:
            raise _errors.GradkitValueError(
                f"{self._what()}.{what} got mix_weight of shape {list(weights.shape)} for a batch of {batch}: pass "
                "one weight per example (the transformation drawn for this batch)."
            )
        return weights

    def _mixed_labels(self, values, transformation, what: str):
        """Labels (or masks) blended with their partners' by the transformation's weights."""
        values = convert(values)
        if not is_float(values.dtype):
            # Keras multiplies them by float weights, which TensorFlow refuses for integers.
            raise _errors.GradkitInvalidArgumentError(
                f"{self._what()}.{what} got {np.dtype(values.dtype).name} values: it mixes them in proportions, "
                "so it takes floats (one-hot labels, e.g. tf.one_hot(labels, num_classes)), as Keras does."
            )
        order = self._order(transformation, values, what)
        weights = self._weights(transformation, int(values.shape[0]), what)
        return call(_mix_up, values, weights, order)


# -- MixUp ---------------------------------------------------------------------------------------


def checked_alpha(alpha, layer: str, distributions: str, default: float):
    """A positive finite number: the parameter of the ``distributions`` (e.g. "Beta distribution's")
    the mixing weights of ``layer`` are drawn from. Keras takes anything here and fails when it
    draws (TypeError, ValueError for None) or draws NaN weights (a negative or infinite one)."""
    if alpha is None:
        raise _errors.GradkitValueError(
            f"{layer} got alpha=None: pass the {distributions} parameter, a positive number (Keras' default {default})."
        )
    if not isinstance(alpha, numbers.Real) or isinstance(alpha, bool):
        raise _errors.GradkitTypeError(
            f"{layer} got alpha={alpha!r} ({type(alpha).__name__}): pass a positive number, the {distributions} "
            f"parameter the mixing weights are drawn from (Keras' default {default})."
        )
    if not (alpha > 0 and math.isfinite(alpha)):
        raise _errors.GradkitValueError(
            f"{layer} got alpha={alpha!r}: the {distributions} parameter must be a positive finite number (Keras "
            f"draws NaN weights for a negative one); pass e.g. {default}."
        )
    return alpha


class MixUp(_BatchMixing):
    """``MixUp(alpha=0.2, data_format=None, seed=None)``: in training, each image becomes
    ``w * image + (1 - w) * other``, ``other`` the image a random permutation of the batch
    pairs it with and ``w`` drawn per image from Beta(alpha, alpha); its labels (and
    segmentation masks) are mixed with the same ``w``. Called on a dict ``{"images": ...,
    "labels": ...}`` it returns a dict. Labels are floats (one-hot); images come out in the
    layer's dtype in training and as they came in otherwise, as in Keras."""

    def __init__(self, alpha=0.2, data_format=None, seed=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.alpha = checked_alpha(alpha, "MixUp", "Beta distribution's", 0.2)

    def get_random_transformation(self, data, training=True, seed=None):
        """``{'mix_weight': (batch,) floats, 'permutation_order': (batch,) int64 (int32 where
        JAX has no 64-bit integers)}`` (unbatched: a batch of one); drawn in inference too, as
        in Keras, where it is not applied."""
        batch = self._batch(self._images(data).shape)
        draws = _MixingDraws(self, seed)
        with jax.ensure_compile_time_eval():
            order = draws.permutation(batch, _INDEX64)
            weights = draws.beta((batch,), self.alpha, self.alpha, floatx())  # Keras' draw: floatx, not the layer's
        return {"mix_weight": tensor(weights), "permutation_order": tensor(order)}

    def transform_images(self, images, transformation=None, training=True):
        if not training:
            return wrap(convert(images))
        images = self._as_compute_dtype(images)
        if transformation is None:
            return images
        order = self._order(transformation, images, "transform_images")
        weights = self._weights(transformation, int(images.shape[0]), "transform_images")
        return call(_mix_up, images, weights, order)

    def transform_labels(self, labels, transformation, training=True):
        """Labels (batch, ...) mixed as their images: ``w * y + (1 - w) * y[order]``."""
        if not training or transformation is None:
            return wrap(convert(labels))
        return self._mixed_labels(labels, transformation, "transform_labels")

    def transform_segmentation_masks(self, segmentation_masks, transformation, training=True):
        """Float masks (batch, ...) mixed as their images."""
        if not training or transformation is None:
            return wrap(convert(segmentation_masks))
        return self._mixed_labels(segmentation_masks, transformation, "transform_segmentation_masks")


# -- CutMix --------------------------------------------------------------------------------------


class CutMix(_BatchMixing):
    """``CutMix(factor=1.0, seed=None, data_format=None)``: in training, each image of a batch
    gets a rectangle of the image a random permutation pairs it with. The rectangles' side
    ratio ``sqrt(1 - w)``, ``w`` drawn per image from Beta(a, a), ``a`` drawn per call from
    ``factor`` (a number ``f`` in [0, 1]: from ``[0, f]``); their places are random. Labels
    (and segmentation masks' pixels, as images) are mixed by the area kept. A single image is
    not mixed. Called on a dict ``{"images": ..., "labels": ...}`` it returns a dict. Images
    come out in the layer's dtype, in training or not, as in Keras."""

    def __init__(self, factor=1.0, seed=None, data_format=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.factor = set_factor(factor, (0, 1), "CutMix")

    def get_random_transformation(self, data, training=True, seed=None):
        """``{'permutation_order': int32 (batch,), 'batch_masks': bool, the images' shape,
        'mix_weight': (batch, 1, 1, 1)}`` (the area each image keeps), or None when not
        training or for a single image, as in Keras."""
        if not training:
            return None
        shape = tuple(self._images(data).shape)
        if len(shape) == 3:
            return None
        batch = shape[0]
        height, width = self._height_width(shape)
        dtype = self.compute_dtype
        draws = _MixingDraws(self, seed)
        with jax.ensure_compile_time_eval():
            alpha = draws.uniform((), self.factor[0], self.factor[1], dtype) + 1e-6
            weights = draws.beta((batch,), alpha, alpha, dtype)
            ratio = jnp.sqrt(1.0 - weights)

            def bounds(length):
                extent = (ratio * length).astype(dtype)
                start = draws.uniform((batch,), 0.0, 1.0, dtype) * (length - extent)
                return start, start + extent

            x0, x1 = bounds(width)
            y0, y1 = bounds(height)
            inside = inside_rectangles(x0, x1, y0, y1, height, width, dtype)
            axis = channel_axis(4, self.data_format)
            masks = jnp.repeat(jnp.expand_dims(inside, axis), shape[axis], axis)
            # The area kept, from the rectangle's real-valued sides (Keras' formula).
            kept = 1.0 - (x1 - x0) * (y1 - y0) / (width * height)
            order = draws.permutation(batch, np.int32)
        return {
            "permutation_order": tensor(order),
            "batch_masks": tensor(masks),
            "mix_weight": tensor(jnp.reshape(kept, (batch, 1, 1, 1))),
        }

    def transform_images(self, images, transformation=None, training=True):
        images = self._as_compute_dtype(images)
        if not training or transformation is None:
            return images
        order = self._order(transformation, images, "transform_images")
        masks = convert(transformation["batch_masks"])
        self._check_masks(masks, images)
        return call(_cut_mix, images, masks, order, data_format=self.data_format)

    def _check_masks(self, masks, values):
        """Keras' batch masks, the images' shape; values with another channel count (or none:
        a segmentation mask of rank 3) take their rectangles."""
        shape, wanted = tuple(values.shape), tuple(masks.shape)
        if shape == wanted:
            return
        axis = channel_axis(4, self.data_format)
        spatial = wanted[:axis] + wanted[axis + 1 :]
        if len(wanted) != 4 or (shape[:axis] + shape[axis + 1 :] if len(shape) == 4 else shape) != spatial:
            raise _errors.GradkitValueError(
                f"{self._what()} got values of shape {list(shape)} for batch masks of shape {list(wanted)}: pass "
                "values of the images' batch, height and width (the transformation drawn for these images)."
            )

    def transform_labels(self, labels, transformation, training=True):
        """Labels (batch, ...) mixed by the area each image keeps: ``w * y + (1 - w) * y[order]``."""
        if not training or transformation is None:
            return wrap(convert(labels))
        return self._mixed_labels(labels, transformation, "transform_labels")

    def transform_segmentation_masks(self, segmentation_masks, transformation, training=True):
        """Masks cut and pasted as their images (in the layer's dtype, as Keras does)."""
        return self.transform_images(segmentation_masks, transformation, training)


layer_config.BUILTIN.update(
    {
        "MixUp": ("data_format", "alpha", "seed"),
        "CutMix": ("data_format", "factor", "seed"),
    }
)
