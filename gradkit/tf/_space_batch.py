"""Moving blocks of spatial positions into the batch and back: ``tf.space_to_batch``
(``space_to_batch_nd``), ``tf.batch_to_space`` and ``tf.required_space_to_batch_paddings``.

``input`` has shape ``[batch] + spatial + remaining``, with one spatial axis per entry of
``block_shape``. ``space_to_batch`` zero-pads the spatial axes by ``paddings`` and moves each
``block_shape`` block's positions into the batch (batch grows by ``prod(block_shape)``);
``batch_to_space`` is its inverse, then removes ``crops``. These are TensorFlow's layouts (the
block position is the outer part of the new batch index), and each op's gradient is the other,
as TensorFlow's.

>>> import gradkit.tf as tf
>>> x = tf.reshape(tf.range(16.0), [1, 4, 4, 1])
>>> y = tf.space_to_batch(x, [2, 2], [[0, 0], [0, 0]])
>>> y.shape, y[:, 0, 0, 0].numpy().tolist()
((4, 2, 2, 1), [0.0, 1.0, 4.0, 5.0])
>>> bool(tf.reduce_all(tf.batch_to_space(y, [2, 2], [[0, 0], [0, 0]]) == x))
True
"""

from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np

from gradkit import _errors
from gradkit._tape.tensor import Tensor

from ._convert import call, convert, static_ints


def _block_args(x, block_shape, pairs, what: str, arg: str):
    block = static_ints(block_shape)
    rows = np.asarray(pairs.numpy() if isinstance(pairs, Tensor) else pairs, np.int64)
    if rows.size == 0 and not block:
        rows = rows.reshape(0, 2)
    if rows.shape != (len(block), 2):
        raise _errors.GradkitValueError(
            f"{what}: {arg} of shape {rows.shape} for block_shape {list(block)}; TensorFlow requires shape "
            f"[{len(block)}, 2] (one [start, end] row per block axis)."
        )
    if x.ndim < len(block) + 1:
        raise _errors.GradkitValueError(
            f"{what}: an input of shape {tuple(x.shape)} has too few axes for block_shape {list(block)}; TensorFlow "
            f"requires rank >= {len(block) + 1} (a batch axis, then one axis per block entry)."
        )
    if any(b < 1 for b in block):
        raise _errors.GradkitValueError(f"{what}: block_shape {list(block)} must be positive, as TensorFlow requires.")
    pairs = tuple((int(a), int(b)) for a, b in rows)
    if any(p < 0 for row in pairs for p in row):
        raise _errors.InvalidArgumentValueError(f"{what}: {arg} {[list(r) for r in pairs]} must be non-negative.")
    return block, pairs


