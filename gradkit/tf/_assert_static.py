"""``tf.debugging``'s assertions on what is known without the values: rank, shape, dtype.

In gradkit every shape and dtype is known while a ``tf.function`` is traced (JAX traces for
them), so these are checked at once, eagerly and while tracing alike, and raise what TensorFlow
raises when it can decide statically: ``ValueError`` for a rank or shape, ``TypeError`` for a
dtype, with TensorFlow's eager messages. They return None.

>>> import gradkit.tf as tf
>>> tf.debugging.assert_shapes([(tf.ones([2, 3]), ("N", "D")), (tf.ones([2]), ("N",))]) is None
True
>>> tf.debugging.assert_rank(tf.ones([2]), 2)
Traceback (most recent call last):
...
gradkit._errors.GradkitValueError: [gradkit] Tensor  must have rank 2.  Received rank 1, shape (2,)
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors
from gradkit._tape.tensor import Tensor

from ._assertions import shape_and_dtype, tensor_text
from ._convert import convert, known_value
from ._dtypes import as_dtype


def _prefix(message) -> str:
    return f"{message}.  " if message else ""


def _static_int(value, what: str):
    known = known_value(value)
    if known is None or np.ndim(known) != 0 or np.dtype(known.dtype).kind not in "iu":
        raise _errors.GradkitValueError(
            f"tf.debugging.{what} takes the rank as a Python int or an integer scalar tensor with a known value, "
            f"but got {_errors.describe_value(value)}. Pass an int: gradkit knows every rank while it traces."
        )
    return int(known)


def _rank_failed(message, condition: str, x) -> _errors.GradkitValueError:
    return _errors.GradkitValueError(
        f"{_prefix(message)}Tensor  must have rank {condition}.  Received rank {x.ndim}, shape {tuple(x.shape)}"
    )


def assert_rank(x, rank, message=None, name=None):
    """``tf.debugging.assert_rank``: raise ValueError unless ``x`` has rank ``rank``."""
    x, rank = convert(x), _static_int(rank, "assert_rank")
    if x.ndim != rank:
        raise _rank_failed(message, str(rank), x)


def assert_rank_at_least(x, rank, message=None, name=None):
    """``tf.debugging.assert_rank_at_least``: raise ValueError unless the rank of ``x`` is ``rank`` or more."""
    x, rank = convert(x), _static_int(rank, "assert_rank_at_least")
    if x.ndim < rank:
        raise _rank_failed(message, f"at least {rank}", x)


def assert_rank_in(x, ranks, message=None, name=None):
    """``tf.debugging.assert_rank_in``: raise ValueError unless the rank of ``x`` is one of ``ranks``."""
    x = convert(x)
    ranks = tuple(_static_int(r, "assert_rank_in") for r in ranks)
    if x.ndim not in ranks:
        raise _rank_failed(message, f"in {ranks}", x)


def _dtype_text(dtype) -> str:
    return f"tf.{np.dtype(dtype).name}"


def assert_integer(x, message=None, name=None):
    """``tf.debugging.assert_integer``: raise TypeError unless ``x`` has an integer dtype."""
    x = convert(x)
    if np.dtype(x.dtype).kind not in "iu":
        raise _errors.GradkitTypeError(
            f'{_prefix(message)}Expected "x" to be integer type.  Found: tensor of dtype '
            f"<dtype: '{np.dtype(x.dtype).name}'>"
        )


def assert_type(tensor, tf_type, message=None, name=None):
    """``tf.debugging.assert_type``: raise TypeError unless ``tensor`` has dtype ``tf_type``."""
    want = np.dtype(as_dtype(tf_type))
    got = np.dtype(convert(tensor).dtype)
    if got != want:
        raise _errors.GradkitTypeError(
            f"{_prefix(message)}tensor must be of type {_dtype_text(want)}; got {_dtype_text(got)}"
        )


def assert_scalar(tensor, message=None, name=None):
    """``tf.debugging.assert_scalar``: raise ValueError unless ``tensor`` is a scalar."""
    tensor = convert(tensor)
    if tensor.ndim != 0:
        raise _errors.GradkitValueError(f"{_prefix(message)}Expected scalar shape, saw shape: {tuple(tensor.shape)}.")


def _any_size(symbol) -> bool:
    return symbol is None or (isinstance(symbol, str) and symbol == ".")


def _known_size(symbol) -> bool:
    if symbol is None or isinstance(symbol, str):
        return False
    try:
        int(symbol)
    except (TypeError, ValueError):
        return False
    return True


def assert_shapes(shapes, data=None, summarize=None, message=None, name=None):
    """``tf.debugging.assert_shapes``: raise ValueError unless the tensors' shapes fit their specs.

    ``shapes`` holds ``(tensor, spec)`` pairs (or is a dict); a spec lists, per dimension, an int,
    a name that must stand for one size across all tensors, or ``None``/``'.'`` for any size; a
    leading ``'*'`` or ``...`` stands for any number of leading dimensions. A spec of length 0 or 1
    also takes a scalar (a scalar has one dimension of size 1), as in TensorFlow.
    """
    pairs = list(shapes.items() if isinstance(shapes, dict) else shapes)
    prefix = _prefix(message)
    sizes_of = {}  # a named size: (size, the tensor that fixed it, its dimension)
    for tensor, spec in pairs:
        if spec is None:
            continue
        x = convert(tensor)
        if not (hasattr(spec, "__iter__") or hasattr(spec, "__getitem__")):
            raise _errors.GradkitValueError(
                f"{prefix}Tensor {shape_and_dtype(x)}.  Specified shape must be an iterable.  An iterable has "
                f"the attribute `__iter__` or `__getitem__`.  Received specified shape: {spec}"
            )
        spec = tuple(spec)
        for i, symbol in enumerate(spec):
            if (symbol is Ellipsis or (isinstance(symbol, str) and symbol == "*")) and i != 0:
                raise _errors.GradkitValueError(
                    f"{prefix}Tensor {shape_and_dtype(x)} specified shape index {i}.  Symbol `...` or `*` for a "
                    "variable number of unspecified dimensions is only allowed as the first entry"
                )
        leading_any = bool(spec) and (spec[0] is Ellipsis or (isinstance(spec[0], str) and spec[0] == "*"))
        symbols = spec[1:] if leading_any else spec
        symbols = symbols or (1,)  # no dimensions: a scalar, one dimension of size 1
        actual = tuple(x.shape) or (1,)
        rank = len(symbols)
        if leading_any:
            if rank > 1 and x.ndim < rank:
                raise _rank_failed(message, f"at least {rank}", x)
        elif rank in (0, 1):
            if x.ndim not in (0, 1):
                raise _rank_failed(message, "in (0, 1)", x)
        elif x.ndim != rank:
            raise _rank_failed(message, str(rank), x)
        for i, symbol in enumerate(symbols):
            if _any_size(symbol):
                continue
            dim = i - rank if leading_any else i
            if _known_size(symbol):
                want, said = int(symbol), "Specified explicitly"
            elif symbol in sizes_of:
                want, by, at = sizes_of[symbol]
                said = f"Specified by tensor {shape_and_dtype(by)} dimension {at}"
            else:
                sizes_of[symbol] = (actual[dim], x, dim)
                continue
            if actual[dim] != want:
                raise _errors.GradkitValueError(
                    f"{prefix}{said}.  Tensor {shape_and_dtype(x)} dimension {dim} must have size {want}.  "
                    f"Received size {actual[dim]}, shape {tuple(x.shape)}"
                )


def assert_proper_iterable(values):
    """``tf.debugging.assert_proper_iterable``: raise TypeError for a tensor, an array, a string or
    bytes (iterable, but not as a sequence of values), or anything not iterable. A Variable passes,
    as in TensorFlow (it is no ``tf.Tensor``)."""
    if isinstance(values, (Tensor, np.ndarray, jax.Array, str, bytes)):
        raise _errors.GradkitTypeError(f'Expected argument "values" to be a "proper" iterable.  Found: {type(values)}')
    if not hasattr(values, "__iter__"):
        raise _errors.GradkitTypeError(f'Expected argument "values" to be iterable.  Found: {type(values)}')


def _dtype_repr(dtype) -> str:
    return f"<dtype: '{np.dtype(dtype).name}'>"


def _item_text(item) -> str:
    value = known_value(item)
    return tensor_text(value) if value is not None else f"a tensor ({shape_and_dtype(item)})"


def assert_same_float_dtype(tensors=None, dtype=None):
    """``tf.debugging.assert_same_float_dtype``: the one floating dtype of ``tensors`` (None entries
    skipped) and ``dtype``, float32 if neither gives one; raise ValueError for two dtypes or a
    dtype that is not floating."""
    expected = None if dtype is None else np.dtype(as_dtype(dtype))
    first = None
    for item in tensors or ():
        if item is None:
            continue
        got = np.dtype(item.dtype)
        if expected is None:
            expected, first = got, item
        elif got != expected:
            raise _errors.GradkitValueError(
                f"{_item_text(item)}, type={_dtype_repr(got)}, must be of the same type ({_dtype_repr(expected)})"
                + (f" as {_item_text(first)}." if first is not None else ".")
            )
    if expected is None:
        return np.dtype(as_dtype("float32"))
    if not jnp.issubdtype(expected, jnp.floating):
        raise _errors.GradkitValueError(f"Expected floating point type, got {_dtype_repr(expected)}.")
    return expected


def is_numeric_tensor(tensor) -> bool:
    """``tf.debugging.is_numeric_tensor``: whether ``tensor`` is a tensor of a number dtype (not bool)."""
    if not isinstance(tensor, Tensor):
        return False
    return np.dtype(tensor.dtype).kind in "iufc"
