"""Keras 3's augmentation layers that apply a random policy of other augmentation layers:
``RandAugment`` (``num_ops`` layers drawn from a fixed list, applied one after another) and
``AugMix`` (``num_chains`` random chains of layers, their results mixed with Dirichlet weights
and blended with the input by a Beta weight).

Each is built, as Keras builds it, from gradkit.tf's own augmentation layers (``RandomShear``,
``RandomTranslation``, ``RandomRotation``, ``RandomBrightness``, ``RandomColorDegeneration``,
``RandomContrast``, ``RandomSharpness``, ``RandomPosterization``, ``Solarization``,
``AutoContrast``, ``Equalization``), each configured from the policy's ``factor``,
``value_range``, ``interpolation``, ``seed`` and ``data_format`` the way Keras configures its
own, and held in Keras' attributes (``layer.random_shear``, ...). Each follows Keras 3 on
TensorFlow: its arguments, defaults, checks and ``get_config``; its transformation
(``get_random_transformation``: Keras' keys and nesting, each part's transformation in that
layer's own form); and its arithmetic: ``transform_images``, ``transform_labels`` (the labels
as they are) and ``transform_segmentation_masks`` (moved by the geometric parts, sampled
``"nearest"``, left as they are by the others). See ``augmentation_base`` for the call,
``training`` and the draws. Bounding boxes are refused, as by every gradkit.tf augmentation
layer. The images' gradients are those of the parts applied (zero through ``Equalization`` and
``RandomPosterization``, which round to whole levels).

An int ``seed=`` given to ``get_random_transformation`` fixes the whole transformation (Keras
3.15 ignores it for ``RandAugment``'s parts and ``AugMix``'s chains). ``AugMix`` picks its
chains' layers in Python, as Keras does: from the layer's own generator when the layer has a
``seed``, else from Python's ``random`` (seeded by ``tf.keras.utils.set_random_seed``); inside
a ``tf.function`` the chains are picked when it traces, and their parameters drawn anew at
each call.

>>> import gradkit.tf as tf
>>> images = tf.constant([[[[0.125], [0.625]]]])  # one image of two pixels, value_range (0, 1)
>>> brighter = {"rgb_delta": [[[[0.25]]]]}
>>> policy = tf.keras.layers.RandAugment(value_range=(0, 1))
>>> transformation = policy.get_random_transformation(images, seed=1)
>>> transformation["layer_idxes"] = [3, 3]  # RandomBrightness, twice
>>> transformation["transforms"]["random_brightness"] = brighter
>>> policy.transform_images(images, transformation)[0, 0, :, 0].numpy().tolist()
[0.625, 1.0]
>>> mix = {"chain_mixing_weights": [1.0], "weight_sample": 0.5,
...        "chain_transforms": [[{"layer_name": "random_brightness", "transformation": brighter}]]}
>>> tf.keras.layers.AugMix(value_range=(0, 1)).transform_images(images, mix)[0, 0, :, 0].numpy().tolist()
[0.25, 0.75]
"""

from __future__ import annotations

import numbers
import random as _py_random

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from .. import _array, _math
from .._convert import call, convert, known_value, wrap
from . import layer_config
from .affine_transform import INTERPOLATIONS, affine_transform
from .augmentation_affine_layers import RandomRotation, RandomTranslation
from .augmentation_base import BaseImageAugmentation, Draws, SingleExampleForms, check_choice, set_factor, tensor
from .augmentation_color_layers import RandomColorDegeneration
from .augmentation_filter_layers import RandomSharpness
from .augmentation_layers import RandomBrightness, RandomContrast
from .augmentation_mixing import _checked_seed, checked_alpha
from .augmentation_pixels import channel_axis, check_channels, checked_value_range, is_float
from .augmentation_shear_perspective import RandomShear
from .augmentation_value_layers import AutoContrast, Equalization, RandomPosterization, Solarization

# The parts that move pixels: the only ones that change segmentation masks.
_GEOMETRIC = ("random_shear", "random_translation", "random_rotation")


