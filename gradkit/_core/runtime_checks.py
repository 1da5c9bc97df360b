"""Checks on values that run with a compiled program, and raise from the call that runs it.

While a program is traced (``gk.jit``, ``tf.function``, a ``gk`` transform) Python cannot raise
on a value it does not have yet. ``check`` puts a ``jax.debug.callback`` into the program
instead: when the program runs, the host function gets the values and, if the condition failed,
builds the error the caller should see and raises. JAX reports an exception raised in a
compiled callback as a ``JaxRuntimeError`` whose message holds only text, so the error itself is
kept here under a number that the message carries, and ``failed_check`` turns the report back
into it. A check that passes costs a reduction and a branch per run, and no retrace: the
condition is a value of the program, not a constant, and the callback sits in the branch taken
only when it fails.

``gk.jit`` and the ``gk`` transforms run their calls under ``raised_as_their_own``, and, when
the call traced checks (``count``), compute its results at once with ``run_now`` (a tape would
leave them pending), so a failed check raises from the call, as TensorFlow's assertions raise
from the call of a ``tf.function``; ``gk.jit`` does so before it writes back any assignment, so
a failed call changes no Variable.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import re
import threading
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

from . import frames

# Errors of failed checks not yet taken by failed_check; bounded, as a failure may surface where
# nothing takes it (a value computed late, by a caller outside gk.jit).
_KEPT = 64
_failures: dict[int, BaseException] = {}
# Numbers of failures already raised: JAX may report one again at every later effects barrier.
_raised: dict[int, None] = {}
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


# The loggers jax.debug.callback and jax.experimental.io_callback report failures through.
for _name in ("jax._src.debugging", "jax._src.callback"):
    logging.getLogger(_name).addFilter(_QuietOwnFailures())


def check(ok, make_error: Callable[..., BaseException], *operands) -> None:
    """When the program being traced runs: raise ``make_error(ok, *operands)`` (given NumPy
    arrays) from the call that runs it, unless every element of ``ok`` (a boolean array) is true."""
    note()
    on_host = functools.partial(_on_host, make_error)
    # The callback runs only when the check fails, so a passing one copies nothing to the host.
    # (Batched by vmap, the branch runs for every example: the host function checks ``ok`` again.)
    jax.lax.cond(
        jnp.all(ok),
        lambda *_: None,
        lambda *values: jax.debug.callback(on_host, *values),
        ok,
        *operands,
    )


def note() -> None:
    """Count a check in the trace running now (a compiled program called inside it holds one)."""
    global _traced
    with _lock:
        _traced += 1


def count() -> int:
    """How many checks have been traced so far, in every thread."""
    return _traced


def _on_host(make_error, ok, *operands) -> None:
    ok = np.asarray(ok)
    if ok.all():
        return
    raise host_failure(make_error(ok, *(np.asarray(x) for x in operands)))


def host_failure(error: BaseException) -> Exception:
    """What a host callback of a compiled program raises so that the call running the program
    raises ``error`` itself (the trace that put the callback in calls ``note``)."""
    global _next_number
    with _lock:
        number = _next_number
        _next_number += 1
        _failures[number] = error
        while len(_failures) > _KEPT:
            del _failures[next(iter(_failures))]
    return _CheckFailed(f"[gradkit runtime check #{number}] {error}")


def failed_check(error: BaseException) -> BaseException | None:
    """The error a failed check made, if ``error`` (raised by running a program) reports one: JAX's
    report of it from a compiled program, or the callback's own exception where JAX ran the
    callback in Python (a check batched by ``jax.vmap`` outside ``jax.jit``)."""
    if not isinstance(error, (jax.errors.JaxRuntimeError, _CheckFailed)):
        return None
    found = _MARK.search(str(error))
    if found is None:
        return None
    number = int(found.group(1))
    with _lock:
        failed = _failures.pop(number, None)
        if failed is not None:
            _raised[number] = None
            while len(_raised) > _KEPT:
                del _raised[next(iter(_raised))]
    if failed is not None:
        failed._gradkit_failed_when_run = True  # see failed_when_run
    return failed


def failed_when_run(error: BaseException) -> bool:
    """Whether ``error`` is a failed check's, raised when its program ran (so its trace was made)."""
    return getattr(error, "_gradkit_failed_when_run", False)


# What a failed check reaches the caller as, before failed_check turns it back into its error.
REPORTS = (jax.errors.JaxRuntimeError, _CheckFailed)


@contextlib.contextmanager
def raised_as_their_own():
    """Inside: a failed check reported by JAX (a ``JaxRuntimeError``) is raised as its own error."""
    try:
        yield
    except REPORTS as error:
        failed = failed_check(error)
        if failed is None:
            raise
        raise failed from None


_EAGER = frames.trace_state()  # the trace state outside every jax transform


def in_trace() -> bool:
    """Whether a jax transform is tracing now (a check made now is part of its program)."""
    return frames.trace_state() != _EAGER


def run_now(results) -> bool:
    """Compute ``results`` (a pytree; values a tape left pending included) and wait for them and
    for the effects of every program dispatched so far, so the checks of the programs that made
    them run now; False if they hold no array to wait for. Inside another trace the checks belong
    to that trace's program instead: nothing to do."""
    if in_trace():
        return True
    leaves = jax.tree_util.tree_leaves(results, is_leaf=lambda x: hasattr(type(x), "__gradkit_value__"))
    arrays = [value for value in map(frames.concrete, leaves) if isinstance(value, jax.Array)]
    jax.block_until_ready(arrays)
    wait_for_effects()
    return bool(arrays)


def wait_for_effects() -> None:
    """Wait for the callbacks of the programs dispatched so far (``jax.effects_barrier``).

    Where programs run asynchronously (a GPU), a check that an eager transform traced runs as a
    small program of its own, which the call's results do not depend on: waiting for them is not
    enough, and its failure is reported at the barrier. A failure already raised that JAX reports
    again (it keeps a failed program's runtime token) is not raised twice."""
    try:
        jax.effects_barrier()
    except REPORTS as error:
        found = _MARK.search(str(error))
        if found is not None and int(found.group(1)) in _raised:
            return
        raise


def checked(call: Callable) -> Callable:
    """``call``, raising a failed check's own error, from the call itself when it traced checks."""

    @functools.wraps(call)
    def run(*args, **kwargs):
        before = count()
        with raised_as_their_own():
            out = call(*args, **kwargs)
            if count() != before:
                run_now(out)
        return out

    return run
