"""``functionalize``: an imperative function over Variables as a pure function of a State.

While the function runs, a ``StateFrame`` is on the frame stack: reads of a Variable
return the frame's (possibly traced) value and assignments update the frame, never the
live Variable. The frame's contents at the end are the new State.
"""

from __future__ import annotations

import functools
import inspect
import weakref
from collections.abc import Callable
from typing import Any

import jax

from .. import _errors
from . import frames
from . import variable as _variable
from .state import State
from .variable import Variable

# The Variables a transform's call read inside a jax trace opened during the call (a jax.jit
# helper, a lax body, a jax.checkpoint function), by id: jax may keep that trace, with the traced
# value read, and hand it to a later call, which then fails with jax's UnexpectedTracerError.
_READ_IN_NESTED_TRACE: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


class StateFrame(frames.Frame):
    """Holds the values of Variables for the duration of one pure call.

    Args:
      state: the values the call starts from.
      strict: assignments to Variables outside ``state`` raise (``functionalize``);
        otherwise they are kept here and returned as part of the new State (transforms).
      on_unknown_read: called with each Variable read that ``state`` does not hold
        (``gk.jit`` uses it to learn which Variables a function reads).
      cut_assignments: an assignment ends a derivative's path, as TensorFlow's does: a later
        read has the assigned value, and its derivative is with respect to the Variable's
        value at the start of the call (``gk.jit`` under TensorFlow-parity tapes only).
      created_are_local: Variables created while the frame is open are local to the call:
        read, until assigned, as the values they were created with (a traced one is held
        here, see ``adopt_traced``; none is asked of the frames below or passed to
        ``on_unknown_read``), and assignable even when ``strict``; they stay out of the new
        State (nothing outside the call can want their values). One that is still alive
        when the call has returned (a layer built on its first call keeps its weights) was
        not local after all: see ``escaped``.
      track_reads: keep the ids of the Variables the call reads in ``read_ids``.
    """

    def __init__(
        self,
        state: State,
        *,
        strict: bool,
        on_unknown_read: Callable | None = None,
        created_are_local: bool = False,
        cut_assignments: bool = False,
        warns_if_staged: bool = False,
        track_reads: bool = False,
    ):
        # Every Variable made after this has a larger uid. (One made meanwhile by another
        # thread counts as local too: its assignments here stay here, as every assignment
        # under a transform does, instead of being refused.)
        self.first_uid = next(_variable._counter) if created_are_local else None
        self.values: dict[int, Any] = {id(v): x for v, x in state.items()}
        self.cut_assignments = cut_assignments
        self._entry: dict[int, Any] = dict(self.values) if cut_assignments else {}
        self._cut: set[int] = set()  # the Variables an assignment cut (cut_assignments)
        self.variables: dict[int, Variable] = {id(v): v for v in state.variables}
        self.assigned: dict[int, Variable] = {}
        self.strict = strict
        self.on_unknown_read = on_unknown_read
        # The Variables on_unknown_read learned of inside a jax trace opened during the call (a
        # jax.jit helper, a lax loop's body): jax may keep that trace, with the value read, for later.
        self.nested_unknown_reads: list = []
        # The Variables read during the call, by id (``track_reads``).
        self.read_ids: set[int] | None = set() if track_reads else None
        # Made inside the trace of the pure call it serves, so this is that call's trace.
        self.trace = frames.trace_state()
        # For a user's transform: whether that trace stages a program out (an outer jax.jit), where
        # a Variable outside the state read there becomes a constant jax may reuse
        # (``frames.read_outside`` warns). gradkit's own programs read such Variables knowingly.
        self.warns_if_staged = warns_if_staged
        self.staged = warns_if_staged and frames.staging()
        # Weak, so that an accumulator dies with the call that made it; one still here after
        # the call was stored somewhere that outlives it.
        self._used_locals: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
        self._assigned_locals: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
        self._traced_locals: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
        self._created_locals: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
        self._initial: dict[int, Any] = {}  # the traced initial value of each of those
        # How many times the call assigned each Variable outside it, and what it had assigned (with
        # those counts) when each of those Variables was created: gk.jit applies once the
        # assignments that computing a lifted initial value made (see ``assigned_before``).
        self.assign_counts: dict[int, int] = {}
        self._assigned_at: dict[int, list] = {}

    def hold(self, var, value) -> None:
        """Start the call with ``value`` for ``var`` as well (a Variable passed to ``gk.jit`` as an argument)."""
        self.values[id(var)] = value
        self.variables[id(var)] = var
        if self.cut_assignments:
            self._entry[id(var)] = value

    def cuts_assignments(self) -> bool:
        # A compiled call inside this one cuts its assignments when this one does.
        return self.cut_assignments

    def is_local(self, var) -> bool:
        """Whether ``var`` was created while this frame was open (with ``created_are_local``)."""
        return self.first_uid is not None and var._uid > self.first_uid

    def note_created(self, var) -> None:
        """``var`` was just created: one created during the call and still alive after it was kept
        by something that outlives the call, even if the call never read it (``kept_unused``)."""
        if self.is_local(var):
            self._created_locals[id(var)] = var

    def adopt_traced(self, var, value) -> bool:
        """Hold ``value``, a traced initial value, for ``var``, created just now during the call.

        Returns False when this frame does not keep created Variables local (the caller then
        refuses the traced value).
        """
        if not self.is_local(var):
            return False
        frames.check_same_trace(var, value, self.trace)
        key = id(var)
        self.values[key] = value
        self._used_locals[key] = var
        self._traced_locals[key] = var
        self._initial[key] = value
        self._assigned_at[key] = [(v, self.values[k], self.assign_counts[k]) for k, v in self.assigned.items()]
        return True

    def read(self, var):
        key = id(var)
        if self.read_ids is not None:
            self.read_ids.add(key)
        if key in self.values and self.is_local(var) and self._used_locals.get(key) is not var:
            # The entry of a Variable created earlier in the call and garbage-collected since,
            # whose id this one reuses: this one starts from its own initial value.
            self._forget_local(key)
        value = self.values.get(key, _MISSING)
        if id(var) in self._cut:
            # stop_gradient too, so a tape reading which inputs the program's results depend on
            # (a gradient is None where TensorFlow's is) does not see the assigned value's.
            return _read_after_cut(jax.lax.stop_gradient(value), self._entry_value(var))
        if value is _MISSING:
            if self.is_local(var):
                # Its initial value, a constant of this call: no frame below can hold it.
                self._note_local_use(var)
                return frames.live(var)
            # A Variable outside the state is a constant of this pure function.
            if self.on_unknown_read is not None:
                self.on_unknown_read(var)
                if frames.trace_state() != self.trace:
                    self.nested_unknown_reads.append(var)
                # Only a discovery trace reads it this way; its value just has to be concrete.
                return frames.concrete(frames.read_below(self, var))
            return frames.read_outside(self, var)
        if key not in _READ_IN_NESTED_TRACE and frames.trace_state() != self.trace:
            _READ_IN_NESTED_TRACE[key] = var
        return value

    def __exit__(self, exc_type, exc, tb):
        super().__exit__(exc_type, exc, tb)
        if isinstance(exc, jax.errors.UnexpectedTracerError) and not isinstance(exc, _errors.GradkitError):
            kept = [var for key, var in list(_READ_IN_NESTED_TRACE.items()) if key in self.variables]
            if kept:
                raise _errors.VariableKeptByCachedProgramError(
                    _errors.MSG_VARIABLE_TRACER_KEPT_BY_CACHED_PROGRAM.format(name=kept[0]._label())
                ) from exc
        return False

    def _forget_local(self, key) -> None:
        for table in (self.values, self._initial, self._assigned_at):
            table.pop(key, None)

    def _entry_value(self, var):
        """The value ``var`` had when the call started (learned as a read of the call)."""
        entry = self._entry.get(id(var), _MISSING)
        if entry is _MISSING:
            if self.on_unknown_read is not None:
                self.on_unknown_read(var)
                entry = frames.concrete(frames.read_below(self, var))
            else:
                entry = frames.read_below(self, var)
            self._entry[id(var)] = entry
        return entry

    def _note_local_use(self, var) -> None:
        """``var``, created during this call, was read: here and in every enclosing call it is
        local to too, so a call that keeps it (``escaped``) learns of it even when the read
        happened inside a nested transform."""
        frame = self
        while isinstance(frame, StateFrame):
            if frame.is_local(var):
                frame._used_locals[id(var)] = var
            frame = frame.parent

    def assign(self, var, value):
        frames.check_same_trace(var, value, self.trace)
        key = id(var)
        if key not in self.variables:
            if self.is_local(var):
                self.values[key] = value
                self._used_locals[key] = var
                self._assigned_locals[key] = var
                return
            if self.strict:
                raise _errors.AssignmentError(_errors.MSG_STRICT_ASSIGN.format(name=var._label(), name_plain=var.name))
            self.variables[key] = var
        self.values[key] = value
        self.assigned[key] = var
        self.assign_counts[key] = self.assign_counts.get(key, 0) + 1
        if self.cut_assignments and jax.numpy.issubdtype(var.dtype, jax.numpy.inexact):
            self._cut.add(key)

    def state(self) -> State:
        """Every Variable the frame holds, with its latest value."""
        variables = tuple(self.variables.values())
        return State._make(variables, tuple(self.values[id(v)] for v in variables))

    def assigned_state(self) -> State:
        """The Variables assigned during the call, with their final values.

        Called after the call has returned, it includes the created Variables it assigned
        that outlive it (``escaped``): their new values are wanted, as any other's.
        """
        variables = tuple(self.assigned.values()) + tuple(self.escaped(assigned=True))
        return State._make(variables, tuple(self.values[id(v)] for v in variables))

    def take_traced(self) -> list[tuple[Variable, Any]]:
        """The Variables created from a traced value that are still alive, each with that value, for a
        caller that computes their values outside the call (``gk.jit``, see ``initial_values``): valid
        once the function has returned. ``escaped`` then treats them as other created Variables."""
        kept = [(var, self._initial[id(var)]) for var in self._traced_locals.values()]
        self._traced_locals = weakref.WeakValueDictionary()
        return kept

    def assigned_before(self, var) -> list[tuple[Variable, Any, int]]:
        """The Variables outside the call that it had assigned when it created ``var`` from a traced
        value (``adopt_traced``), each with its value then and how many times it had been assigned."""
        return self._assigned_at.get(id(var), [])

    def escaped(self, *, assigned: bool = False) -> list[Variable]:
        """The Variables created during the call, read or assigned in it (or only assigned), that
        are still alive: valid only once the function has returned and its locals are gone.

        Raises if one of them started from a traced value: it has no value outside the call.
        """
        for var in self._traced_locals.values():
            mark_valueless(var)
            raise _errors.GradkitTypeError(_errors.MSG_TRACED_INITIAL_VALUE_KEPT.format(name=var._label()))
        return list((self._assigned_locals if assigned else self._used_locals).values())

    def kept_unused(self) -> list[Variable]:
        """The Variables created during the call, neither read nor assigned in it, that are still
        alive: valid only once the function has returned (as ``escaped``)."""
        return [var for key, var in list(self._created_locals.items()) if key not in self._used_locals]


