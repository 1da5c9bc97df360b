"""The recording session's frame: what Variable reads and assignments do while tapes record.

While any tape records, a ``TapeFrame`` sits on the core's frame stack. A Variable read
returns a recorded tensor; where a tape first sees a Variable (its first read, watch or
assignment while recording) that tape takes the Variable's value at that moment as its
source. An assignment binds the Variable to the assigned tensor, history included, so
later reads carry the path back to the sources; for TensorFlow-parity tapes
(``track_assignments=False``) the assignment cuts the path and every later read adds to the
Variable's gradient, as in TensorFlow. The live Variables receive their new values when
the last tape stops recording.
"""

from __future__ import annotations

import os
import sys
import warnings
import weakref

import jax

from .. import _errors
from .._core import frames
from . import graph, record
from .graph import Node, Session, make_leaf
from .tensor import Tensor


class TapeFrame(frames.Frame):
    """Intercepts Variable reads and assignments for every tape of one session."""

    def __init__(self, session: Session):
        self.session = session

    def read(self, var):
        s = self.session
        bound = s.bindings.get(id(var))
        new = 0
        parity_sources = None
        if s.active:
            for tape in s.recording:
                if tape._bit & s.active:
                    src = tape._var_sources.get(id(var))
                    if src is None:
                        if tape._watch_accessed and var._trainable:
                            new |= tape._bit
                    elif not tape._track and bound is not None and not bound[0].mask & tape._bit:
                        # An assignment cut this parity tape's path (the bound value is not on it):
                        # a read still reaches the source, TensorFlow's sum over reads. Two parity
                        # tapes may share a source: its term is added once, seen by both.
                        parity_sources = parity_sources or {}
                        bits = parity_sources.get(id(src), (src, 0))[1]
                        parity_sources[id(src)] = (src, bits | tape._bit)
        if bound is None and not new:
            return self._read_below(var)
        node = self._see(var, bound, new) if new else bound
        s.handed_out.add(id(var))  # see _shareable
        if parity_sources:
            node = record.record_parity_read(node, list(parity_sources.values()), s)
        return Tensor._make(*node)

    def read_is_recorded(self, var) -> bool:
        """Whether ``read(var)`` would return a tensor these tapes record, told without reading
        when it is certain: ``var`` is bound to a recorded node, or a tape sees it first now.
        Otherwise False (the read itself then tells), as for a Variable no tape watches."""
        s = self.session
        if s is not graph.local.session:
            return False
        bound = s.bindings.get(id(var))
        if bound is not None and (bound[0].mask or bound[0].op is not None):
            return True
        if s.active and var._trainable:
            for tape in s.recording:
                if tape._bit & s.active and tape._watch_accessed and id(var) not in tape._var_sources:
                    return True
        return False

    def _see(self, var, bound, bits: int) -> tuple[Node, int]:
        """The tapes in ``bits`` see ``var`` for the first time: their source for it."""
        s = self.session
        if bound is None:
            node = make_leaf(self._read_below(var), bits, s)
            node.origin = ("variable", var)
        elif self._shareable(var, bound):
            node = bound[0]
            graph.share_source(node, bits)
        else:
            node = record.record_identity(bound[0], bound[1], bound[0].mask | bits, s, source=True)
        if bound is None or node is not bound[0]:
            s.handed_out.discard(id(var))  # a new node: no read has returned it yet
        rest = bits
        while rest:  # the tapes of the bits in ``bits`` (not a scan of every tape the session had)
            low = rest & -rest
            rest ^= low
            tape = s.tapes[low.bit_length() - 1]
            if tape is not None:
                tape._var_sources[id(var)] = node
                tape._watched_vars.setdefault(id(var), var)
        s.bindings[id(var)] = (node, 0)
        s.variables[id(var)] = var
        return node, 0

    def _read_below(self, var):
        """The value of ``var`` below these tapes; read directly (no gradkit transform above
        passes it in) inside a plain ``jax.jit`` or a lax loop's body, with no gradkit transform
        below, it is a constant of the program jax compiles and reuses, so it warns as a read
        without a tape does."""
        if self.parent is None and frames.top() is self and frames.staging():
            warnings.warn(
                _errors.MSG_VARIABLE_READ_AS_CONSTANT.format(name=var._label()),
                _errors.GradkitWarning,
                stacklevel=_user_stacklevel(),
            )
        return frames.read_below(self, var)

    def _shareable(self, var, bound) -> bool:
        """Whether tapes seeing ``var`` for the first time can take the source node another
        tape has for it, instead of a new node after it.

        They can when that node is another tape's source and no read has handed it out yet
        (the other tape only watched it): then no op uses it, and every use from now on is
        one the new tapes see. Sharing keeps their source outside the other tape's part of
        the graph, so a derivative that tape takes while they record (a gradient, a
        Jacobian, a JVP, recorded as one op over what that part reads) still has their
        source among its inputs.
        """
        s = self.session
        node = bound[0]
        if bound[1] != 0 or id(var) in s.handed_out:
            return False
        return any(tape._var_sources.get(id(var)) is node for tape in s.recording)

    def cuts_assignments(self) -> bool:
        # Only when every tape recording now is a parity tape: a compiled call (tf.function)
        # is one op for all of them, and tracking tapes want the path through an assignment.
        s = self.session
        tapes = [tape for tape in s.recording if tape._bit & s.active]
        return bool(tapes) and not any(tape._track for tape in tapes)

    def watch(self, tape, var):
        s = self.session
        if id(var) not in tape._var_sources:
            self._see(var, s.bindings.get(id(var)), tape._bit)

    def created(self, var, value):
        """``var`` was just made from ``value``: where a tape records ``value`` (``tf.Variable(a + b)``
        inside the tape), the path to ``a`` and ``b`` runs through the new Variable as through an
        assignment, and ``value`` is the Variable's entry value: a source of its own for the tapes
        that watch what they read, as a watched intermediate tensor is (its gradient exists, and
        so do ``a``'s and ``b``'s). A parity tape cuts the path to ``a`` and ``b``, as TensorFlow."""
        s = self.session
        if not (isinstance(value, Tensor) and value._node.session is s and value._node.mask & s.active):
            return
        if s.parity_bits & s.active:
            self.assign(var, value)
            return
        bound = (value._node, value._index)
        s.bindings[id(var)] = bound
        s.variables[id(var)] = var
        s.handed_out.discard(id(var))
        watching = 0
        for tape in s.recording:
            if tape._bit & s.active and tape._watch_accessed and var._trainable:
                watching |= tape._bit
        if watching:
            self._see(var, bound, watching)

    def assign(self, var, value):
        s = self.session
        if not (isinstance(value, Tensor) and value._node.session is s):
            value = frames.concrete(value)
            if isinstance(value, jax.core.Tracer) and frames.trace_state() != s.trace:
                # Traced by a jax transform these tapes do not record in (a plain jax.jit,
                # vmap or lax body): bound here, the tracer would outlive that transform.
                # Refused before anything changes, as without a tape.
                msg = _errors.MSG_TRACER_FROM_INNER_TRANSFORM
                if s.trace == graph.EAGER_TRACE:
                    msg = _errors.MSG_TRACER_INTO_LIVE_VARIABLE
                raise _errors.AssignmentError(msg.format(name=var._label()))
        watching = 0  # the tapes with a source for var
        for tape in s.recording:
            if id(var) in tape._var_sources:
                watching |= tape._bit
            elif tape._bit & s.active and tape._watch_accessed and var._trainable:
                self._see(var, s.bindings.get(id(var)), tape._bit)
                watching |= tape._bit
        if isinstance(value, Tensor) and value._node.session is s:
            node, index = value._node, value._index
        else:
            node, index = make_leaf(value, 0, s), 0
        missing = watching & s.active & ~node.mask & ~s.parity_bits
        if missing:
            # A value no tape watching the Variable records (a constant): TensorFlow watches
            # every read of a watched Variable, so what is computed from it is on those tapes,
            # and a gradient with respect to such an intermediate exists. It is still not a
            # path to the Variable's source (its value does not depend on it).
            node, index = record.record_identity(node, index, node.mask | missing, s), 0
        parity = node.mask & s.parity_bits
        if parity:
            node = record.record_identity(
                node,
                index,
                node.mask & ~parity,
                s,
                cut=("assignment (track_assignments=False)", graph.user_site(), parity),
            )
            index = 0
        s.bindings[id(var)] = (node, index)
        s.variables[id(var)] = var
        s.assign_sites[id(var)] = graph.user_site()
        s.handed_out.discard(id(var))

    def write_back(self):
        """Give the live Variables the values assigned while recording."""
        s = self.session
        finals = {}
        assigned = []
        for key, (node, index) in list(s.bindings.items()):
            var = s.variables[key]
            base = node
            while base.op is not None and base.op.kind == "identity":
                # Where a later tape first saw the Variable (or a parity tape cut it): the
                # same value, so a Variable only ever read is still unchanged.
                base = base.inputs[0][0]
            if base.op is None and base.origin is not None and base.origin[1] is var:
                finals[key] = (node, index, _held_below(self, var))  # only ever read: unchanged
            else:
                assigned.append((key, node, index, var))
        if self.parent is None and assigned and frames.under_jax_trace():
            # A tape inside a plain jax.jit / jax.grad / lax loop: its values are that trace's
            # tracers, which must not outlive it in a live Variable. Refused before any is
            # written, as a plain assignment there is (gk.jit threads them out instead).
            for _, node, index, var in assigned:
                if isinstance(record.materialize(node)[index], jax.core.Tracer):
                    raise _errors.AssignmentError(_errors.MSG_TRACER_INTO_LIVE_VARIABLE.format(name=var._label()))
        for key, node, index, var in assigned:
            if self.parent is None and node.values is None:
                # Left pending: computed at the first read, or never if overwritten first
                # (a training loop that resets its weights before the next step).
                var._value = Tensor._make(node, index)
            else:
                frames.assign_below(self, var, record.materialize(node)[index])
            finals[key] = (node, index, _held_below(self, var))
        # Every tape of the session that can still use them gets them, not only the tapes
        # entered in this stretch of recording: a tape left out of it (entered again, later,
        # on its own or first) reopens the session from these bindings, so they must be what
        # the session left. Its own older ones would rebind a Variable that another tape's
        # recorded assignment changed meanwhile to a constant, cutting that tape's path too.
        # (An assignment a tape did not record is still a constant for it: the node's mask
        # lacks its bit.)
        for tape in list(s.members):
            if tape._session is s and (tape._persistent or not tape._used):
                tape._final_bindings = finals
        s.bindings.clear()


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _user_stacklevel() -> int:
    """The ``stacklevel`` that points a warning issued by this module's caller at the first
    line outside gradkit (a read reaches the tape through several of its frames)."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    return level


def begin(tape) -> Session:
    s = graph.local.session
    if s is None or frames.top() is not s.frame:
        # No session, or a frame above it (a gk.jit step traced while a tape records): the
        # tape records in a session of its own, nested in that one until it ends.
        outer = s
        s = graph.local.session = Session()
        s.outer = outer
        s.frame = TapeFrame(s)
        s.frame.__enter__()
        _homes[s] = (_ref(outer), _ref(s.frame.parent))
    tape._bit = s.new_bit(tape)
    tape._session = s
    _join(tape, s)
    return s


# Session -> (its outer session, the frame below its TapeFrame), as weak references: where
# it was opened, so that a tape entered again continues it only from the same place.
_homes: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _ref(obj):
    return None if obj is None else weakref.ref(obj)


def _is(ref, obj) -> bool:
    return obj is None if ref is None else (obj is not None and ref() is obj)


def _join(tape, s) -> None:
    s.recording.append(tape)
    s.active |= tape._bit
    if not tape._track:
        s.parity_bits |= tape._bit


def resume(tape) -> None:
    """Record on ``tape`` again, in the session it recorded in before (TensorFlow's tape
    entered again: what it records now connects to what it recorded then, and what ran in
    between is not recorded, as under ``stop_recording``).

    If another tape still keeps that session recording, the tape simply rejoins it. If the
    session has ended, it is reopened, with each Variable bound again to the value it had
    when the session ended, unless it was assigned since (then to that new value, which
    does not depend on this tape's sources).
    """
    s = tape._session
    current = graph.local.session
    if s.frame is not None:
        if current is not s or frames.top() is not s.frame:
            raise _errors.GradkitRuntimeError(_MSG_RESUME_ELSEWHERE)
    else:
        home = _homes.get(s)
        if home is None or not (_is(home[0], current) and _is(home[1], frames.top())):
            raise _errors.GradkitRuntimeError(_MSG_RESUME_ELSEWHERE)
        _reopen(tape, s, current)
    s.tapes[tape._bit.bit_length() - 1] = tape
    _join(tape, s)


def _reopen(tape, s, outer) -> None:
    s.tapes = [None] * s.alive.bit_length()  # by bit position: a tape entered now gets a new bit
    for key, (node, index, value) in tape._final_bindings.items():
        var = s.variables[key]
        if unchanged(s, var, node, index, value):
            s.bindings[key] = (node, index)
        elif key in tape._var_sources:
            # Assigned while nothing recorded: later reads see the new value, cut from this
            # tape's source (a parity tape adds their gradient to the Variable's, as TensorFlow does).
            leaf = make_leaf(frames.read(var), 0, s)  # read where the tape is entered (a gk.jit step's value)
            leaf.origin = ("variable", var)
            s.bindings[key] = (leaf, 0)
    s.outer = outer
    s.frame = TapeFrame(s)
    s.frame.__enter__()
    graph.local.session = s


def _held_below(frame, var):
    """What ``var`` holds just below ``frame``, without computing a pending value. Inside a
    ``gk.jit`` step or a transform that is the value its frame keeps, not the live one."""
    return var._value if frame.parent is None else frames.read_below(frame, var)


def unchanged(s, var, node, index, value) -> bool:
    """Whether ``var`` still holds the value session ``s``, which recorded ``node``, left it
    (an assignment since, even inside the same ``gk.jit`` step, replaces that value)."""
    home = _homes.get(s)
    below = home[1]() if home is not None and home[1] is not None else None
    live = below.read(var) if below is not None and frames.is_open(below) else var._value
    return live is value or (node.values is not None and live is node.values[index])


_MSG_RESUME_ELSEWHERE = (
    "this GradientTape is entered again, but where it recorded before (its earlier 'with' block) is not "
    "where it is entered now: another tape, gk.jit step or transform began recording in between and is "
    "still open, so what the tape recorded then could not connect to what it records now. Enter it again "
    "where it was entered first (outside that other block), or start over with a new tape."
)


def end(tape) -> None:
    s = tape._session
    if s is None or tape not in s.recording:
        return
    s.recording.remove(tape)
    s.active &= ~tape._bit
    if not s.recording:
        try:
            s.frame.write_back()
        finally:
            s.frame.__exit__(None, None, None)
            graph.local.session, s.outer = s.outer, None
            # Nothing records in this session any more. Drop what only recording needed, so
            # that the session's references to its tapes, frame and constants (copies of the
            # data a step used) do not outlive the step waiting for the cyclic collector.
            s.frame = None
            s.tapes = []
            s.constants = {}
