"""How ``tf.debugging``'s value assertions fail: eagerly at once, inside ``tf.function`` when it runs.

An assertion hands ``require`` a boolean tensor that holds where its condition holds, the
tensors its message shows, and a function that builds the error from their values. Eagerly the
values are known and a failure raises ``InvalidArgumentError`` at once, as TensorFlow's eager
asserts do. Inside ``tf.function`` they are traced: ``require`` puts a runtime check into the
compiled program (``gradkit/_core/runtime_checks.py``), so the call that finds the condition
false raises that same error, and a call that finds it true runs on without a retrace. Where
the values are known while tracing (constants), the assertion raises while tracing, as
TensorFlow checks a constant condition when it builds the graph.

The assertion itself records nothing a gradient could flow through: the asserted tensors are
the ones the program goes on using, so gradients through them are unchanged.

The helpers below print values as TensorFlow's eager messages do (``_pretty_print`` and
``_summarize_eager`` in its ``check_ops.py`` and ``control_flow_assert.py``).
"""

from __future__ import annotations

import jax
import numpy as np

from gradkit import _errors
from gradkit._core import runtime_checks

from . import _untaken
from ._control import _value


def require(ok, make_error, *shown) -> None:
    """Raise ``make_error(ok, *shown)`` (given their values as NumPy arrays) unless every element
    of the boolean tensor ``ok`` is true: now if the values are known, else when the program
    being traced runs."""
    if _untaken.quiet():  # a branch not taken, traced for what it reads: it never runs
        return
    values = [_value(x) for x in (ok, *shown)]
    if any(isinstance(v, jax.core.Tracer) for v in values):
        runtime_checks.check(values[0], make_error, *values[1:])
        return
    arrays = [np.asarray(v) for v in values]
    if not arrays[0].all():
        raise make_error(*arrays)


def failed(message: str) -> _errors.GradkitInvalidArgumentError:
    """The error of a failed assertion: TensorFlow's InvalidArgumentError with its message."""
    return _errors.GradkitInvalidArgumentError(message)


def summarize_count(summarize, size: int) -> int:
    """How many elements TensorFlow prints: 3 by default, all for a negative ``summarize``."""
    if summarize is None:
        return 3
    return size if summarize < 0 else int(summarize)


def pretty_print(item, summarize) -> str:
    """One entry of a message: a tensor's first elements as a list of strings (a scalar as itself)."""
    if not isinstance(item, np.ndarray):
        return str(item)
    if item.ndim == 0:
        return str(item)
    flat = item.reshape(-1)
    shown = [str(x) for x in flat[: summarize_count(summarize, flat.size)]]
    if len(shown) < flat.size:
        shown.append("...")
    return str(shown)


def summarize_eager(item, summarize) -> str:
    """One entry of ``tf.debugging.Assert``'s message: the first elements joined by commas, a
    string as TensorFlow prints a string tensor (``b'...'``)."""
    if isinstance(item, str):
        return str(item.encode()) if summarize != 0 else ""
    flat = np.asarray(item).reshape(-1)
    if np.ndim(item) == 0:
        return str(np.asarray(item)) if summarize != 0 else ""
    shown = [str(x) for x in flat[: summarize_count(summarize, flat.size)]]
    if len(shown) < flat.size:
        shown.append("...")
    return ", ".join(shown)


def tensor_text(value) -> str:
    """A value as TensorFlow prints an eager tensor: ``tf.Tensor(False, shape=(), dtype=bool)``."""
    array = np.asarray(value)
    return f"tf.Tensor({array!s}, shape={array.shape}, dtype={array.dtype.name})"  # !s: NumPy's short float


def shape_and_dtype(x) -> str:
    """``shape=(2,) dtype=float32``, as TensorFlow names a tensor in an eager assertion message."""
    return f"shape={tuple(x.shape)} dtype={np.dtype(x.dtype).name}"
