"""Coordinate grids and flat indices: ``tf.meshgrid`` and ``tf.unravel_index``.

>>> import gradkit.tf as tf
>>> [g.numpy().tolist() for g in tf.meshgrid([1, 2, 3], [4, 5])]
[[[1, 2, 3], [1, 2, 3]], [[4, 4, 4], [5, 5, 5]]]
>>> tf.unravel_index([5, 7], [3, 4]).numpy().tolist()
[[1, 1], [1, 3]]
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from ._convert import call, convert, convert_like
from ._shape_utils import static_value


def _meshgrid(xs, indexing):
    return jnp.meshgrid(*[x.reshape(-1) for x in xs], indexing=indexing)


def meshgrid(*args, **kwargs):
    """``tf.meshgrid(*args, indexing='xy')``: N-D coordinate grids from N vectors (each argument
    is flattened, as in TensorFlow). ``'xy'`` (the default) swaps the first two output axes, as
    NumPy's; ``'ij'`` keeps the arguments' order. The arguments share one dtype, as TensorFlow
    requires; each grid's gradient sums over the axes it is repeated along."""
    indexing = kwargs.pop("indexing", "xy")
    kwargs.pop("name", None)
    if kwargs:
        raise _errors.GradkitTypeError(
            f"tf.meshgrid got the keyword argument {next(iter(kwargs))!r}; it takes only indexing= and name=."
        )
    if indexing not in ("xy", "ij"):
        raise _errors.GradkitValueError(
            f"tf.meshgrid: indexing must be 'xy' or 'ij', as in TensorFlow; got {indexing!r}."
        )
    if not args:
        return []
    # Each argument is converted on its own, as TensorFlow stacks each: [1, 2] is int32 next to floats.
    xs = [convert(x) for x in args]
    dtypes = sorted({np.dtype(x.dtype).name for x in xs})
    if len(dtypes) > 1:
        raise _errors.GradkitTypeError(
            f"tf.meshgrid got arguments of dtypes {dtypes}; TensorFlow requires one dtype for all of them. "
            "Cast them first (tf.cast), or write Python lists as floats ([1.0, 2.0])."
        )
    return list(call(_meshgrid, xs, indexing=indexing))


def _unravel(indices, dims):
    # TensorFlow's kernel divides and takes the remainder as C++ does (truncating toward zero),
    # so a negative index gives negative coordinates there; jax.lax.div/rem truncate too.
    strides = jnp.concatenate([jnp.flip(jnp.cumprod(jnp.flip(dims[1:]))), jnp.ones((1,), dims.dtype)])
    shape = (dims.shape[0],) + (1,) * indices.ndim
    expanded = jnp.broadcast_to(indices, shape[:1] + indices.shape)
    return jax.lax.rem(jax.lax.div(expanded, strides.reshape(shape)), dims.reshape(shape))


def unravel_index(indices, dims, name=None):
    """``tf.unravel_index``: the coordinates of flat (row-major) ``indices`` in an array of shape
    ``dims``, as a ``[len(dims)] + indices.shape`` tensor of the indices' dtype (int32 or int64).

    ``indices`` is a scalar or a vector; an index at or past ``prod(dims)`` raises, as in
    TensorFlow, and a negative one gives TensorFlow's result (C++ division: ``-1`` in ``[3, 4]``
    is ``[0, -1]``). An integer result: no gradient.
    """
    idx = convert(indices)
    shape = convert_like(idx, dims, what="tf.unravel_index")[1]  # a list takes the indices' dtype, as in TensorFlow
    if not (jnp.issubdtype(idx.dtype, jnp.integer) and idx.dtype == shape.dtype):
        raise _errors.GradkitTypeError(
            f"tf.unravel_index takes integer indices and dims of one dtype (int32 or int64), but got "
            f"{np.dtype(idx.dtype).name} and {np.dtype(shape.dtype).name}."
        )
    if idx.ndim > 1 or shape.ndim != 1:
        raise _errors.GradkitValueError(
            f"tf.unravel_index: indices must be a scalar or a vector and dims a vector, as in TensorFlow, but got "
            f"shapes {tuple(idx.shape)} and {tuple(shape.shape)}."
        )
    dims_value, idx_value = static_value(dims), static_value(indices)
    if dims_value is not None:
        if (dims_value == 0).any():
            raise _errors.GradkitValueError(
                f"tf.unravel_index: dims {dims_value.tolist()} contain a zero, which TensorFlow refuses."
            )
        if idx_value is not None and idx_value.size and (idx_value >= np.prod(dims_value, dtype=np.int64)).any():
            raise _errors.GradkitValueError(
                f"tf.unravel_index: an index in {idx_value.tolist()} is out of bounds for dims {dims_value.tolist()} "
                f"(at most {int(np.prod(dims_value, dtype=np.int64)) - 1}), as TensorFlow requires."
            )
    return call(_unravel, idx, shape)
