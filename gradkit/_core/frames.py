"""Where a Variable's reads and assignments go.

A Variable is a handle; what a read returns and where an assignment lands depend on
who is running the code. With nothing active, the live value is read and replaced
(eager TensorFlow behaviour). Inside a transform, a ``Frame`` is pushed and every read
and assignment of a Variable goes through it instead, so the same imperative code
becomes a pure function of a State. Frames nest (a transform inside a transform, a tape
inside a transform); a frame that does not know a Variable asks the frame below it.

The stack is thread-local: two threads never see each other's frames.
"""

from __future__ import annotations

import contextlib
import threading
import warnings
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from .. import _errors
from .compat import get_opaque_trace_state


class Frame:
    """Intercepts Variable reads and assignments while it is on the stack."""

    parent: Frame | None = None

    def read(self, var) -> Any:
        return read_below(self, var)

    def assign(self, var, value) -> None:
        assign_below(self, var, value)

    def read_is_recorded(self, var) -> bool:
        """Whether a read of ``var`` here is certainly a value a recorder records (False: not
        known without reading it), so that a probe of the value can be answered without a read."""
        return False

    def cuts_assignments(self) -> bool:
        """Whether every recorder of what runs now takes an assignment as the end of a
        derivative's path (TensorFlow's semantics: a later read differentiates with
        respect to the Variable, not to the assigned value)."""
        return False

    def __enter__(self):
        stack = _local.stack
        self.parent = stack[-1] if stack else None
        stack.append(self)
        return self

    def __exit__(self, *exc):
        stack = _local.stack
        # Frames are strictly nested, but an exception may unwind several at once.
        while stack:
            if stack.pop() is self:
                break
        return False


class _Local(threading.local):
    def __init__(self):
        self.stack: list[Frame] = []
        self.lifted: str | None = None  # the gk.lift'ed function being recorded, if any


@contextlib.contextmanager
def lifted_call(name: str):
    """A ``gk.lift``'ed function is traced on its own, outside every frame: a Variable it reads
    there would be a constant of its compiled op (stale at later calls, with no gradient), so
    such a read raises."""
    outer = _local.lifted, _local.stack
    _local.lifted, _local.stack = name, []
    try:
        yield
    finally:
        _local.lifted, _local.stack = outer


_local = _Local()


def cuts_assignments() -> bool:
    """``Frame.cuts_assignments`` of the frame on top (False with none): whether a compiled call
    recorded now must cut each assignment it makes inside it, as a recorder outside it does."""
    stack = _local.stack
    return bool(stack) and stack[-1].cuts_assignments()


def idle() -> bool:
    """Whether no frame is active in this thread: reads and assignments go to the live values."""
    return not _local.stack


def top() -> Frame | None:
    stack = _local.stack
    return stack[-1] if stack else None


def note_created(var) -> None:
    """Tell every open frame that keeps track of the Variables created during its call of ``var``."""
    for frame in _local.stack:
        note = getattr(frame, "note_created", None)
        if note is not None:
            note(var)


def is_open(frame: Frame) -> bool:
    """Whether ``frame`` is on this thread's stack now."""
    return any(f is frame for f in _local.stack)


def live(var) -> Any:
    """The live value of ``var``.

    A layer above may leave a value pending (the tape hands a Variable the lazy result of
    what was recorded, so that a value nobody reads is never computed); it is computed
    here, once, at the first read.
    """
    value = var._value
    get = getattr(type(value), "__gradkit_value__", None)
    if get is not None:
        # The first read may come inside a jax trace (jax.jit, gk.jit's discovery trace). The
        # pending value was recorded outside it, so it is computed concretely (a jitted call on
        # concrete arguments runs at once here): the Variable never keeps a tracer of a trace
        # that ends.
        with jax.ensure_compile_time_eval():
            value = get(value)
        var._value = value
    return value


def read(var) -> Any:
    """The value a read of ``var`` sees here and now."""
    stack = _local.stack
    if stack:
        return stack[-1].read(var)
    if under_jax_trace() and _staging():
        if _local.lifted is not None:
            raise _errors.GradkitValueError(
                _errors.MSG_VARIABLE_READ_IN_LIFT.format(name=var._label(), fn=_local.lifted)
            )
        warnings.warn(
            _errors.MSG_VARIABLE_READ_AS_CONSTANT.format(name=var._label()), _errors.GradkitWarning, stacklevel=3
        )
    return live(var)


def staging() -> bool:
    """Whether a jax trace that stages a program out is active now (see ``_staging``)."""
    return under_jax_trace() and _staging()