def _make_parts(names, *, factor, value_range, interpolation, seed, data_format, kwargs) -> dict:
    """The policy's layers ``names``, configured as Keras configures them: the policy's
    ``factor`` as each one's strength (``RandomPosterization`` keeps ``max(1, int(8 * high))``
    bits at most), its ``interpolation`` for the geometric ones, its ``value_range`` for the
    others, its ``seed`` and ``data_format`` (and any other Keras layer argument) for all."""
    common = dict(data_format=data_format, **kwargs)
    seeded = dict(seed=seed, **common)
    ranged = dict(value_range=value_range, **seeded)
    moving = dict(interpolation=interpolation, **seeded)
    makers = {
        "random_shear": lambda: RandomShear(x_factor=factor, y_factor=factor, **moving),
        "random_translation": lambda: RandomTranslation(height_factor=factor, width_factor=factor, **moving),
        "random_rotation": lambda: RandomRotation(factor=factor, **moving),
        "random_brightness": lambda: RandomBrightness(factor=factor, **ranged),
        "random_color_degeneration": lambda: RandomColorDegeneration(factor=factor, **ranged),
        "random_contrast": lambda: RandomContrast(factor=factor, **ranged),
        "random_sharpness": lambda: RandomSharpness(factor=factor, **ranged),
        "random_posterization": lambda: RandomPosterization(factor=max(1, int(8 * factor[1])), **ranged),
        "solarization": lambda: Solarization(addition_factor=factor, threshold_factor=factor, **ranged),
        "auto_contrast": lambda: AutoContrast(value_range=value_range, **common),
        "equalization": lambda: Equalization(value_range=value_range, **common),
    }
    return {name: makers[name]() for name in names}


# -- the checks of the arguments ---------------------------------------------------------------


def _policy_factor(factor, what: str) -> tuple:
    """Keras' ``factor`` for a policy: a number ``f`` in [0, 1] is ``(0, f)``, two are sorted.
    Keras' ``_set_factor`` lets a pair reach below 0 or above 1, and its ``RandomShear`` then
    refuses it (ValueError): here the policy refuses it, naming itself."""
    factor = set_factor(factor, (0, 1), what)
    if not all(0 <= f <= 1 for f in factor):
        raise _errors.GradkitValueError(
            f"{what}: both numbers of the `factor` argument should be in the range [0, 1] (the strength of its "
            f"layers, which take no negative strength), as Keras requires. Received: factor={factor!r}"
        )
    return factor


def _count(value, name: str, what: str) -> int:
    """A number of draws (``num_ops``, ``num_chains``): a whole number >= 0. Keras fails on
    anything else when it draws: ValueError for None, TensorFlow's InvalidArgumentError for a
    negative number or one that is not an int (a shape TensorFlow refuses)."""
    advice = f"pass a whole number >= 0, e.g. {name}=2."
    if value is None:
        raise _errors.GradkitValueError(f"{what} got {name}=None: {advice}")
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 0:
        raise _errors.GradkitInvalidArgumentError(
            f"{what} got {name}={value!r}: it is the size of a random draw, so {advice}"
        )
    return int(value)


def _chain_depth(value) -> int:
    """A whole number >= 0. Keras raises TypeError for anything else (its ``range``) and takes a
    negative depth as 0; gradkit refuses that too."""
    if not isinstance(value, numbers.Integral) or isinstance(value, bool):
        raise _errors.GradkitTypeError(
            f"AugMix got chain_depth={value!r}: pass the most layers a chain applies, a whole number >= 0 "
            "(Keras' default 3)."
        )
    if value < 0:
        raise _errors.GradkitValueError(
            f"AugMix got chain_depth={value!r}: a chain applies between 0 and chain_depth layers, so pass a whole "
            "number >= 0 (Keras' default 3; Keras takes a negative depth as 0)."
        )
    return int(value)


# -- the draws and the arithmetic (JAX arrays in and out; run as one recorded op each) -----------


class _PolicyDraws(Draws):
    """``Draws`` with what the policies draw: layer indices and AugMix's mixing weights."""

    def integers(self, shape, high: int, dtype=np.int32):
        """Whole numbers in ``[0, high)`` (Keras' ``randint``)."""
        dtype = np.dtype(dtype)
        with jax.ensure_compile_time_eval():
            return jax.random.randint(self._key(dtype), tuple(shape), 0, high, dtype)

    def mixing_weights(self, size: int, alpha, dtype="float32"):
        """Keras' AugMix weights from Gamma(alpha) draws: ``size`` weights summing to 1 (the
        gammas over their sum: Dirichlet(alpha, ..., alpha)) and one weight ``g1 / (g1 + g2)``
        (Beta(alpha, alpha)). The gammas are drawn at once and in log space (one sampler to
        compile; a small ``alpha`` gives no 0 / 0)."""
        dtype = np.dtype(dtype)
        with jax.ensure_compile_time_eval():
            logs = jax.random.loggamma(self._key(dtype), jnp.asarray(alpha, dtype), (size + 2,), dtype)
            weights = jax.nn.softmax(logs[:size]) if size else jnp.zeros((0,), dtype)
            return weights, jax.nn.sigmoid(logs[size] - logs[size + 1])