def _space_to_batch(x, block, paddings):
    m = len(block)
    x = jnp.pad(x, ((0, 0), *paddings, *[(0, 0)] * (x.ndim - 1 - m)))
    batch, spatial, rest = x.shape[0], x.shape[1 : 1 + m], x.shape[1 + m :]
    split = [batch]
    for size, b in zip(spatial, block):
        split += [size // b, b]
    x = x.reshape((*split, *rest))
    # [batch, s1, b1, ..., sm, bm, rest] -> [b1, ..., bm, batch, s1, ..., sm, rest]
    order = [2 + 2 * i for i in range(m)] + [0] + [1 + 2 * i for i in range(m)] + list(range(1 + 2 * m, x.ndim))
    x = jnp.transpose(x, order)
    return x.reshape((batch * math.prod(block), *[s // b for s, b in zip(spatial, block)], *rest))


def space_to_batch_nd(input, block_shape, paddings, name=None):  # noqa: A002  (TensorFlow's argument name)
    """``tf.space_to_batch_nd``: zero-pad the spatial axes, then move each block's positions into the batch."""
    what = "tf.space_to_batch_nd"
    x = convert(input)
    block, pads = _block_args(x, block_shape, paddings, what, "paddings")
    for axis, (size, b, (lo, hi)) in enumerate(zip(x.shape[1:], block, pads)):
        if (size + lo + hi) % b:
            raise _errors.InvalidArgumentValueError(
                f"{what}: spatial axis {axis} padded to {size + lo + hi} is not divisible by its block size {b}, as "
                "TensorFlow requires. tf.required_space_to_batch_paddings computes paddings that make it so."
            )
    return call(_space_to_batch, x, block=block, paddings=pads)


def space_to_batch(input, block_shape, paddings, name=None):  # noqa: A002
    """``tf.space_to_batch``: TensorFlow 2's name for ``tf.space_to_batch_nd``."""
    return space_to_batch_nd(input, block_shape, paddings)


def _batch_to_space(x, block, crops):
    m = len(block)
    batch = x.shape[0] // math.prod(block)
    spatial, rest = x.shape[1 : 1 + m], x.shape[1 + m :]
    x = x.reshape((*block, batch, *spatial, *rest))
    # [b1, ..., bm, batch, s1, ..., sm, rest] -> [batch, s1, b1, ..., sm, bm, rest]
    order = [m]
    for i in range(m):
        order += [m + 1 + i, i]
    x = jnp.transpose(x, order + list(range(1 + 2 * m, x.ndim)))
    x = x.reshape((batch, *[s * b for s, b in zip(spatial, block)], *rest))
    index = (slice(None), *[slice(lo, x.shape[1 + i] - hi) for i, (lo, hi) in enumerate(crops)])
    return x[index]


def batch_to_space(input, block_shape, crops, name=None):  # noqa: A002
    """``tf.batch_to_space`` (TensorFlow 2's ``batch_to_space_nd``): move blocks of the batch back
    into the spatial axes, then remove ``crops``. An int ``block_shape`` means that size on two
    spatial axes, as in TensorFlow."""
    what = "tf.batch_to_space"
    if isinstance(block_shape, int):
        block_shape = [block_shape, block_shape]
    x = convert(input)
    block, crop = _block_args(x, block_shape, crops, what, "crops")
    if x.shape[0] % math.prod(block):
        raise _errors.InvalidArgumentValueError(
            f"{what}: the batch size {x.shape[0]} is not divisible by the product of block_shape {list(block)}, "
            "as TensorFlow requires."
        )
    for axis, (size, b, (lo, hi)) in enumerate(zip(x.shape[1:], block, crop)):
        if size * b - lo - hi < 0:
            raise _errors.InvalidArgumentValueError(
                f"{what}: crops {[lo, hi]} remove more than the {size * b} entries of spatial axis {axis}."
            )
    return call(_batch_to_space, x, block=block, crops=crop)


def required_space_to_batch_paddings(input_shape, block_shape, base_paddings=None, name=None):
    """``tf.required_space_to_batch_paddings``: ``(paddings, crops)``, int32 ``[M, 2]`` tensors such
    that ``space_to_batch(x, block_shape, paddings)`` works (the padded sizes divide by the
    blocks, at least ``base_paddings``) and ``batch_to_space(..., crops)`` undoes the extra end padding."""
    shape, block = np.asarray(static_ints(input_shape)), np.asarray(static_ints(block_shape))
    if shape.shape != block.shape:
        raise _errors.GradkitValueError(
            f"tf.required_space_to_batch_paddings: input_shape {shape.tolist()} and block_shape {block.tolist()} "
            "must have one entry each per block axis."
        )
    base = np.zeros((block.size, 2), np.int64)
    if base_paddings is not None:
        base = np.asarray(base_paddings.numpy() if isinstance(base_paddings, Tensor) else base_paddings, np.int64)
        if base.shape != (block.size, 2):
            raise _errors.GradkitValueError(
                f"tf.required_space_to_batch_paddings: base_paddings of shape {base.shape}; it must be "
                f"[{block.size}, 2]."
            )
    extra = (block - (shape + base[:, 0] + base[:, 1]) % block) % block
    paddings = np.stack([base[:, 0], base[:, 1] + extra], axis=1).reshape(-1, 2)
    crops = np.stack([np.zeros_like(extra), extra], axis=1).reshape(-1, 2)
    return Tensor.concrete(jnp.asarray(paddings, jnp.int32)), Tensor.concrete(jnp.asarray(crops, jnp.int32))
