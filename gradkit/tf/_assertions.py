"""TensorFlow's assertions at the top level and in ``tf.debugging``: ``assert_equal``,
``assert_greater``, ``assert_less``, ``assert_rank`` and ``Assert``.

A value known now (eagerly, or a constant inside ``tf.function``) is checked now, and a failed
check raises where TensorFlow raises InvalidArgumentError (gradkit raises a ValueError; a rank
that does not fit raises ValueError in both). Inside ``tf.function``, a value computed from
the function's inputs is not known until XLA runs, where Python cannot raise: as
``tf.debugging.check_numerics``, such a check is skipped; call the function eagerly
(``tf.config.run_functions_eagerly(True)``) to have it made. Each returns None, as TensorFlow
does eagerly (inside ``tf.function`` TensorFlow returns an Operation, which gradkit has not).

>>> import gradkit.tf as tf
>>> tf.assert_less(tf.constant([1.0, 2.0]), 3.0) is None
True
"""

from __future__ import annotations

import numpy as np

from gradkit import _errors

from . import _math
from ._convert import _is_python_value, convert, convert_like, known_value

_NUMPY = {"==": np.equal, ">": np.greater, "<": np.less}


def _show(values, summarize) -> str:
    flat = np.asarray(values).reshape(-1)
    count = flat.size if summarize is None else min(flat.size, summarize)
    return f"First {count} elements of {{}}:\n{flat[:count]}"


def _compare(x, y, op, symbol: str, what: str, message, summarize):
    given = x, y
    x, y = convert_like(x, y, what=what)  # a Python number takes the tensor's dtype, as in TensorFlow
    if np.dtype(x.dtype) != np.dtype(y.dtype):
        raise _errors.GradkitTypeError(
            f"{what} compares tensors of one dtype, as TensorFlow does, but got {np.dtype(x.dtype).name} and "
            f"{np.dtype(y.dtype).name}. Cast one first: tf.cast(y, x.dtype)."
        )
    op(x, y)  # shapes that do not broadcast raise here, as TensorFlow's comparison op raises
    xs, ys = (_known(v, t) for v, t in zip(given, (x, y)))
    if xs is None or ys is None:  # traced: not known until XLA runs (see the module docstring)
        return None
    held = np.asarray(_NUMPY[symbol](xs, ys))
    if held.all():
        return None
    lines = [f"Condition x {symbol} y did not hold."]
    if xs.shape == ys.shape and xs.ndim:
        failed = np.argwhere(~held)
        shown = failed if summarize is None else failed[:summarize]
        lines += [
            f"Indices of first {len(shown)} different values:\n{shown}",
            f"Corresponding x values:\n{xs[tuple(shown.T)]}",
            f"Corresponding y values:\n{ys[tuple(shown.T)]}",
        ]
    lines += [_show(xs, summarize).format("x"), _show(ys, summarize).format("y")]
    prefix = f"{message}\n" if message else ""
    raise _errors.GradkitValueError(
        prefix + "\n".join(lines) + "\n(TensorFlow raises InvalidArgumentError here; gradkit raises ValueError.)"
    )


def _known(value, tensor):
    """``value`` (converted as ``tensor``) as a NumPy array, or None while traced; a Python or NumPy
    value is known inside ``tf.function`` too, where its conversion is traced."""
    if isinstance(value, (np.ndarray, np.generic)) or _is_python_value(value):
        return np.asarray(value).astype(np.dtype(tensor.dtype))
    return known_value(tensor)


def assert_equal(x, y, message=None, summarize=None, name=None):
    """``tf.assert_equal(x, y)``: raise unless ``x == y`` everywhere (with broadcasting)."""
    return _compare(x, y, _math.equal, "==", "tf.assert_equal", message, summarize)


def assert_greater(x, y, message=None, summarize=None, name=None):
    """``tf.assert_greater(x, y)``: raise unless ``x > y`` everywhere (with broadcasting)."""
    return _compare(x, y, _math.greater, ">", "tf.assert_greater", message, summarize)


def assert_less(x, y, message=None, summarize=None, name=None):
    """``tf.assert_less(x, y)``: raise unless ``x < y`` everywhere (with broadcasting)."""
    return _compare(x, y, _math.less, "<", "tf.assert_less", message, summarize)


def assert_rank(x, rank, message=None, name=None):
    """``tf.assert_rank(x, rank)``: raise ValueError unless ``x`` has rank ``rank`` (a scalar)."""
    x = convert(x)
    wanted = np.asarray(rank) if isinstance(rank, (int, np.integer, list, tuple)) else known_value(convert(rank))
    if wanted is None:  # a rank computed inside tf.function: see the module docstring
        return None
    if wanted.ndim != 0:
        raise _errors.GradkitValueError(
            f"Rank must be a scalar, as in TensorFlow, but tf.assert_rank got rank={wanted.tolist()!r}. "
            "Pass one int: tf.assert_rank(x, 2)."
        )
    if x.ndim != int(wanted):
        prefix = f"{message}.  " if message else ""
        raise _errors.GradkitValueError(
            f"{prefix}Tensor must have rank {int(wanted)}.  Received rank {x.ndim}, shape {tuple(x.shape)} "
            "(tf.assert_rank, which raises ValueError in TensorFlow too)."
        )
    return None


def Assert(condition, data, summarize=None, name=None):  # noqa: N802  (TensorFlow's name)
    """``tf.Assert(condition, data)``: raise, showing ``data``, unless the scalar ``condition`` is true."""
    value = known_value(convert(condition))
    if value is None:  # traced: see the module docstring
        return None
    if value.ndim != 0:
        raise _errors.GradkitValueError(
            f"tf.Assert takes a scalar condition, but got one of shape {list(value.shape)}; TensorFlow refuses it "
            "too (the truth value of an array is ambiguous). Reduce it: tf.reduce_all(condition)."
        )
    if bool(value):
        return None
    items = data if isinstance(data, (list, tuple)) else [data]
    shown = []
    for item in items:
        if isinstance(item, (str, bytes)):
            shown.append(item.decode() if isinstance(item, bytes) else item)
            continue
        known = known_value(convert(item))
        flat = known.reshape(-1) if summarize is None else known.reshape(-1)[:summarize]
        shown.append(", ".join(str(v) for v in flat.tolist()))
    raise _errors.GradkitValueError(
        f"Expected the condition to be true. Summarized data: {chr(10).join(shown)}\n"
        "(tf.Assert; TensorFlow raises InvalidArgumentError here, gradkit raises ValueError.)"
    )