_MISSING = object()


@jax.custom_jvp
def _read_after_cut(value, entry):
    """``value``, the Variable's assigned value, whose derivative is the one of ``entry``, its
    value at the start of the call: TensorFlow's read of an assigned Variable, which reaches the
    Variable and not what was assigned. A custom rule, not ``value + (entry - stop_gradient(entry))``,
    so an entry holding inf or nan leaves the value alone."""
    return value


@_read_after_cut.defjvp
def _read_after_cut_jvp(primals, tangents):
    # The primal through the rule itself, so a derivative of this derivative (a Hessian) still
    # reaches the Variable.
    return _read_after_cut(*primals), tangents[1]


def mark_valueless(var, message: str = _errors.MSG_TRACED_INITIAL_VALUE_KEPT) -> None:
    """``var``, created from a traced value and kept after its call, has no value: its placeholder
    must not be read as one later. A read raises ``message`` (formatted with the Variable's name),
    which says why it has none."""
    var._value = _NoValue(message.format(name=var._label()))


class _NoValue:
    """The live value of a Variable created from a traced value and kept after its call: it has
    none, so a read raises (until a concrete value is assigned) instead of seeing a placeholder."""

    __slots__ = ("message",)
    shown = "<none>"  # what a Variable's repr shows for its value

    def __init__(self, message: str):
        self.message = message

    def __gradkit_value__(self):
        raise _errors.GradkitTypeError(self.message)

    def __repr__(self) -> str:
        return self.shown


