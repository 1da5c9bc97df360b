"""The tape's part in capturing what a compiled function closes over (``_core/captures.py``).

While ``gk.jit`` or ``tf.function`` traces a function, no session records: a tensor a tape
records outside the trace is then not recorded in the current session, so every use of it
asks ``record.value_of``, which hands out the trace's input for it. A call of the compiled
function passes the tensor itself where the session recording now recorded it (so the call is
recorded over it, and a gradient flows through the capture), and its value otherwise.
"""

from __future__ import annotations

from . import graph, record


class _OutsideSessions:
    """No session records while a compiled function is traced; the one before is restored after."""

    __slots__ = ("_saved",)

    def __enter__(self):
        self._saved = graph.local.session
        graph.local.session = None
        return self

    def __exit__(self, *exc):
        graph.local.session = self._saved
        return False


def outside_sessions() -> _OutsideSessions:
    return _OutsideSessions()


def argument(obj):
    """What a call passes for a captured tensor: itself where this session records it, else its value
    (in a trace around the call, that trace's input for it)."""
    if not isinstance(obj, record.Tensor):
        return obj
    session = graph.local.session
    if session is not None and obj._node.session is session:
        return obj
    return record.value_of(obj)
