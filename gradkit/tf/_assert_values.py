"""``tf.debugging``'s assertions on values: ``assert_equal`` and the other comparisons, the sign
assertions (``assert_positive``, ...), ``assert_near`` and ``Assert``.

Each returns None and raises ``tf.errors.InvalidArgumentError`` with TensorFlow's eager message
when its condition fails: at once eagerly, from the call inside ``tf.function`` (``_assertions``).
Shapes that do not broadcast and operands of two dtypes are refused as TensorFlow's comparison
ops refuse them. Inside ``tf.function`` TensorFlow returns the assertion's operation, for
``tf.control_dependencies``; gradkit returns None there too, which that context takes.

>>> import gradkit.tf as tf
>>> tf.debugging.assert_less(tf.constant([1.0, 2.0]), 3.0) is None
True
>>> try:
...     tf.debugging.assert_equal(tf.constant([1, 2]), tf.constant([1, 3]), message="lengths")
... except tf.errors.InvalidArgumentError as error:
...     print(error.message)
[gradkit] lengths
Condition x == y did not hold.
Indices of first 1 different values:
[[1]]
Corresponding x values:
[2]
Corresponding y values:
[3]
First 2 elements of x:
[1 2]
First 2 elements of y:
[1 3]
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from ._assertions import failed, pretty_print, require, shape_and_dtype, summarize_count, summarize_eager, tensor_text
from ._convert import call, convert, convert_like


def _operands(x, y, what: str):
    """``x`` and ``y`` as tensors of one dtype (a Python number takes the other's dtype)."""
    x, y = convert_like(x, y, what=what)
    if np.dtype(x.dtype) != np.dtype(y.dtype):
        raise _errors.OpInputError(
            f"{what} compares x of dtype {np.dtype(x.dtype).name} with y of dtype {np.dtype(y.dtype).name}; "
            "TensorFlow compares tensors of one dtype only (InvalidArgumentError eagerly). Cast one first: "
            f"tf.cast(y, tf.{np.dtype(x.dtype).name})."
        )
    return x, y


def _broadcasting(compare):
    """``compare`` on operands broadcast to one shape first, as TensorFlow's comparison ops broadcast."""

    def on_one_shape(x, y):
        return compare(*jnp.broadcast_arrays(x, y))

    on_one_shape.__name__ = compare.__name__
    return on_one_shape


_equal, _not_equal = _broadcasting(jnp.equal), _broadcasting(jnp.not_equal)
_less, _less_equal = _broadcasting(jnp.less), _broadcasting(jnp.less_equal)
_greater, _greater_equal = _broadcasting(jnp.greater), _broadcasting(jnp.greater_equal)


def _binary_message(symbol: str, ok, x, y, summarize) -> list[str]:
    """TensorFlow's eager message for ``x symbol y`` failing (``_make_assert_msg_data``)."""
    count = summarize_count(summarize, max(x.size, y.size))
    lines = [f"Condition x {symbol} y did not hold."]
    if count <= 0:
        return lines
    if x.shape == y.shape and x.ndim:
        # Where they differ, when the shapes agree (with broadcasting it would confuse more than help).
        where = np.argwhere(~ok)
        shown = min(count, len(where))
        lines += [
            f"Indices of first {shown} different values:",
            str(where[:shown]),
            "Corresponding x values:",
            str(x[~ok].reshape(-1)[:shown]),
            "Corresponding y values:",
            str(y[~ok].reshape(-1)[:shown]),
        ]
    flat_x, flat_y = x.reshape(-1), y.reshape(-1)
    lines += [
        f"First {min(flat_x.size, count)} elements of x:",
        str(flat_x[:count]),
        f"First {min(flat_y.size, count)} elements of y:",
        str(flat_y[:count]),
    ]
    return lines


def _compare(symbol: str, compare, name: str, x, y, message, summarize) -> None:
    x, y = _operands(x, y, f"tf.debugging.{name}")
    ok = call(compare, x, y)  # shapes that do not broadcast are refused here

    def make_error(ok, x, y):
        lines = [] if message is None else [str(message)]
        return failed("\n".join(lines + _binary_message(symbol, ok, x, y, summarize)))

    require(ok, make_error, x, y)


def assert_equal(x, y, message=None, summarize=None, name=None):
    """``tf.debugging.assert_equal``: raise InvalidArgumentError unless ``x == y`` element-wise."""
    _compare("==", _equal, "assert_equal", x, y, message, summarize)


def assert_none_equal(x, y, summarize=None, message=None, name=None):
    """``tf.debugging.assert_none_equal``: raise InvalidArgumentError unless ``x != y`` element-wise."""
    _compare("!=", _not_equal, "assert_none_equal", x, y, message, summarize)


def assert_less(x, y, message=None, summarize=None, name=None):
    """``tf.debugging.assert_less``: raise InvalidArgumentError unless ``x < y`` element-wise."""
    _compare("<", _less, "assert_less", x, y, message, summarize)


def assert_less_equal(x, y, message=None, summarize=None, name=None):
    """``tf.debugging.assert_less_equal``: raise InvalidArgumentError unless ``x <= y`` element-wise."""
    _compare("<=", _less_equal, "assert_less_equal", x, y, message, summarize)


def assert_greater(x, y, message=None, summarize=None, name=None):
    """``tf.debugging.assert_greater``: raise InvalidArgumentError unless ``x > y`` element-wise."""
    _compare(">", _greater, "assert_greater", x, y, message, summarize)


def assert_greater_equal(x, y, message=None, summarize=None, name=None):
    """``tf.debugging.assert_greater_equal``: raise InvalidArgumentError unless ``x >= y`` element-wise."""
    _compare(">=", _greater_equal, "assert_greater_equal", x, y, message, summarize)


def _prefix(message) -> str:
    return f"{message}.  " if message else ""


def _sign(condition: str, compare, x, message, summarize, joined: bool = False) -> None:
    x = convert(x)
    ok = call(compare, x, convert(0, dtype=x.dtype))

    def make_error(ok, x):
        head = [_prefix(message), f"Condition x {condition} did not hold element-wise:", f"x ({shape_and_dtype(x)}) = "]
        if joined:  # TensorFlow's assert_non_positive writes these two lines as one
            head[1:] = [head[1] + head[2]]
        return failed("\n".join([*head, pretty_print(x, summarize)]))

    require(ok, make_error, x)


def assert_positive(x, message=None, summarize=None, name=None):
    """``tf.debugging.assert_positive``: raise InvalidArgumentError unless ``x > 0`` element-wise."""
    _sign("> 0", jnp.greater, x, message, summarize)


def assert_negative(x, message=None, summarize=None, name=None):
    """``tf.debugging.assert_negative``: raise InvalidArgumentError unless ``x < 0`` element-wise."""
    _sign("< 0", jnp.less, x, message, summarize)


def assert_non_negative(x, message=None, summarize=None, name=None):
    """``tf.debugging.assert_non_negative``: raise InvalidArgumentError unless ``x >= 0`` element-wise."""
    _sign(">= 0", jnp.greater_equal, x, message, summarize)


def assert_non_positive(x, message=None, summarize=None, name=None):
    """``tf.debugging.assert_non_positive``: raise InvalidArgumentError unless ``x <= 0`` element-wise."""
    _sign("<= 0", jnp.less_equal, x, message, summarize, joined=True)


def _within(x, y, rtol, atol):
    x, y = jnp.broadcast_arrays(x, y)
    return jnp.less(jnp.abs(x - y), atol + rtol * jnp.abs(y))


def assert_near(x, y, rtol=None, atol=None, message=None, summarize=None, name=None):
    """``tf.debugging.assert_near``: raise InvalidArgumentError unless ``|x - y| < atol + rtol * |y|``
    element-wise; both tolerances default to 10 machine epsilons of the dtype."""
    x, y = _operands(x, y, "tf.debugging.assert_near")
    dtype = np.dtype(x.dtype)
    if dtype.kind not in "fc":
        raise _errors.GradkitValueError(
            f"tf.debugging.assert_near compares floating-point tensors, but got dtype {dtype.name} (TensorFlow "
            "raises ValueError: 'not inexact'). Compare integers exactly with tf.debugging.assert_equal."
        )
    real = np.finfo(dtype).dtype
    eps = np.finfo(real).eps
    rtol = convert(10 * eps if rtol is None else rtol, dtype=real)
    atol = convert(10 * eps if atol is None else atol, dtype=real)
    ok = call(_within, x, y, rtol, atol)

    def make_error(ok, x, y, rtol, atol):
        data = [
            _prefix(message),
            f"x and y not equal to tolerance rtol = {tensor_text(rtol)}, atol = {tensor_text(atol)}",
            f"x ({shape_and_dtype(x)}) = ",
            x,
            f"y ({shape_and_dtype(y)}) = ",
            y,
        ]
        return _assert_failed(np.asarray(ok.all()), data, summarize)

    require(ok, make_error, x, y, rtol, atol)


def _assert_failed(condition, data, summarize) -> _errors.GradkitInvalidArgumentError:
    shown = "\n".join(summarize_eager(d, summarize) for d in data)
    text = str(condition) if isinstance(condition, bool) else tensor_text(condition)
    return failed(f"Expected '{text}' to be true. Summarized data: {shown}")


def Assert(condition, data, summarize=None, name=None):  # noqa: N802  (TensorFlow's name)
    """``tf.debugging.Assert(condition, data)``: raise InvalidArgumentError showing the first
    ``summarize`` (3) elements of each entry of ``data`` unless the scalar ``condition`` is true."""
    data = list(data)
    texts = {i: d.decode() if isinstance(d, bytes) else d for i, d in enumerate(data) if isinstance(d, (str, bytes))}
    tensors = [convert(d) for i, d in enumerate(data) if i not in texts]
    python_bool = isinstance(condition, (bool, np.bool_))
    condition = convert(condition)
    if int(np.prod(condition.shape)) != 1:
        raise _errors.OpInputError(
            f"tf.debugging.Assert takes a scalar condition, but got shape {tuple(condition.shape)} (TensorFlow's "
            "Assert op raises InvalidArgumentError: 'In[0] is not a scalar'). Reduce it first: "
            "tf.reduce_all(condition)."
        )

    def make_error(ok, *values):
        values = iter(values)
        entries = [texts[i] if i in texts else next(values) for i in range(len(data))]
        return _assert_failed(bool(ok) if python_bool else ok, entries, summarize)

    require(condition, make_error, *tensors)
