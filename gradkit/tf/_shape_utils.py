"""Shapes and pass-through ops: ``shape_n``, ``identity_n``, ``ensure_shape``,
``broadcast_static_shape``, ``broadcast_dynamic_shape``, ``get_static_value``,
``guarantee_const``.

Every gradkit value has a known shape, inside ``tf.function`` too, so the shape functions
return concrete values there, and ``ensure_shape`` checks when it is called.

>>> import gradkit.tf as tf
>>> tf.broadcast_static_shape(tf.TensorShape([2, 1]), tf.TensorShape([3]))
TensorShape([2, 3])
>>> tf.broadcast_dynamic_shape([2, 1], [3]).numpy().tolist()
[2, 3]
"""

from __future__ import annotations

import itertools

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors
from gradkit._core.variable import Variable
from gradkit._tape.tensor import SHAPE_DECLARATIONS, Tensor

from ._array import shape as _shape
from ._convert import TensorShape, _is_python_value, call, convert, convert_like, known_value


def static_value(x):
    """``x``'s value as a NumPy array when it is known now, else None: a Python or NumPy value is
    known also inside ``tf.function`` (where ``convert`` would trace it), a tensor when it is concrete."""
    if isinstance(x, (np.ndarray, np.generic)) or _is_python_value(x):
        return np.asarray(x)
    return known_value(convert(x))


def shape_n(input, out_type=np.int32, name=None):  # noqa: A002  (TensorFlow's argument name)
    """``tf.shape_n``: the shape of each tensor in ``input``, as ``tf.shape`` gives it."""
    if not len(input):
        raise _errors.GradkitValueError("tf.shape_n takes a non-empty list of tensors, as TensorFlow does.")
    return [_shape(convert(x), out_type) for x in input]


def _identity_n(xs):
    return [jnp.asarray(x) for x in xs]


def identity_n(input, name=None):  # noqa: A002
    """``tf.identity_n``: each tensor of the list ``input``, unchanged; the gradient passes through."""
    return list(call(_identity_n, [convert(x) for x in input]))


def _identity(x):
    return jnp.asarray(x)


def guarantee_const(input, name=None):  # noqa: A002
    """``tf.guarantee_const`` (deprecated in TensorFlow): ``input`` unchanged.

    TensorFlow registers no gradient for it (``tape.gradient`` raises LookupError there);
    gradkit passes the gradient through, as ``tf.identity`` does.
    """
    return call(_identity, convert(input))


def _dims(shape, what: str) -> tuple | None:
    """A shape-like argument as a tuple of ints and Nones (None for None: any shape)."""
    if shape is None:
        return None
    if isinstance(shape, (Tensor, Variable, jax.Array, np.ndarray)):
        value = known_value(shape)
        return None if value is None else tuple(int(d) for d in value.reshape(-1))
    try:
        dims = tuple(None if d is None else int(d) for d in shape)
    except TypeError:
        raise _errors.GradkitTypeError(
            f"{what} takes a shape (a TensorShape, or a list of ints and None), but got {shape!r}."
        ) from None
    if any(d is not None and d < 0 for d in dims):
        raise _errors.GradkitValueError(
            f"{what} got the shape {list(dims)}: a dimension must be >= 0, as in TensorFlow; write None for a "
            "dimension of any size."
        )
    return dims


def ensure_shape(x, shape, name=None):
    """``tf.ensure_shape``: ``x`` unchanged if its shape is compatible with ``shape`` (None: any
    size there, or any shape), else an error, as TensorFlow raises. The gradient passes through."""
    x = convert(x)
    want = _dims(shape, "tf.ensure_shape")
    declarations = getattr(SHAPE_DECLARATIONS, "found", None)
    if declarations is not None and want is not None:
        # Traced on stand-in sizes for a dataset's element spec: the shape is kept for the spec
        # (as Tensor.set_shape keeps it), and checked when the function runs on data.
        out = call(_identity, x)
        declarations[id(out)] = list(want)
        return out
    got = tuple(x.shape)
    if want is not None and (len(want) != len(got) or any(w is not None and w != g for w, g in zip(want, got))):
        raise _errors.InvalidArgumentValueError(
            f"tf.ensure_shape: the tensor's shape {list(got)} is not compatible with the expected shape "
            f"{list(want)} (None matches any size), as TensorFlow requires."
        )
    return call(_identity, x)