def values_of(tree):
    """``tree`` with every Variable replaced by its current value (outputs are never Variables)."""
    return jax.tree_util.tree_map(
        lambda x: x.value if isinstance(x, Variable) else x,
        tree,
        is_leaf=lambda x: isinstance(x, Variable),
    )


def functionalize(fn: Callable) -> Callable:
    """Turn ``fn``, which reads and assigns Variables, into a pure function of a State.

    Args:
      fn: any Python function; it may read Variables and assign them.

    Returns:
      ``f(state, *args, **kwargs) -> (out, new_state)``. Inside ``f``, reading a Variable
      that ``state`` holds returns its value in ``state`` (a tracer under ``jax.jit`` or
      ``jax.grad``), and assigning it changes only ``new_state``. ``new_state`` holds the
      same Variables as ``state``. Variables ``fn`` reads that ``state`` does not hold are
      read as constants; assigning one raises a clear error, unless ``fn`` created it during
      the call (a local accumulator): such a Variable is local to the call, and its values
      are not part of ``new_state``. No live Variable changes: call ``new_state.commit()``
      to write the result back.

    >>> import gradkit as gk, jax, jax.numpy as jnp
    >>> a, c = gk.Variable(2.0, name="a"), gk.Variable(0.0, name="c")
    >>> def step(x):
    ...     c.assign(a * x)
    ...     return c ** 2
    >>> f = gk.functionalize(step)
    >>> state = gk.State.of([a, c])
    >>> out, new_state = f(state, 3.0)
    >>> float(out), float(new_state[c]), float(c.value)
    (36.0, 6.0, 0.0)
    >>> float(jax.grad(lambda s: f(s, 3.0)[0])(state)[a])   # d(a x)^2/da = 2 a x^2
    36.0
    """

    @functools.wraps(fn)
    def pure(state: State, /, *args, **kwargs):
        if not isinstance(state, State):
            raise _errors.GradkitTypeError(
                f"a functionalized function takes a gk.State first, but got {type(state).__name__}. "
                "Call it as f(gk.State.of(variables), *args)."
            )
        frame = StateFrame(state, strict=True, created_are_local=True, warns_if_staged=True)
        with frame:
            out = values_of(fn(*args, **kwargs))
        for var in frame.escaped(assigned=True):
            # Created and assigned during the call, and kept by something that outlives it.
            raise _errors.AssignmentError(_errors.MSG_STRICT_ASSIGN.format(name=var._label(), name_plain=var.name))
        return out, frame.state()

    pure.__signature__ = _with_state_first(fn)
    return pure


def _with_state_first(fn) -> inspect.Signature:
    """``fn``'s signature with the ``state`` parameter in front: ``jax.jit`` reads a function's
    signature to place ``donate_argnums``, ``static_argnums`` and ``static_argnames``, and
    ``functools.wraps`` alone would show it ``fn``'s, one position short."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):  # no signature to read (some builtins): take any arguments
        params = [
            inspect.Parameter("args", inspect.Parameter.VAR_POSITIONAL),
            inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD),
        ]
    taken = {p.name for p in params}
    name = "state"
    while name in taken:
        name = "_" + name
    # Positional-only, as ``pure`` takes it: any kind of parameter may follow that one.
    return inspect.Signature([inspect.Parameter(name, inspect.Parameter.POSITIONAL_ONLY), *params])
