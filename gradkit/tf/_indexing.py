"""Reading parts of a tensor: ``gather_nd``, ``slice``, ``broadcast_to``, ``newaxis``.

>>> import gradkit.tf as tf
>>> x = tf.reshape(tf.range(6.0), [2, 3])
>>> tf.gather_nd(x, [[1, 2], [0, 0]]).numpy().tolist(), tf.slice(x, [0, 1], [-1, 2]).numpy().tolist()
([5.0, 0.0], [[1.0, 2.0], [4.0, 5.0]])
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ._convert import call, convert, static_ints

newaxis = None


def _gather_nd(params, indices, batch_dims):
    if batch_dims:
        return jax.vmap(lambda p, i: _gather_nd(p, i, batch_dims - 1))(params, indices)
    return params[tuple(jnp.moveaxis(indices, -1, 0))]


def gather_nd(params, indices, batch_dims=0, name=None):
    """``params[tuple(index)]`` for each index along ``indices``' last axis."""
    return call(_gather_nd, convert(params), convert(indices), batch_dims=int(batch_dims))


def _slice(x, begin, size):
    limit = tuple(x.shape[i] if s == -1 else b + s for i, (b, s) in enumerate(zip(begin, size)))
    return jax.lax.slice(x, begin, limit)


def slice(input_, begin, size, name=None):  # noqa: A001  (TensorFlow's name)
    """``size[i]`` entries from ``begin[i]`` along each axis (``-1``: to the end)."""
    return call(_slice, convert(input_), begin=static_ints(begin), size=static_ints(size))


def _broadcast_to(x, shape):
    return jnp.broadcast_to(x, shape)


def broadcast_to(input, shape, name=None):  # noqa: A002
    return call(_broadcast_to, convert(input), shape=static_ints(shape))