def _broadcast_dims(shape_x: tuple, shape_y: tuple) -> list | None:
    """TensorFlow's static broadcasting rule, with None for unknown dimensions; None if the
    shapes do not broadcast."""
    out = []
    for dx, dy in itertools.zip_longest(reversed(shape_x), reversed(shape_y), fillvalue=1):
        if dx is None or dy is None:
            # An unknown dimension takes the known one where that is > 1 (TensorFlow assumes the
            # program is right), else stays unknown.
            known = dx if dx is not None else dy
            out.append(known if known is not None and known > 1 else None)
        elif dx == 1 or dy == 1 or dx == dy:
            out.append(dy if dx == 1 else dx)
        else:
            return None
    return out[::-1]


def broadcast_static_shape(shape_x, shape_y):
    """``tf.broadcast_static_shape``: the ``TensorShape`` two shapes broadcast to (unknown
    dimensions, None, as TensorFlow combines them); a ValueError if they do not broadcast."""
    if shape_x is None or shape_y is None:
        raise _errors.GradkitTypeError(
            f"tf.broadcast_static_shape takes two shapes (TensorShape), but got {shape_x!r} and {shape_y!r}."
        )
    dims_x = _dims(shape_x, "tf.broadcast_static_shape")
    dims_y = _dims(shape_y, "tf.broadcast_static_shape")
    out = _broadcast_dims(dims_x, dims_y)
    if out is None:
        raise _errors.GradkitValueError(
            f"tf.broadcast_static_shape: the shapes {list(dims_x)} and {list(dims_y)} do not broadcast: for each "
            "dimension (from the last) they must be equal or one of them 1, as in TensorFlow."
        )
    return TensorShape(tuple(out))


def _broadcast_shape_values(x, y):
    n = max(x.shape[0], y.shape[0])
    x = jnp.concatenate([jnp.ones((n - x.shape[0],), x.dtype), x])
    y = jnp.concatenate([jnp.ones((n - y.shape[0],), y.dtype), y])
    return jnp.where(x == 1, y, x)


def broadcast_dynamic_shape(shape_x, shape_y):
    """``tf.broadcast_dynamic_shape``: the shape (a vector of the inputs' integer dtype) two shape
    vectors broadcast to; an error if they do not, or if their dtypes differ, as in TensorFlow."""
    x = convert(shape_x)
    y = convert_like(x, shape_y, what="tf.broadcast_dynamic_shape")[1]
    if x.dtype != y.dtype or not jnp.issubdtype(x.dtype, jnp.integer) or x.ndim != 1 or y.ndim != 1:
        raise _errors.GradkitValueError(
            f"tf.broadcast_dynamic_shape takes two integer vectors of one dtype (int32 or int64), but got "
            f"shapes {tuple(x.shape)}, {tuple(y.shape)} of dtypes {np.dtype(x.dtype).name}, "
            f"{np.dtype(y.dtype).name}."
        )
    vx, vy = static_value(shape_x), static_value(shape_y)
    if vx is not None and vy is not None and _broadcast_dims(tuple(vx.tolist()), tuple(vy.tolist())) is None:
        raise _errors.GradkitValueError(
            f"tf.broadcast_dynamic_shape: the shapes {vx.tolist()} and {vy.tolist()} do not broadcast: for each "
            "dimension (from the last) they must be equal or one of them 1, as in TensorFlow."
        )
    return call(_broadcast_shape_values, x, y)


def get_static_value(tensor, partial=False):
    """``tf.get_static_value``: a tensor's value as a NumPy array when it is known, None when it
    is not (a value traced inside ``tf.function``, or a Variable, whose value can change, as in
    TensorFlow); anything that is not a tensor comes back as it is."""
    if isinstance(tensor, Variable):
        return None
    if isinstance(tensor, (Tensor, jax.Array)):
        return known_value(tensor)
    return tensor