def _staging() -> bool:
    """Whether a trace that stages a program out (``jax.jit``, a lax loop's body) is active: a
    Variable read there with no gradkit frame becomes a constant of a program jax may reuse at
    later calls, which then see neither later assignments of it nor a gradient with respect to
    it. (``jax.vmap`` or ``jax.grad`` alone trace afresh at each call: a new array is concrete.)"""
    return isinstance(jnp.zeros(()), jax.core.Tracer)


def read_is_recorded(var) -> bool:
    """Whether a read of ``var`` here and now is certainly recorded (see ``Frame.read_is_recorded``)."""
    stack = _local.stack
    return bool(stack) and stack[-1].read_is_recorded(var)


def assign(var, value) -> None:
    """Route an already validated new value of ``var`` to whoever owns it now."""
    stack = _local.stack
    if stack:
        stack[-1].assign(var, value)
    else:
        set_live(var, value)


def read_below(frame: Frame, var) -> Any:
    parent = frame.parent
    return parent.read(var) if parent is not None else live(var)


def read_outside(frame: Frame, var) -> Any:
    """A read by ``frame`` of a Variable it does not hold: the value below it, with the warning a
    plain read gives where a ``jax.jit`` would keep that value as a constant: one around the
    transform, or one opened inside it (a ``jax.jit`` helper, a lax loop's body)."""
    if frame.parent is None and getattr(frame, "warns_if_staged", False) and _staged_read(frame):
        warnings.warn(
            _errors.MSG_VARIABLE_READ_AS_CONSTANT_IN_TRANSFORM.format(name=var._label()),
            _errors.GradkitWarning,
            stacklevel=4,
        )
    return read_below(frame, var)


def _staged_read(frame) -> bool:
    # A read inside a trace opened within the transform is the user's own (a jax.jit helper, a lax
    # body) only when no gradkit frame stands above: gk.jit, asking while it learns what its function
    # reads, passes the value in as an argument.
    stack = _local.stack
    return frame.staged or (stack[-1] is frame and trace_state() != frame.trace and _staging())


def assign_below(frame: Frame, var, value) -> None:
    parent = frame.parent
    if parent is not None:
        parent.assign(var, value)
    else:
        set_live(var, value)


# What jax raises when Python needs the value of a traced one (bool(x), int(x), np.asarray(x)).
TRACER_VALUE_ERRORS = (
    jax.errors.ConcretizationTypeError,
    jax.errors.TracerArrayConversionError,
    jax.errors.TracerIntegerConversionError,
)


def set_live(var, value) -> None:
    """Replace the live value of ``var``, which outlives any jax trace, so never with a tracer."""
    if isinstance(value, jax.core.Tracer):
        raise _errors.AssignmentError(_errors.MSG_TRACER_INTO_LIVE_VARIABLE.format(name=var._label()))
    var._value = value


def trace_state():
    """An opaque token for the jax trace active now (jax's own eager evaluation included)."""
    return get_opaque_trace_state(convention="gradkit")


def under_jax_trace() -> bool:
    """Whether a jax transformation (jit, grad, vmap, a lax loop's body) is tracing now."""
    return trace_state() != _EAGER_TRACE


def check_same_trace(var, value, token) -> None:
    """Refuse a traced ``value`` for ``var`` made under a trace other than ``token``'s.

    A frame that holds values for one pure call is created inside that call's trace; a
    tracer assigned while another trace is active (the body of a lax loop inside the call)
    belongs to that inner trace and would outlive it in the frame.
    """
    if isinstance(value, jax.core.Tracer) and trace_state() != token:
        raise _errors.AssignmentError(_errors.MSG_TRACER_FROM_INNER_TRANSFORM.format(name=var._label()))


class Suspend(Frame):
    """Reads and assignments go straight to the live Variables while this frame is on top.

    Used for work that must not be intercepted, such as creating a Variable's initial value.
    """

    def read(self, var):
        return live(var)

    def assign(self, var, value):
        set_live(var, value)


# The one extension point the layers above use: a function that applies an array
# function to arguments that may hold values the core does not know (the tape's lazy
# tensors). The default simply calls it.
def _default_apply(fn: Callable, *args, **kwargs):
    return fn(*args, **kwargs)


_apply: Callable = _default_apply


def apply(fn: Callable, *args, **kwargs):
    """Call ``fn(*args, **kwargs)``, letting a registered layer record it if it wants to."""
    return _apply(fn, *args, **kwargs)


def set_apply(handler: Callable) -> None:
    global _apply
    _apply = handler


def concrete(x):
    """Turn a value a layer above may have wrapped (a lazy tensor) into a JAX value."""
    get = getattr(type(x), "__gradkit_value__", None)
    if get is None:
        return x
    # Computed concretely even under a trace, as in ``live``: a layer above may cache it.
    with jax.ensure_compile_time_eval():
        return get(x)


_EAGER_TRACE = trace_state()  # jax's eager evaluation, the same in every thread
