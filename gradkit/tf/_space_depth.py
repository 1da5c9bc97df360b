"""``tf.nn.space_to_depth`` and ``tf.nn.depth_to_space``: moving ``block_size x block_size``
spatial blocks into the channels and back (pure rearrangements, so their gradients are the
inverse rearrangement, as TensorFlow's).

The channel order is TensorFlow's: output channel ``(row * block_size + column) * channels + c``
of each block. ``data_format`` 'NHWC' (the default) or 'NCHW'.

>>> import gradkit.tf as tf
>>> x = tf.reshape(tf.range(4.0), [1, 2, 2, 1])
>>> tf.nn.space_to_depth(x, 2).numpy().ravel().tolist()
[0.0, 1.0, 2.0, 3.0]
>>> tf.nn.depth_to_space(tf.nn.space_to_depth(x, 2), 2).shape
(1, 2, 2, 1)
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from ._convert import call, convert, known_value


def _space_to_depth(x, block, channels_last):
    if not channels_last:
        x = jnp.transpose(x, (0, 2, 3, 1))
    n, h, w, c = x.shape
    x = x.reshape(n, h // block, block, w // block, block, c).transpose(0, 1, 3, 2, 4, 5)
    x = x.reshape(n, h // block, w // block, block * block * c)
    return x if channels_last else jnp.transpose(x, (0, 3, 1, 2))


def _depth_to_space(x, block, channels_last):
    if not channels_last:
        x = jnp.transpose(x, (0, 2, 3, 1))
    n, h, w, c = x.shape
    x = x.reshape(n, h, w, block, block, c // (block * block)).transpose(0, 1, 3, 2, 4, 5)
    x = x.reshape(n, h * block, w * block, c // (block * block))
    return x if channels_last else jnp.transpose(x, (0, 3, 1, 2))


def _arguments(input, block_size, data_format, what):  # noqa: A002
    if data_format not in ("NHWC", "NCHW"):
        raise _errors.GradkitValueError(
            f"{what}: data_format={data_format!r} is not one gradkit.tf takes; use 'NHWC' (the default) or 'NCHW'."
        )
    x = convert(input)
    if len(x.shape) != 4:
        raise _errors.GradkitValueError(
            f"{what} takes a rank-4 input ({data_format}), as TensorFlow does, but got shape {tuple(x.shape)}."
        )
    block = known_value(block_size)
    if block is None or np.ndim(block) != 0 or not np.issubdtype(np.asarray(block).dtype, np.integer):
        raise _errors.GradkitTypeError(
            f"{what}: block_size={block_size!r}; it must be a Python int (gradkit compiles with static shapes)."
        )
    if int(block) < 2:
        raise _errors.InvalidArgumentValueError(f"{what}: block_size={int(block)}; TensorFlow requires at least 2.")
    channels_last = data_format == "NHWC"
    h, w, c = (x.shape[1], x.shape[2], x.shape[3]) if channels_last else (x.shape[2], x.shape[3], x.shape[1])
    return x, int(block), channels_last, (h, w, c)


def space_to_depth(input, block_size, data_format="NHWC", name=None):  # noqa: A002
    """``tf.nn.space_to_depth``: ``[n, h, w, c]`` to ``[n, h / b, w / b, b * b * c]``."""
    what = "tf.nn.space_to_depth"
    x, block, channels_last, (h, w, _) = _arguments(input, block_size, data_format, what)
    if h % block or w % block:
        raise _errors.InvalidArgumentValueError(
            f"{what}: the input's height {h} and width {w} must be divisible by block_size={block}, as TensorFlow "
            "requires."
        )
    return call(_space_to_depth, x, block=block, channels_last=channels_last)


def depth_to_space(input, block_size, data_format="NHWC", name=None):  # noqa: A002
    """``tf.nn.depth_to_space``: ``[n, h, w, b * b * c]`` to ``[n, h * b, w * b, c]``."""
    what = "tf.nn.depth_to_space"
    x, block, channels_last, (_, _, c) = _arguments(input, block_size, data_format, what)
    if c % (block * block):
        raise _errors.InvalidArgumentValueError(
            f"{what}: the input's {c} channels must be divisible by block_size ** 2 = {block * block}, as "
            "TensorFlow requires."
        )
    return call(_depth_to_space, x, block=block, channels_last=channels_last)
