"""Checks on values that run with a compiled program, and raise from the call that runs it.

While a program is traced (``gk.jit``, ``tf.function``) Python cannot raise on a value it does
not have yet. ``check`` puts a ``jax.debug.callback`` into the program instead: when the program
runs, the host function gets the values and, if the condition failed, builds the error the caller
should see and raises. JAX reports any exception raised in a callback as a ``JaxRuntimeError``
whose message holds only text, so the error itself is kept here under a number that the message
carries, and ``failed_check`` turns the ``JaxRuntimeError`` back into it (``gk.jit`` does, before
it writes back any assignment, so a failed call changes no Variable). A check that passes costs
one host call per run and no retrace: the condition is an input of the callback, not a constant.

``count`` tells how many checks have been traced so far, so ``gk.jit`` knows which of its
programs hold checks, and waits for those to finish (and computes its results a tape would leave
pending) before it returns, as TensorFlow raises from the call of a ``tf.function``.
"""

from __future__ import annotations

import functools
import logging
import re
import threading
from collections.abc import Callable

import jax
import numpy as np

# Errors of failed checks not yet taken by failed_check; bounded, as a failure may surface where
# nothing takes it (a value computed late, by a caller outside gk.jit).
_KEPT = 64
_failures: dict[int, BaseException] = {}
_lock = threading.Lock()
_next_number = 0
_traced = 0
_MARK = re.compile(r"\[gradkit runtime check #(\d+)\]")


class _CheckFailed(Exception):
    """What the callback raises through the runtime: the failure's number and its message."""


class _QuietOwnFailures(logging.Filter):
    """JAX logs every exception raised in a debug callback with its traceback; a failed check is
    raised to the caller with its own message instead, so its log record is dropped."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return not isinstance(error, _CheckFailed)


# The logger jax.debug.callback reports failures through (the module that runs callbacks).
logging.getLogger("jax._src.debugging").addFilter(_QuietOwnFailures())


def check(ok, make_error: Callable[..., BaseException], *operands) -> None:
    """When the program being traced runs: raise ``make_error(ok, *operands)`` (given NumPy
    arrays) from the call that runs it, unless every element of ``ok`` (a boolean array) is true."""
    note()
    jax.debug.callback(functools.partial(_on_host, make_error), ok, *operands)


def note() -> None:
    """Count a check in the trace running now (a compiled program called inside it holds one)."""
    global _traced
    with _lock:
        _traced += 1


def count() -> int:
    """How many checks have been traced so far, in every thread."""
    return _traced


def _on_host(make_error, ok, *operands) -> None:
    global _next_number
    ok = np.asarray(ok)
    if ok.all():
        return
    error = make_error(ok, *(np.asarray(x) for x in operands))
    with _lock:
        number = _next_number
        _next_number += 1
        _failures[number] = error
        while len(_failures) > _KEPT:
            del _failures[next(iter(_failures))]
    raise _CheckFailed(f"[gradkit runtime check #{number}] {error}")


def failed_check(error: BaseException) -> BaseException | None:
    """The error a failed check made, if ``error`` (raised by running a program) reports one."""
    if not isinstance(error, jax.errors.JaxRuntimeError):
        return None
    found = _MARK.search(str(error))
    if found is None:
        return None
    with _lock:
        return _failures.pop(int(found.group(1)), None)