def _pick(layer_idxes, chosen, images, *, op, position):
    """Keras' selection: ``chosen`` where the ``op``-th index is ``position``, else ``images``."""
    return jnp.where(layer_idxes[op] == position, chosen, images)


def _mix_chains(inputs, weights, weight_sample, *chains):
    """Keras' AugMix mixture: the chains' results summed with ``weights``, blended with the
    inputs by ``weight_sample`` (in the inputs' dtype, Keras' order of operations)."""
    weights = weights.astype(inputs.dtype)
    weight_sample = jnp.reshape(weight_sample, ()).astype(inputs.dtype)
    mixed = jnp.zeros_like(inputs)
    for index, chain in enumerate(chains):
        mixed = mixed + chain * weights[index]
    return weight_sample * inputs + (1 - weight_sample) * mixed


# -- what the two policies share --------------------------------------------------------------


class _Policy(SingleExampleForms, BaseImageAugmentation):
    """The base of ``RandAugment`` and ``AugMix``: their parts, the seed of an int-seeded draw,
    Keras' single-example forms, labels, masks and (refused) bounding boxes."""

    def __init__(self, names, value_range, factor, interpolation, seed, data_format, kwargs):
        super().__init__(data_format=data_format, **kwargs)
        what = type(self).__name__
        checked_value_range(value_range, what)  # the parts check it too; this names the policy
        check_choice(interpolation, INTERPOLATIONS, "interpolation", what)
        self.value_range = value_range
        self.factor = _policy_factor(factor, what)
        self.interpolation = interpolation
        self.seed = self._draw_seed = _checked_seed(seed, what)
        # With a seed, the layer's Python draws (AugMix's chains) follow their own generator.
        self._python_random = _py_random if seed is None else _py_random.Random(seed)
        parts = _make_parts(
            names,
            factor=self.factor,
            value_range=value_range,
            interpolation=interpolation,
            seed=seed,
            data_format=self.data_format,
            kwargs=kwargs,
        )
        for name, part in parts.items():
            setattr(self, name, part)

    @staticmethod
    def _seeds(seed):
        """For an int ``seed``, a generator of the fixed seeds of the parts' draws (None
        otherwise: each part draws from its own sequence)."""
        return None if seed is None else _py_random.Random(int(seed))

    def _masks_by(self, name, masks, transformation):
        """Segmentation masks through the part ``name``, as Keras' parts take them: the geometric
        ones move them with their transformation, sampled ``"nearest"`` so that class ids stay
        whole (integer masks stay integers); the others leave them as they are."""
        if name not in _GEOMETRIC or transformation is None:
            return masks
        part = getattr(self, name)
        masks = convert(masks)
        dtype = np.dtype(masks.dtype)
        flat = masks.ndim == 3  # (batch, height, width): one channel, its axis added to sample them
        axis = channel_axis(4, part.data_format)
        if flat:
            masks = _array.expand_dims(masks, axis)
        floats = masks if is_float(dtype) else _array.cast(masks, "float32")  # exact for class ids < 2**24
        moved = affine_transform(
            floats,
            part._matrix(transformation, floats),
            interpolation="nearest",
            fill_mode=part.fill_mode,
            fill_value=part.fill_value,
            data_format=part.data_format,
        )
        if not is_float(dtype):
            moved = _array.cast(moved, dtype)
        return _array.squeeze(moved, axis) if flat else moved

    def _check_masks(self, masks, what: str):
        masks = convert(masks)
        if masks.ndim not in (3, 4):
            raise _errors.GradkitValueError(
                f"{self._what()}.{what} got masks of shape {list(masks.shape)}: it takes a batch of masks, "
                "(batch, height, width, channels) or (batch, height, width); use transform_single_segmentation_mask "
                "for one mask."
            )
        return masks

    def transform_labels(self, labels, transformation, training=True):
        """The labels as they are: the policy's layers do not change what an image shows."""
        return wrap(convert(labels))

    def transform_bounding_boxes(self, bounding_boxes, transformation, training=True):
        """Not implemented: gradkit.tf's augmentation layers take no bounding boxes."""
        raise _errors.GradkitNotImplementedError(
            f"{self._what()}.transform_bounding_boxes: gradkit.tf's augmentation layers transform no bounding boxes "
            "(they take no bounding_box_format). Transform the images, labels or segmentation masks."
        )


