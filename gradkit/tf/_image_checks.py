"""The checks every ``tf.image`` op makes of its image argument, with TensorFlow's rules.

An image is ``[height, width, channels]``, a batch of them ``[batch, height, width,
channels]``; the ops take either and give back the same rank.
"""

from __future__ import annotations

import numpy as np

from gradkit import _errors

from ._convert import convert, known_value


def images_arg(images, fn: str, ranks=(3, 4), error=_errors.GradkitValueError):
    """``images`` converted, its rank checked (3 or 4 unless ``ranks`` says otherwise). ``error``:
    the class of the refusal, ValueError where TensorFlow's Python wrapper checks the rank,
    ``InvalidArgumentValueError`` where only its eager kernel does."""
    images = convert(images)
    if images.ndim not in ranks:
        wanted = " or ".join(str(r) for r in ranks)
        raise error(
            f"tf.image.{fn} got an image of shape {list(images.shape)}: it takes {wanted} dimensions "
            "([height, width, channels], or [batch, height, width, channels]), as TensorFlow does. "
            "Reshape it (tf.expand_dims(image, -1) adds a channel axis)."
        )
    return images


def at_least_3d(images, fn: str, error=_errors.GradkitValueError):
    """``images`` converted, with at least 3 dimensions (the last three one image's); ``error`` as
    for ``images_arg``."""
    images = convert(images)
    if images.ndim < 3:
        raise error(
            f"tf.image.{fn} got a tensor of shape {list(images.shape)}: it takes images of at least 3 "
            "dimensions ([..., height, width, channels]), as TensorFlow does. Add the missing axes "
            "(tf.expand_dims(image, -1) adds a channel axis)."
        )
    return images


def real_dtype(images, fn: str):
    """Refuse booleans and complex numbers, which TensorFlow's image kernels do not take."""
    if np.dtype(images.dtype).kind not in "iuf" and str(images.dtype) != "bfloat16":
        raise _errors.InvalidArgumentTypeError(  # TensorFlow's eager resize kernel: InvalidArgumentError
            f"tf.image.{fn} got a {images.dtype} image; TensorFlow's image ops take integer or float "
            "images. Cast it first (tf.cast(image, tf.float32))."
        )


def concrete_int(value, fn: str, what: str) -> int:
    """A size or offset argument as a Python int: gradkit's shapes are fixed when a program is traced."""
    known = known_value(value)
    if known is None:
        raise _errors.GradkitValueError(
            f"tf.image.{fn} got a traced {what} inside tf.function: gradkit needs it known while tracing, "
            "since it fixes the result's shape. Pass a Python int (or a tf.function argument made static)."
        )
    if known.ndim != 0 or known.dtype.kind not in "iu":
        raise _errors.GradkitTypeError(
            f"tf.image.{fn} got {what}={known.tolist()!r}: it must be an integer scalar, as in TensorFlow. Pass an int."
        )
    return int(known)
