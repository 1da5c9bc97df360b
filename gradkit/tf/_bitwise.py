"""``tf.bitwise``: bitwise and, or, xor, invert and shifts of integer tensors.

Both operands must have the same integer dtype, as TensorFlow requires; ``right_shift`` is an
arithmetic shift for signed integers, as TensorFlow's. Integers carry no gradient.

>>> import gradkit.tf as tf
>>> tf.bitwise.bitwise_and(tf.constant([12, 10]), tf.constant([10, 6])).numpy().tolist()
[8, 2]
>>> tf.bitwise.right_shift(tf.constant([-8, 8]), 1).numpy().tolist()
[-4, 4]
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from ._array import cast
from ._convert import TENSOR_LIKE, call, convert

__all__ = ["bitwise_and", "bitwise_or", "bitwise_xor", "invert", "left_shift", "right_shift"]


def _integer(x, fn: str):
    x = convert(x)
    if np.dtype(x.dtype).kind not in "iu":
        raise _errors.InvalidArgumentTypeError(
            f"[gradkit] tf.bitwise.{fn} got a {x.dtype} tensor: it takes integers (int8 to int64, uint8 to "
            "uint64), as TensorFlow does. Cast it (tf.cast(x, tf.int32))."
        )
    return x


def _pair(x, y, fn: str):
    # As TensorFlow converts an op's inputs: a value that is not a tensor (a number, a list, a
    # NumPy array) takes the dtype of the tensor beside it.
    x_tensor, y_tensor = (isinstance(v, TENSOR_LIKE) for v in (x, y))
    x, y = _integer(x, fn), _integer(y, fn)
    if np.dtype(x.dtype) != np.dtype(y.dtype) and x_tensor != y_tensor:
        x, y = (x, cast(y, x.dtype)) if x_tensor else (cast(x, y.dtype), y)
    if np.dtype(x.dtype) != np.dtype(y.dtype):
        raise _errors.InvalidArgumentTypeError(
            f"[gradkit] tf.bitwise.{fn} got {x.dtype} and {y.dtype} operands: TensorFlow requires one dtype for "
            "both. Cast one of them (tf.cast(y, x.dtype))."
        )
    return x, y


def _broadcasting(jfn):
    """``jfn`` on operands broadcast to one shape first, as TensorFlow broadcasts (whatever JAX's
    rank-promotion setting)."""

    def op(x, y):
        return jfn(*jnp.broadcast_arrays(x, y))

    op.__name__ = op.__qualname__ = f"_{jfn.__name__}"
    return op


_and, _or, _xor = (_broadcasting(f) for f in (jnp.bitwise_and, jnp.bitwise_or, jnp.bitwise_xor))
_left, _right = _broadcasting(jnp.left_shift), _broadcasting(jnp.right_shift)


def bitwise_and(x, y, name=None):
    return call(_and, *_pair(x, y, "bitwise_and"))


def bitwise_or(x, y, name=None):
    return call(_or, *_pair(x, y, "bitwise_or"))


def bitwise_xor(x, y, name=None):
    return call(_xor, *_pair(x, y, "bitwise_xor"))


def invert(x, name=None):
    return call(jnp.invert, _integer(x, "invert"))


def left_shift(x, y, name=None):
    return call(_left, *_pair(x, y, "left_shift"))


def right_shift(x, y, name=None):
    return call(_right, *_pair(x, y, "right_shift"))
