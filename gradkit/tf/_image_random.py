"""``tf.image.random_*`` and ``tf.image.stateless_random_*``: augmentations that draw their
parameter from ``tf.random``.

The draws follow ``gradkit.tf.random``'s seed rules: ``seed=`` of a ``random_*`` op is an op
seed (with ``tf.random.set_seed``, the n-th call gives the same numbers every run), the
``stateless_random_*`` ops take a shape-[2] integer seed and give the same result for the
same seed, eagerly and inside ``tf.function``. The numbers differ from TensorFlow's. As in
TensorFlow, a batch draws one brightness, contrast, hue or saturation for all its images and
one flip per image; ``random_crop`` draws one offset per axis. Gradients with respect to the
image are those of the chosen flip, crop or adjustment.

>>> import gradkit.tf as tf
>>> image = tf.reshape(tf.range(4.0), [1, 4, 1])
>>> flipped = tf.image.stateless_random_flip_left_right(image, seed=[1, 2])
>>> flipped.numpy().ravel().tolist() in ([0.0, 1.0, 2.0, 3.0], [3.0, 2.0, 1.0, 0.0])
True
>>> tf.image.stateless_random_crop(image, [1, 2, 1], seed=[3, 4]).shape
(1, 2, 1)
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from . import _random, _random_stateless
from ._convert import call, convert, known_value, static_ints
from ._image_adjust import adjust_brightness, adjust_contrast, adjust_hue, adjust_saturation
from ._image_checks import images_arg

__all__ = [
    "random_brightness",
    "random_contrast",
    "random_crop",
    "random_flip_left_right",
    "random_flip_up_down",
    "random_hue",
    "random_saturation",
    "stateless_random_brightness",
    "stateless_random_contrast",
    "stateless_random_crop",
    "stateless_random_flip_left_right",
    "stateless_random_flip_up_down",
    "stateless_random_hue",
    "stateless_random_saturation",
]


def _uniform(shape, low, high, seed, stateless, dtype=np.float32):
    if stateless and seed is None:
        raise _errors.GradkitValueError(
            "a tf.image.stateless_random_* op got seed=None: it needs a shape-[2] integer seed, as in TensorFlow. "
            "Pass seed=[1, 2] (or a tensor from tf.random.Generator.make_seeds()[:, i])."
        )
    if stateless:
        return _random_stateless.stateless_uniform(shape, seed, minval=low, maxval=high, dtype=dtype)
    return _random.draw_uniform(shape, low, high, dtype, seed)


def _flipped_where(image, draw, *, axis):
    """Each image reversed along ``axis`` where its draw says so: for a batch, where the draw
    rounds to 1 (one draw per image); for one image, where it is below one half."""
    if image.ndim == 4:
        flip = jnp.round(draw).reshape(-1, 1, 1, 1) > 0
    else:
        flip = draw < 0.5
    return jnp.where(flip, jnp.flip(image, axis), image)


def _random_flip(image, seed, axis_from_end, fn, stateless):
    image = images_arg(image, fn)
    shape = [image.shape[0]] if image.ndim == 4 else []
    draw = _uniform(shape, 0.0, 1.0, seed, stateless)
    return call(_flipped_where, image, draw, axis=image.ndim - axis_from_end)


def random_flip_left_right(image, seed=None):
    """``tf.image.random_flip_left_right``: each image mirrored left to right with probability 1/2."""
    return _random_flip(image, seed, 2, "random_flip_left_right", stateless=False)


def random_flip_up_down(image, seed=None):
    """``tf.image.random_flip_up_down``: each image mirrored top to bottom with probability 1/2."""
    return _random_flip(image, seed, 3, "random_flip_up_down", stateless=False)


def stateless_random_flip_left_right(image, seed):
    """``tf.image.stateless_random_flip_left_right``: as ``random_flip_left_right``, fixed by ``seed``."""
    return _random_flip(image, seed, 2, "stateless_random_flip_left_right", stateless=True)


def stateless_random_flip_up_down(image, seed):
    """``tf.image.stateless_random_flip_up_down``: as ``random_flip_up_down``, fixed by ``seed``."""
    return _random_flip(image, seed, 3, "stateless_random_flip_up_down", stateless=True)


def _number(value):
    """``value`` as a float, or None while it is traced (TensorFlow checks it when it runs)."""
    known = known_value(value)
    return None if known is None else float(known)


def _check_max_delta(max_delta, fn, most=None):
    value = _number(max_delta)
    if value is not None and value < 0:
        raise _errors.GradkitValueError(
            f"tf.image.{fn} got max_delta={value}: it must be non-negative, as in TensorFlow."
        )
    if value is not None and most is not None and value > most:
        raise _errors.GradkitValueError(f"tf.image.{fn} got max_delta={value}: it must be <= {most}, as in TensorFlow.")


def _check_bounds(lower, upper, fn):
    low, high = _number(lower), _number(upper)
    if low is not None and high is not None and high <= low:
        raise _errors.GradkitValueError(
            f"tf.image.{fn} got lower={low} and upper={high}: upper must be > lower, as in TensorFlow."
        )
    if low is not None and low < 0:
        raise _errors.GradkitValueError(f"tf.image.{fn} got lower={low}: it must be non-negative, as in TensorFlow.")


def _delta_adjusted(adjust, image, max_delta, seed, fn, stateless, most=None):
    _check_max_delta(max_delta, fn, most)
    return adjust(image, _uniform([], -max_delta, max_delta, seed, stateless))


def _factor_adjusted(adjust, image, lower, upper, seed, fn, stateless):
    _check_bounds(lower, upper, fn)
    return adjust(image, _uniform([], lower, upper, seed, stateless))


def random_brightness(image, max_delta, seed=None):
    """``tf.image.random_brightness``: ``adjust_brightness`` by a delta drawn from [-max_delta, max_delta)."""
    return _delta_adjusted(adjust_brightness, image, max_delta, seed, "random_brightness", False)


def stateless_random_brightness(image, max_delta, seed):
    """``tf.image.stateless_random_brightness``: as ``random_brightness``, fixed by ``seed``."""
    return _delta_adjusted(adjust_brightness, image, max_delta, seed, "stateless_random_brightness", True)


def random_hue(image, max_delta, seed=None):
    """``tf.image.random_hue``: ``adjust_hue`` by a delta drawn from [-max_delta, max_delta) (at most 0.5)."""
    return _delta_adjusted(adjust_hue, image, max_delta, seed, "random_hue", False, most=0.5)


def stateless_random_hue(image, max_delta, seed):
    """``tf.image.stateless_random_hue``: as ``random_hue``, fixed by ``seed``."""
    return _delta_adjusted(adjust_hue, image, max_delta, seed, "stateless_random_hue", True, most=0.5)


def random_contrast(image, lower, upper, seed=None):
    """``tf.image.random_contrast``: ``adjust_contrast`` by a factor drawn from [lower, upper)."""
    return _factor_adjusted(adjust_contrast, image, lower, upper, seed, "random_contrast", False)


def stateless_random_contrast(image, lower, upper, seed):
    """``tf.image.stateless_random_contrast``: as ``random_contrast``, fixed by ``seed``."""
    return _factor_adjusted(adjust_contrast, image, lower, upper, seed, "stateless_random_contrast", True)


def random_saturation(image, lower, upper, seed=None):
    """``tf.image.random_saturation``: ``adjust_saturation`` by a factor drawn from [lower, upper)."""
    return _factor_adjusted(adjust_saturation, image, lower, upper, seed, "random_saturation", False)


def stateless_random_saturation(image, lower, upper, seed=None):
    """``tf.image.stateless_random_saturation``: as ``random_saturation``, fixed by ``seed``."""
    return _factor_adjusted(adjust_saturation, image, lower, upper, seed, "stateless_random_saturation", True)


def _window_at(value, offset, *, size):
    return jax.lax.dynamic_slice(value, tuple(offset[i] for i in range(value.ndim)), size)


def _random_crop(value, size, seed, fn, stateless):
    value = convert(value)
    size = static_ints(size)
    if len(size) != value.ndim or any(s < 0 or s > n for s, n in zip(size, value.shape)):
        raise _errors.InvalidArgumentValueError(
            f"tf.image.{fn} got size={list(size)} for a value of shape {list(value.shape)}: it needs one size "
            "per axis, each between 0 and that axis' length, as TensorFlow requires (value.shape >= size)."
        )
    limits = np.asarray([n - s + 1 for n, s in zip(value.shape, size)], np.int32)
    offset = _uniform([value.ndim], 0, limits, seed, stateless, dtype=np.int32)
    return call(_window_at, value, offset, size=size)


def random_crop(value, size, seed=None, name=None):
    """``tf.image.random_crop``: a window of shape ``size`` at a uniformly drawn offset."""
    return _random_crop(value, size, seed, "random_crop", stateless=False)


def stateless_random_crop(value, size, seed, name=None):
    """``tf.image.stateless_random_crop``: as ``random_crop``, fixed by ``seed``."""
    return _random_crop(value, size, seed, "stateless_random_crop", stateless=True)