# -- RandAugment -------------------------------------------------------------------------------


class RandAugment(_Policy):
    """``RandAugment(value_range=(0, 255), num_ops=2, factor=0.5, interpolation='bilinear',
    seed=None, data_format=None)``: in training, ``num_ops`` layers drawn (with repeats) from
    ``RandomShear``, ``RandomTranslation``, ``RandomRotation``, ``RandomBrightness``,
    ``RandomColorDegeneration``, ``RandomContrast``, ``RandomSharpness``,
    ``RandomPosterization``, ``Solarization``, ``AutoContrast`` and ``Equalization`` (that
    order, Keras' ``_AUGMENT_LAYERS``), applied one after the other, the same layers for the
    whole batch (their parameters drawn per image). ``factor`` (a number ``f`` in [0, 1]:
    ``(0, f)``; two numbers in [0, 1]) is each layer's strength. Images take 1 or 3 channels, as
    in Keras (which runs every layer, ``RandomColorDegeneration`` among them, at each call). The
    output is in the layer's dtype, in training or not, as in Keras.

    ``layer_idxes`` index that fixed order, whatever the order of the ``transforms`` dict (Keras
    3.15 indexes the dict's order, so a dict rebuilt with sorted keys, as ``tf.function``
    returns one, selects other layers there)."""

    _AUGMENT_LAYERS = [
        "random_shear",
        "random_translation",
        "random_rotation",
        "random_brightness",
        "random_color_degeneration",
        "random_contrast",
        "random_sharpness",
        "random_posterization",
        "solarization",
        "auto_contrast",
        "equalization",
    ]

    def __init__(
        self,
        value_range=(0, 255),
        num_ops=2,
        factor=0.5,
        interpolation="bilinear",
        seed=None,
        data_format=None,
        **kwargs,
    ):
        super().__init__(self._AUGMENT_LAYERS, value_range, factor, interpolation, seed, data_format, kwargs)
        self.num_ops = _count(num_ops, "num_ops", "RandAugment")

    def get_random_transformation(self, data, training=True, seed=None):
        """``{'transforms': {name: that layer's transformation, ...} (each of the 11 layers, in
        Keras' order; None for AutoContrast and Equalization), 'layer_idxes': int32 (num_ops,)}``:
        the index, into that order, of each layer applied. None when not training."""
        if not training:
            return None
        images = self._images(data)
        draws = _PolicyDraws(self, seed)  # checks the seed
        layer_idxes = draws.integers((self.num_ops,), len(self._AUGMENT_LAYERS))
        seeds = self._seeds(seed)
        transforms = {
            name: getattr(self, name).get_random_transformation(
                images, training=training, seed=None if seeds is None else seeds.getrandbits(32)
            )
            for name in self._AUGMENT_LAYERS
        }
        return {"transforms": transforms, "layer_idxes": tensor(layer_idxes)}

    def _layer_idxes(self, transformation, what: str):
        """The transformation's ``layer_idxes`` (at least ``num_ops`` of them) and, where they are
        known (not traced inside ``tf.function``), their values."""
        layer_idxes = convert(transformation["layer_idxes"])
        if layer_idxes.ndim != 1 or int(layer_idxes.shape[0]) < self.num_ops:
            raise _errors.GradkitValueError(
                f"{self._what()}.{what} got layer_idxes of shape {list(layer_idxes.shape)}: it applies num_ops="
                f"{self.num_ops} layers, so pass one index per op, shape [{self.num_ops}] (as get_random_transformation "
                "draws them)."
            )
        return layer_idxes, known_value(layer_idxes)

    def _apply(self, values, transformation, transform, what: str):
        """``values`` through the drawn layers: ``transform(name, values, that layer's
        transformation)`` for each op. Known indices apply their layers only (Keras' selection
        gives the same values); traced ones, as Keras, apply every layer and select."""
        layer_idxes, known = self._layer_idxes(transformation, what)
        transforms = transformation["transforms"]
        names = self._AUGMENT_LAYERS
        for op in range(self.num_ops):
            if known is not None:
                position = int(known[op])
                if 0 <= position < len(names):  # an index matching no layer applies none, as in Keras
                    values = transform(names[position], values, self._part_transformation(transforms, names[position]))
                continue
            for position, name in enumerate(names):
                chosen = transform(name, values, self._part_transformation(transforms, name))
                if chosen is not values:
                    values = call(_pick, layer_idxes, chosen, values, op=op, position=position)
        return values

    def _part_transformation(self, transforms, name):
        if name not in transforms:
            raise _errors.GradkitKeyError(
                f"{self._what()} got transforms without a {name!r} entry (keys {sorted(transforms)}): pass the "
                "transformation get_random_transformation draws, which holds one entry per layer."
            )
        return transforms[name]

    def transform_images(self, images, transformation, training=True):
        images = self._as_compute_dtype(images)
        if not training or transformation is None:
            return images
        check_channels(images, self.data_format, (1, 3), self._what())

        def transform(name, values, part_transformation):
            return getattr(self, name).transform_images(values, part_transformation)

        return self._as_compute_dtype(self._apply(images, transformation, transform, "transform_images"))

    def transform_segmentation_masks(self, segmentation_masks, transformation, training=True):
        """Masks (a batch, with or without a channel axis) moved by the drawn geometric layers
        (sampled ``"nearest"``), in their own dtype; the other layers leave them."""
        masks = self._check_masks(segmentation_masks, "transform_segmentation_masks")
        if not training or transformation is None:
            return wrap(masks)
        return wrap(self._apply(masks, transformation, self._masks_by, "transform_segmentation_masks"))


