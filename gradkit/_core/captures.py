"""Values a compiled function closes over that become inputs of its program.

``gk.jit`` traces the function once and reuses the program, so a value the function closes
over would be a constant of that program. That is right for an array, but not for a value a
layer above is still recording (a tape's lazy tensor): as a constant its derivative would be
lost. Such a value is *captured* instead, as TensorFlow captures an eager tensor a
``tf.function`` closes over: it becomes an implicit input of the program, so the call that
runs the program depends on it, and a recorder of that call sees the path through it.

Each trace of a compiled function pushes a ``Scope`` holding the tracers of the captures it
already knows. The layer above asks ``value`` for what traced code should see when it uses
such an object: the tracer of the innermost trace that knows it. A trace that does not know
it notes it (the function then learns it and traces again, as for a Variable it had not
read) and sees the value the trace around it sees (its tracer, or the object's value), so a
function compiled inside another one captures through it.

Which objects are captured, and what a call passes for one, the layer above decides (``set_hooks``);
the core holds them only as keys and program inputs. A captured object is kept (held
strongly) by the function: as in TensorFlow, the program reads the value it captured at its
trace, and a call that does not trace again passes that same object.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np


class Scope:
    """One trace of a compiled function: the tracers of the captures it takes as inputs.

    ``known`` maps ``id(object)`` to the object's position among the function's captures;
    ``tracers`` holds the inputs of this trace, the first ``len(tracers)`` of them. What the
    trace uses and does not know is collected in ``found``.

    ``order``, for a trace of a program traced before (jax traces a program again when a
    recorder replays it inside another), holds the positions that earlier trace used, in the
    order it first used them. The function may close over other objects by now (a name
    rebound since): the k-th object this trace uses that it does not know stands for the k-th
    of those, if it has that capture's shape and dtype, as TensorFlow's concrete function
    keeps the inputs it captured when traced.
    """

    __slots__ = (
        "known",
        "tracers",
        "found",
        "baked",
        "_found_ids",
        "_entered",
        "_at_exit",
        "_order",
        "_slots",
        "_used",
    )

    def __init__(self, known: dict[int, int], tracers: tuple, order: tuple | None = None):
        self.known = known
        self.tracers = tracers
        self.found: list = []
        self.baked: list = []  # objects the layer above did not want captured: constants of this trace
        self._found_ids: set[int] = set()
        self._entered = None
        self._at_exit: list[Callable[[], None]] = []
        self._order = order
        self._slots: dict[int, int] = {}  # id(object) -> its position, for the objects this trace used
        self._used: list = []  # (object, position) in the order of first use; the objects held for their ids

    def tracer(self, obj) -> Any | None:
        position = self._slots.get(id(obj))
        if position is None:
            position = self._position(obj)
            if position is None:
                return None
            self._slots[id(obj)] = position
            self._used.append((obj, position))
        return self.tracers[position]

    def _position(self, obj) -> int | None:
        i = self.known.get(id(obj))
        if i is not None and i < len(self.tracers):
            return i
        k = len(self._used)
        if self._order is None or k >= len(self._order):
            return None
        i = self._order[k]
        if i >= len(self.tracers) or any(p == i for _, p in self._used) or not _same_aval(obj, self.tracers[i]):
            return None
        return i

    def order_used(self) -> tuple:
        """The positions of the captures this trace used, in the order it first used them."""
        return tuple(p for _, p in self._used)

    def note(self, obj) -> None:
        if id(obj) not in self._found_ids:
            self._found_ids.add(id(obj))
            self.found.append(obj)

    def note_baked(self, obj) -> None:
        if not any(b is obj for b in self.baked):
            self.baked.append(obj)

    def __enter__(self):
        _local.stack.append(self)
        self._entered = _isolate()
        self._entered.__enter__()
        return self

    def __exit__(self, *exc):
        try:
            while self._at_exit:
                self._at_exit.pop()()
        finally:
            try:
                self._entered.__exit__(*exc)
            finally:
                stack = _local.stack
                while stack:
                    if stack.pop() is self:
                        break
        return False


def _same_aval(obj, tracer) -> bool:
    try:
        return tuple(obj.shape) == tuple(tracer.shape) and np.dtype(obj.dtype) == np.dtype(tracer.dtype)
    except (AttributeError, TypeError):
        return False


class _Local(threading.local):
    def __init__(self):
        self.stack: list[Scope] = []


_local = _Local()


def active() -> bool:
    """Whether a compiled function is being traced in this thread."""
    return bool(_local.stack)


def top() -> Scope | None:
    stack = _local.stack
    return stack[-1] if stack else None


def at_exit(undo: Callable[[], None]) -> None:
    """Call ``undo`` when the innermost trace ends (after the ones registered later): a change the
    trace made to an object from outside it, which must not outlive the trace."""
    _local.stack[-1]._at_exit.append(undo)


def value(obj, outside: Callable[[Any], Any], local_to: Scope | None = None, capture: bool = True) -> Any:
    """What traced code sees for ``obj``, a value the layer above may want captured.

    The innermost trace that knows ``obj`` gives its tracer; with ``capture``, each trace
    above it that does not know it notes it. ``local_to`` is the trace ``obj`` was made in (its
    own value, not a capture, from that trace inward); below every trace, or from ``local_to``
    down, the value is ``outside(obj)``. A trace that knows ``obj`` (a later trace of a
    program, or one retraced inside a derivative) gives its tracer even once the layer above
    no longer asks for it to be captured, as its program takes it as an input.
    """
    stack = _local.stack
    for scope in reversed(stack):
        if scope is local_to:
            break
        tracer = scope.tracer(obj)
        if tracer is not None:
            return tracer
    else:
        scope = None
    for above in reversed(stack):
        if above is scope:
            break
        if capture:
            above.note(obj)
        else:
            # A constant of the trace for now; if the layer above starts recording it (a tape
            # watches it), the function must capture it instead (``capturable``).
            above.note_baked(obj)
    return outside(obj)


class _NoIsolation:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _default_isolate():
    return _NoIsolation()


def _default_argument(obj):
    return obj


def _default_capturable(obj) -> bool:
    return False


_isolate: Callable[[], Any] = _default_isolate
_argument: Callable[[Any], Any] = _default_argument
_capturable: Callable[[Any], bool] = _default_capturable


def set_hooks(
    isolate: Callable[[], Any], argument: Callable[[Any], Any], capturable: Callable[[Any], bool] = _default_capturable
) -> None:
    """Register the layer above's part: ``isolate()``, a context manager entered for each trace
    (the tape stops recording into its sessions, so what the function does with a captured
    object reaches ``value``); ``argument(obj)``, what a call passes for a captured object;
    ``capturable(obj)``, whether an object a trace took as a constant is one to capture now."""
    global _isolate, _argument, _capturable
    _isolate, _argument, _capturable = isolate, argument, capturable


def now_capturable(objects) -> list:
    """Those of ``objects`` (constants of some trace) that the layer above now wants captured: a
    tensor a tape has started recording since (``tape.watch`` of a closed-over constant)."""
    return [obj for obj in objects if _capturable(obj)]


def argument(obj) -> Any:
    """What a call of a compiled function passes as the input for the captured ``obj``."""
    return _argument(obj)