# -- AugMix ------------------------------------------------------------------------------------

AUGMENT_LAYERS_ALL = [
    "random_shear",
    "random_translation",
    "random_rotation",
    "random_posterization",
    "solarization",
    "auto_contrast",
    "equalization",
    "random_brightness",
    "random_color_degeneration",
    "random_contrast",
    "random_sharpness",
]
AUGMENT_LAYERS = AUGMENT_LAYERS_ALL[:7]


class AugMix(_Policy):
    """``AugMix(value_range=(0, 255), num_chains=3, chain_depth=3, factor=0.3, alpha=1.0,
    all_ops=True, interpolation='bilinear', seed=None, data_format=None)``: in training, the
    images go through ``num_chains`` chains, each of 0 to ``chain_depth`` layers (each step picks
    one of the layers or none, evenly), the same chains for the whole batch (the layers'
    parameters drawn per image). The chains' results are summed with weights drawn from
    Dirichlet(alpha, ...), blended with the images by a weight ``w`` drawn from Beta(alpha,
    alpha) (``w * images + (1 - w) * chains``) and clipped to ``value_range``. The layers:
    ``RandomShear``, ``RandomTranslation``, ``RandomRotation``, ``RandomPosterization``,
    ``Solarization``, ``AutoContrast``, ``Equalization``, and with ``all_ops`` also
    ``RandomBrightness``, ``RandomColorDegeneration``, ``RandomContrast`` and
    ``RandomSharpness``; ``factor`` (a number ``f`` in [0, 1]: ``(0, f)``) is their strength.
    The output is in the layer's dtype, in training or not, as in Keras."""

    def __init__(
        self,
        value_range=(0, 255),
        num_chains=3,
        chain_depth=3,
        factor=0.3,
        alpha=1.0,
        all_ops=True,
        interpolation="bilinear",
        seed=None,
        data_format=None,
        **kwargs,
    ):
        names = AUGMENT_LAYERS_ALL if all_ops else AUGMENT_LAYERS
        super().__init__(names, value_range, factor, interpolation, seed, data_format, kwargs)
        self.num_chains = _count(num_chains, "num_chains", "AugMix")
        self.chain_depth = _chain_depth(chain_depth)
        self.alpha = checked_alpha(alpha, "AugMix", "Dirichlet and Beta distributions'", 1.0)
        self.all_ops = all_ops
        self._augment_layers = list(names)

    def get_random_transformation(self, data, training=True, seed=None):
        """``{'chain_mixing_weights': float32 (num_chains,), 'weight_sample': float32 (),
        'chain_transforms': [[{'layer_name': name, 'transformation': that layer's
        transformation}, ...], ...]}`` (one list per chain, of 0 to chain_depth steps), or None
        when not training."""
        if not training:
            return None
        images = self._images(data)
        draws = _PolicyDraws(self, seed)  # checks the seed
        chain_mixing_weights, weight_sample = draws.mixing_weights(self.num_chains, self.alpha)
        seeds = self._seeds(seed)
        choose = (self._python_random if seeds is None else seeds).choice
        chain_transforms = []
        for _ in range(self.num_chains):
            steps = []
            for _ in range(self.chain_depth):
                name = choose(self._augment_layers + [None])
                if name is None:
                    continue
                part_seed = None if seeds is None else seeds.getrandbits(32)
                part = getattr(self, name).get_random_transformation(images, seed=part_seed)
                steps.append({"layer_name": name, "transformation": part})
            chain_transforms.append(steps)
        return {
            "chain_mixing_weights": tensor(chain_mixing_weights),
            "weight_sample": tensor(weight_sample),
            "chain_transforms": chain_transforms,
        }

    def _chains(self, values, transformation, transform, what: str):
        """``values`` mixed with their chains' results (each step ``transform(name, values,
        that step's transformation)``), Keras' arithmetic, before any clipping."""
        weights = convert(transformation["chain_mixing_weights"])
        chains = transformation["chain_transforms"]
        if weights.ndim != 1 or int(weights.shape[0]) < len(chains):
            raise _errors.GradkitValueError(
                f"{self._what()}.{what} got chain_mixing_weights of shape {list(weights.shape)} for {len(chains)} "
                "chains: pass one weight per chain (the transformation get_random_transformation draws)."
            )
        weight_sample = convert(transformation["weight_sample"])
        if int(np.prod(weight_sample.shape)) != 1:
            raise _errors.GradkitValueError(
                f"{self._what()}.{what} got weight_sample of shape {list(weight_sample.shape)}: pass one number, the "
                "weight of the images against their chains."
            )
        results = []
        for steps in chains:
            chained = values
            for step in steps:
                name = step["layer_name"]
                if name not in self._augment_layers:
                    raise _errors.GradkitValueError(
                        f"{self._what()}.{what} got a chain step with layer_name={name!r}: this AugMix (all_ops="
                        f"{self.all_ops!r}) applies one of {self._augment_layers}."
                    )
                chained = transform(name, chained, step["transformation"])
            results.append(chained)
        return call(_mix_chains, values, weights, weight_sample, *results)

    def transform_images(self, images, transformation, training=True):
        images = self._as_compute_dtype(images)
        if not training or transformation is None:
            return images

        def transform(name, values, part_transformation):
            return getattr(self, name).transform_images(values, part_transformation)

        mixed = self._chains(images, transformation, transform, "transform_images")
        # Keras 3.15 clips to value_range as given, so a reversed one, (255, 0), sets every pixel
        # to 255; its parts, and gradkit here, sort it.
        low, high = sorted(self.value_range)
        return self._as_compute_dtype(_math.clip_by_value(mixed, low, high))

    def transform_segmentation_masks(self, segmentation_masks, transformation, training=True):
        """Float masks (a batch, with or without a channel axis) mixed as the images (moved by the
        geometric layers of each chain, sampled ``"nearest"``; not clipped), as Keras does."""
        masks = self._check_masks(segmentation_masks, "transform_segmentation_masks")
        if not training or transformation is None:
            return wrap(masks)
        if not is_float(masks.dtype):
            # Keras multiplies them by float weights, which TensorFlow refuses for integers.
            raise _errors.GradkitInvalidArgumentError(
                f"{self._what()}.transform_segmentation_masks got {np.dtype(masks.dtype).name} masks: it mixes them "
                "in proportions, so it takes floats (e.g. tf.cast(masks, tf.float32), or one-hot masks), as Keras does."
            )
        return self._chains(masks, transformation, self._masks_by, "transform_segmentation_masks")


layer_config.BUILTIN.update(
    {
        "RandAugment": ("data_format", "value_range", "num_ops", "factor", "interpolation", "seed"),
        "AugMix": (
            "data_format",
            "value_range",
            "num_chains",
            "chain_depth",
            "factor",
            "alpha",
            "all_ops",
            "interpolation",
            "seed",
        ),
    }
)
