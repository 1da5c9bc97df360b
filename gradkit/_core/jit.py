"""``gk.jit``: compile an imperative function that reads and assigns Variables.

Like ``tf.function``: the Variables the function reads become arguments of the compiled
program (so new values never force a recompile and are never baked in), and the
assignments it makes are written back to the Variables after each call. The Variables a
function reads are learned while it is traced; one it had not read before (a new Python
branch) triggers one retrace with the larger set.

The compiled program takes the Variables' values as a tuple and returns the assigned ones
in a dict keyed by small ints: builtin pytrees, which jax flattens and rebuilds without
calling back into Python, so a call costs little more than a ``jax.jit`` call. The list of
Variables read only ever grows, so a tuple's length names the Variables it holds (the first
that many of the list), and a larger set retraces because the tuple is longer.

A Variable passed as an argument is handed to the function as itself, read and assigned as
one it closes over (``jit_arguments``); its value is an input of that call only, and its
assignment comes back under a negative int.

A value the function closes over that a layer above is recording (a tape's tensor) is
captured (``captures``): the program takes it as an input after the Variables' values, as
TensorFlow takes a ``tf.function``'s captured inputs, so a recorder of the call sees the
path through it. The captures are learned while tracing, as the Variables read are, and
their list too only grows. A capture is the value seen when traced: each trace takes the
captures there were when it was made (a prefix of the list, counted per argument
signature), so a later call with the same signature reuses that trace and what it captured,
as TensorFlow's concrete function keeps its captured inputs, rather than retracing to read
the closure again.

A call a layer above records (a tape) is handed the program traced for it (``jit_replay``), so
computing it later runs that trace, as ``jax.jit`` reuses a trace, rather than the Python body
with the Python values it reads as they are by then.

A program that holds runtime checks (``runtime_checks``: ``tf.debugging`` asserts on traced
values) is waited for, its results a tape would leave pending computed, before the call returns
or writes back anything, so a failed check raises its own error from the call and changes no
Variable (a failed call never does). TensorFlow's ``tf.function`` keeps the assignments that ran
before its failed assert.
"""

from __future__ import annotations

import functools
import inspect
import numbers
import operator
import re
import types
import weakref
from collections.abc import Callable, Sequence

import jax
import numpy as np

from .. import _errors
from . import captures, frames, initial_values, jit_arguments, jit_replay, runtime_checks
from . import operators as operators_module
from .functionalize import StateFrame, mark_valueless, values_of
from .programs import array_like, is_value
from .state import State, _Keys, check_live_assignments
from .transforms import check_callable, int_or_ints
from .variable import owned_array

# The attribute under which a layer above leaves a value it gave a Variable while the trace that
# created it ran (deferred checkpoint restoration): the Variable starts from it, not from its
# lifted initial value.
VALUE_GIVEN_AT_CREATION = "_gradkit_value_given_at_creation"


class JitFunction:
    """A compiled imperative function; call it like the original.

    A Variable its first call creates from a traced value and keeps (a layer built on that call)
    starts from that value computed once, outside the call, when it depends on none of the call's
    arguments (``initial_values``); ``init_arguments`` maps the position of an argument such a value
    may read anyway to what it reads there instead (given the call's argument).
    ``on_created_kept`` is called inside each trace that creates Variables and keeps them, with
    those Variables, and ``used=False`` for those the call never read nor assigned (a trace
    repeated during one call may make them anew); it may raise to refuse them (before anything
    is assigned).
    """

    def __init__(
        self,
        fn: Callable,
        static_argnums: Sequence[int] = (),
        static_argnames: Sequence[str] = (),
        init_arguments: dict[int, Callable] | None = None,
        on_created_kept: Callable | None = None,
    ):
        self._fn = fn
        self._init_arguments = dict(init_arguments or {})
        self._on_created_kept = on_created_kept
        self._lifting = False  # whether the trace running now may lift initial values (_discover's)
        self._lifted: list = []  # the Variables whose initial values that trace returns
        # Of each Variable that trace had assigned when it created the last of them: how many times
        # then and in all (its value then is returned after the initial values).
        self._lifted_assigned: list = []
        self._assign_counts: dict[int, int] = {}  # how many times the last trace assigned each Variable
        self._unlifted = None  # the assignments computing the initial values made, until the call's trace is known
        self._initial_assigned: list = []  # (Variable, value) the next call that succeeds starts from and keeps
        self._reads: list = []  # only appended to: its first n entries never change
        self._read_ids: set[int] = set()
        self._written: list = []  # Variables some trace assigned, by the ints the program returns
        self._written_index: dict[int, int] = {}
        self._discovered: list = []
        # The values the function closes over that are program inputs (captures.py), by position;
        # like _reads, only appended to.
        self._captures: list = []
        self._capture_ids: dict[int, int] = {}
        self._captured: list = []  # captures the last trace used and did not know
        # Of the last complete trace for each argument signature (``_signature``): how many captures
        # it took, and the positions of those it used, in the order it first used them.
        self._traced_captures: dict = {}
        # Objects traces took as constants that a layer above may yet want captured (a closed-over
        # tensor a tape starts watching after the first call): weakly, checked at each call.
        self._baked: list = []
        self._baked_ids: set[int] = set()
        self._created_kept: list = []  # Variables the last trace created that outlive it
        self._stable = False  # whether _reads holds every Variable the calls so far read
        self._nested_reads: list = []  # what the last trace learned inside nested jax traces
        self._keys = _Keys(())  # the State structure of a prefix of _reads, made at the last trace
        self.trace_count = 0
        self._holds_checks = False  # whether a trace put a runtime check into the program
        static_argnums = int_or_ints(static_argnums, "gk.jit: static_argnums")[1]
        static_argnames = (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames)
        static_argnums, static_argnames = _static_both_ways(fn, static_argnums, static_argnames)
        self._static_argnums, self._static_argnames = static_argnums, static_argnames
        self._bound: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._replays = jit_replay.Replays(static_argnums, static_argnames, getattr(fn, "__name__", "jit_function"))
        # The program, and the one a call recorded only by TensorFlow-parity tapes runs, whose
        # assignments cut the derivative's path inside it as such a tape does outside.
        self._jitted, self._jitted_cut = (
            jax.jit(
                pure,
                static_argnums=tuple(i + 1 for i in static_argnums),
                static_argnames=tuple(static_argnames),
            )
            for pure in (self._pure, self._pure_cut)
        )
        for jitted in (self._jitted, self._jitted_cut):
            # A tape recording a call reads from the program which inputs its outputs depend on:
            # a gradient with respect to an argument or Variable the function does not use is
            # None, as for TensorFlow's tf.function (the results together: see dependence.py).
            jitted.per_output_dependence = True
            jitted.returns_read_together = True
        functools.update_wrapper(self, fn)

    def _note_read(self, var):
        if id(var) not in self._read_ids:
            self._discovered.append(var)

    def _pure(self, inputs: tuple, /, *args, **kwargs):
        # inputs (the Variables' values, the captured values) is positional-only: the function's
        # own keyword arguments may use any name.
        return self._trace(inputs, args, kwargs, cut_assignments=False)

    def _pure_cut(self, inputs: tuple, /, *args, **kwargs):
        return self._trace(inputs, args, kwargs, cut_assignments=True)

    def _trace(self, inputs: tuple, args, kwargs, *, cut_assignments: bool):
        self.trace_count += 1
        values, captured = inputs
        signature = self._signature(args, kwargs)
        before = self._traced_captures.get(signature)
        keys = self._keys  # read once: another thread may trace with another length
        if len(keys.vars) != len(values):
            keys = self._keys = _Keys(tuple(self._reads[: len(values)]))
        state = State._make(keys, values)
        frame = StateFrame(
            state,
            strict=False,
            on_unknown_read=self._note_read,
            created_are_local=True,
            cut_assignments=cut_assignments,
            track_reads=True,
        )
        args, kwargs, marked = jit_arguments.unmark(args, kwargs, self._static_argnums, self._static_argnames)
        for arg in marked:
            frame.hold(arg.var, arg.value)
        arg_slots = jit_arguments.slots(marked)
        # Traced again for the same signature and captures (jax retraces a program that a tape replays
        # in another program), the function may close over other tensors by now: it still takes
        # what this signature's trace captured, by the order it used them (see captures.Scope).
        order = before[1] if before is not None and before[0] == len(captured) else None
        scope = captures.Scope(self._capture_ids, captured, order)
        checks_before = runtime_checks.count()
        try:
            with frame, scope:
                out = values_of(self._fn(*args, **kwargs))
            _check_outputs(out, self._fn)
            if runtime_checks.count() != checks_before:
                self._holds_checks = True
        except BaseException as error:
            # A Variable the failed call created from a traced value and stored somewhere has no
            # value: reading it later raises instead of seeing its placeholder.
            for var, _ in frame.take_traced():
                mark_valueless(var, _errors.MSG_CREATED_BY_FAILED_CALL)
            needed = _variable_value_needed(
                error, keys.vars, bool(keys.vars or self._discovered), getattr(self._fn, "__name__", "the function")
            )
            if needed is not None:
                raise needed from error
            raise
        self._check_nested_reads(frame)
        # Kept Variables created from traced values: their initial values are returned too, for
        # _discover to compute outside the call. Only a discovery trace can: a call's own trace would
        # compute them with the call instead of once.
        lifted = frame.take_traced()
        # A Variable created during this trace and kept by something that outlives it (a layer
        # built on its first call) is read by later calls: learn it as one this function reads.
        escaped = frame.escaped()
        try:
            if escaped and self._on_created_kept is not None:
                self._on_created_kept(escaped)
            unused = frame.kept_unused()
            if unused and self._on_created_kept is not None:
                self._on_created_kept(unused, used=False)
            if lifted and not self._lifting:
                raise _errors.GradkitTypeError(_errors.MSG_TRACED_INITIAL_VALUE_KEPT.format(name=lifted[0][0]._label()))
        except BaseException:
            for var, _ in lifted:
                mark_valueless(var)
            raise
        for var in escaped:
            self._note_read(var)
        self._captured = scope.found
        for obj in scope.baked:
            if id(obj) not in self._baked_ids:
                self._baked_ids.add(id(obj))
                self._baked.append(_weak(obj))
        if not scope.found:
            # Every complete trace, with captures or not: one made before the function captured
            # anything keeps taking none.
            self._traced_captures[signature] = (len(captured), scope.order_used())
        self._created_kept = escaped
        self._assign_counts = frame.assign_counts
        assigned = frame.assigned_state().items()
        result = out, {arg_slots.get(id(var)) or self._slot(var): value for var, value in assigned}
        if lifted:
            # Never a call's program: learning the created Variables retraces with more values.
            self._lifted = [var for var, _ in lifted]
            before = frame.assigned_before(lifted[-1][0])
            self._lifted_assigned = [(var, count, frame.assign_counts[id(var)]) for var, _, count in before]
            return (*result, tuple(value for _, value in lifted), tuple(value for _, value, _ in before))
        return result

    def _check_nested_reads(self, frame: StateFrame) -> None:
        """Refuse a program that lost a Variable the previous trace read inside a nested jax trace.

        A discovery trace reads a Variable it does not know yet as a constant. Read inside a
        function jax caches (a ``jax.jit`` helper, a lax body defined once), that constant stays in
        jax's cache: the next trace, which takes the Variable as an input, reuses the cached program
        without reading it, and would compute with the old value for good. (A Variable the
        function also reads elsewhere goes unnoticed here.)"""
        lost = [var for var in self._nested_reads if id(var) in frame.variables and id(var) not in frame.read_ids]
        # A lost one stays lost: jax's cache keeps the constant, so every later trace must be refused too.
        self._nested_reads = frame.nested_unknown_reads + lost
        if lost:
            raise _errors.GradkitRuntimeError(
                _errors.MSG_VARIABLE_READ_BY_CACHED_PROGRAM.format(
                    fn=getattr(self._fn, "__name__", "the function"), name=lost[0]._label()
                )
            )

    def _slot(self, var) -> int:
        """The int that stands for ``var`` among the assigned values the program returns."""
        slot = self._written_index.get(id(var))
        if slot is None:
            slot = self._written_index[id(var)] = len(self._written)
            self._written.append(var)
        return slot

    def __call__(self, *args, **kwargs):
        marked = ()
        if not (all(map(_plain, args)) and all(map(_plain, kwargs.values()))):
            args, kwargs, marked = jit_arguments.mark(
                args, kwargs, self._static_argnums, self._static_argnames, frames.read
            )
        jitted = self._jitted_cut if frames.cuts_assignments() else self._jitted
        try:
            if not self._stable:
                self._discover(args, kwargs, jitted)
            self._discovered = []
            self._captured = []
            if self._baked:
                self._capture_late()
            n = self._capture_count(args, kwargs) if self._captures else 0
            out, assigned = self._run(args, kwargs, jitted, n)
            if self._discovered or self._captured:
                # A retrace (new argument shapes, another Python branch) read Variables this
                # function had not read before, or used a value to capture it did not know, so
                # their values were baked in: learn them and run again with them as inputs.
                self._learn()
                self._discover(args, kwargs, jitted)
                n = len(self._captures)
                out, assigned = self._run(args, kwargs, jitted, n)
            if self._holds_checks:
                self._finish_checks(out, assigned, args, kwargs, jitted, n)
        except TypeError:
            # Looked for only after jax has refused a call, so a good call pays nothing.
            self._check_arguments(args, kwargs)
            raise
        except Exception as error:  # noqa: BLE001 - only a failed runtime check is replaced
            failed = runtime_checks.failed_check(error)
            if failed is None:
                raise
            raise failed from None  # the failed check's own error, not the runtime's report of it
        # Every value was checked by Variable.assign while tracing: write them back as they are,
        # once none is a tracer a live Variable would refuse (under jax.vmap or jax.grad), so a
        # refusal changes none.
        written = self._written
        if marked:
            # The Variable arguments' slots count back from -1: marked[0] is the last entry.
            written = [*written, *reversed(marked)]
        initial_assigned = self._initial_assigned
        if frames.idle() and not initial_assigned and _all_arrays(assigned.values()):
            # The live values are replaced, and none is a tracer: what frames.assign would do.
            for slot, value in assigned.items():
                written[slot]._value = value
            return out
        pairs = [(written[slot], value) for slot, value in assigned.items()]
        if initial_assigned:
            # The call started from them: kept where the call did not assign the Variable again.
            called = {id(var) for var, _ in pairs}
            pairs += [(var, value) for var, value in initial_assigned if id(var) not in called]
        _learn_array_types(assigned.values())
        check_live_assignments(pairs)
        self._initial_assigned = []
        for var, value in pairs:
            frames.assign(var, value)
        return out

    def _run(self, args, kwargs, jitted, n: int):
        # The first n captures: those the trace for these arguments' signature took.
        captured = tuple(map(captures.argument, self._captures[:n])) if n else ()
        if self._initial_assigned:
            # The first call after an initializer that assigned Variables starts from those values.
            start = {id(var): value for var, value in self._initial_assigned}
            values = tuple(start[id(var)] if id(var) in start else frames.read(var) for var in self._reads)
            return self._apply(jitted, (values, captured), args, kwargs)
        if frames.idle() and all(map(_plain, args)) and all(map(_plain, kwargs.values())):
            # Nothing above the core can want to see this call (no tape or transform is
            # active, and the arguments are plain arrays): call the compiled program directly.
            values = tuple(map(_live_value, self._reads))
            if not _all_arrays(values):  # a value a layer above left pending, or a type not yet met
                values = tuple(map(frames.live, self._reads))
                _learn_array_types(values)
            return jitted((values, _concrete(captured) if captured else ()), *args, **kwargs)
        return self._apply(jitted, (tuple(map(frames.read, self._reads)), captured), args, kwargs)

    def _apply(self, jitted, inputs: tuple, args, kwargs):
        # Through frames.apply, so a layer above may record the call: as the program traced now
        # (jit_replay), which it may compute later, when the Python the function reads has changed.
        return frames.apply(self._replays.of(jitted, inputs, args, kwargs), inputs, *args, **kwargs)

    def _capture_count(self, args, kwargs) -> int:
        """How many captures a call takes: as many as the trace for its signature took (all for a
        signature not traced yet)."""
        before = self._traced_captures.get(self._signature(args, kwargs))
        return len(self._captures) if before is None else before[0]

    def _signature(self, args, kwargs) -> tuple:
        """What jax's cache tells this call's trace by: the arguments' structure, the static ones'
        values, and the other leaves' shapes and dtypes, the same for a call's values and a trace's
        tracers (weak types aside: two signatures that differ only there share the count, and a
        trace given too few captures finds the missing ones, as a first trace does)."""
        statics = [(i, a) for i, a in enumerate(args) if i in self._static_argnums]
        statics += [(k, a) for k, a in kwargs.items() if k in self._static_argnames]
        dynamic = [a for i, a in enumerate(args) if i not in self._static_argnums]
        dynamic_kw = {k: a for k, a in kwargs.items() if k not in self._static_argnames}
        leaves, treedef = jax.tree_util.tree_flatten((dynamic, dynamic_kw), is_leaf=_is_wrapped)
        return treedef, tuple(map(_leaf_signature, leaves)), tuple((k, jit_replay.static_key(a)) for k, a in statics)

    def _finish_checks(self, out, assigned, args, kwargs, jitted, n: int) -> None:
        """Run the runtime checks of the call just made now: wait for its program, computing the
        results a tape left pending. Inside another trace the checks belong to that trace's
        program, which is told it holds them."""
        if runtime_checks.in_trace():
            runtime_checks.note()
            return
        if runtime_checks.run_now((out, list(assigned.values()))):
            return
        ran_directly = (
            not self._initial_assigned
            and frames.idle()
            and all(map(_plain, args))
            and all(map(_plain, kwargs.values()))
        )
        if not ran_directly:
            # A layer above recorded the call, which returns and assigns nothing it would ever
            # compute: run the program now, for its checks alone.
            values = _concrete(tuple(map(frames.read, self._reads)))
            captured = _concrete(tuple(map(captures.argument, self._captures[:n])))
            jax.block_until_ready(jitted((values, captured), *_concrete(args), **_concrete(kwargs)))
            runtime_checks.wait_for_effects()

    def _check_arguments(self, args, kwargs) -> None:
        """Raise a clear error for a non-static argument that cannot be an array."""
        dynamic = [(i, a) for i, a in enumerate(args) if i not in self._static_argnums]
        dynamic += [(k, a) for k, a in kwargs.items() if k not in self._static_argnames]
        for where, arg in dynamic:
            bad = next((x for x in jax.tree_util.tree_leaves(arg, is_leaf=is_value) if not array_like(x)), None)
            if bad is None:
                continue
            if isinstance(where, str):
                name, mark = where, f"static_argnames=({where!r},)"
            else:
                name = _parameter_name(self._fn, where)
                # On a method, static_argnums count self as argument 0.
                number = where + 1 if isinstance(self._fn, types.MethodType) else where
                mark = f"static_argnums=({number},)" + (f" or static_argnames=({name!r},)" if name else "")
            what = repr(bad) if isinstance(bad, (str, bytes)) else f"a value of type {type(bad).__name__}"
            raise _errors.GradkitTypeError(
                f"gk.jit: argument {name or where} of {getattr(self._fn, '__name__', 'the function')} is (or holds) "
                f"{what}, which cannot be an argument of the compiled program: only arrays and numbers can, as "
                f"the program is traced for their shapes and dtypes, not their values. Mark it static, "
                f"gk.jit(fn, {mark}), to compile once per value (it must be hashable), or close over it "
                "(functools.partial, or a Python variable the function reads) so it is fixed when traced."
            ) from None

    def _discover(self, args, kwargs, jitted=None):
        """Trace (without compiling) until the set of Variables the function reads is stable.

        The call that follows reuses the last trace from jax's cache, so a step compiles once
        even when its first trace finds the Variables it reads.
        """
        created_before = False
        while True:
            self._discovered = []
            self._captured = []
            self._created_kept = []
            values = _concrete(tuple(map(frames.read, self._reads)))
            captured = _concrete(tuple(map(captures.argument, self._captures)))
            concrete_args, concrete_kwargs = _concrete(args), _concrete(kwargs)
            self._lifted = []
            self._lifting = True
            try:
                traced = (jitted or self._jitted).trace((values, captured), *concrete_args, **concrete_kwargs)
            finally:
                self._lifting = False
            if self._lifted:
                self._lift(traced, values + captured, concrete_args, concrete_kwargs)
            if not (self._discovered or self._captured):
                if self._unlifted is not None:
                    self._take_initial_assignments()
                self._stable = True
                return
            if self._created_kept and created_before:
                # Each trace makes new Variables that outlive it: learning them would trace again
                # forever. tf.function refuses this too.
                raise _errors.GradkitRuntimeError(
                    _errors.MSG_JIT_CREATES_EACH_TRACE.format(
                        fn=getattr(self._fn, "__name__", "the function"), name=self._created_kept[0]._label()
                    )
                )
            created_before = bool(self._created_kept)
            self._learn()

    def _lift(self, traced, values, args, kwargs) -> None:
        """Start each Variable the trace created from a traced value and kept from that value, computed
        from the program ``traced`` (whose last outputs they are) without running the call."""
        variables, self._lifted = self._lifted, []
        assigned, self._lifted_assigned = self._lifted_assigned, []
        # The program's inputs, flattened as jax.jit flattens them: the Variables' values and the
        # captured values (readable: their values now), then each argument that is not static. A
        # Variable passed as an argument is read as one the function closes over, so its value is
        # readable too.
        inputs, readable = list(values), [True] * len(values)
        dynamic = [(i, a) for i, a in enumerate(args) if i not in self._static_argnums]
        dynamic.append((None, {k: v for k, v in kwargs.items() if k not in self._static_argnames}))
        for position, arg in dynamic:
            replace = self._init_arguments.get(position)
            if replace is not None:
                leaves = jax.tree_util.tree_leaves(replace(arg))
                inputs += leaves
                readable += [True] * len(leaves)
                continue
            for leaf in jax.tree_util.tree_leaves(arg, is_leaf=jit_arguments.is_variable_argument):
                leaves = jax.tree_util.tree_leaves(leaf)
                inputs += leaves
                readable += [jit_arguments.is_variable_argument(leaf)] * len(leaves)
        # The program's last outputs: the initial values, then the values of the Variables it had assigned.
        first = len(traced.jaxpr.jaxpr.outvars) - len(variables) - len(assigned)
        outputs = range(first, first + len(variables))
        try:
            initial = initial_values.lift(traced.jaxpr, outputs, inputs, readable)
        except (initial_values.ReadsArgument, initial_values.ReadsTraced) as e:
            message = (
                _errors.MSG_INITIAL_VALUE_READS_ARGUMENTS
                if isinstance(e, initial_values.ReadsArgument)
                else _errors.MSG_INITIAL_VALUE_READS_TRACED
            )
            fn = getattr(self._fn, "__name__", "the function")
            for var in variables:
                # A later read says why it has no value: the same refusal, about that Variable.
                mark_valueless(var, message.replace("{fn}", fn))
            raise _errors.GradkitTypeError(message.format(name=variables[0]._label(), fn=fn)) from None
        with jax.ensure_compile_time_eval():  # concrete even while an outer trace is active
            for var, value in zip(variables, initial):
                # A value given to the Variable while the trace that created it ran (a checkpoint
                # restoring it at its creation) replaces the initial value, as it would have eagerly.
                given = getattr(var, "__dict__", {}).pop(VALUE_GIVEN_AT_CREATION, None)
                frames.set_live(var, owned_array(value if given is None else given, var.dtype))
        # An assignment computing the initial values made (a random generator's draw advances its
        # state) is applied once, as TensorFlow's init_scope runs the initializer with its side
        # effects; which ones the call's own trace makes again is known once it is traced.
        related = [
            (var, before, total, first + len(variables) + i)
            for i, (var, before, total) in enumerate(assigned)
            if initial_values.related(traced.jaxpr, outputs, first + len(variables) + i)
        ]
        if related:
            self._unlifted = (traced.jaxpr, inputs, readable, related, variables)

    def _take_initial_assignments(self) -> None:
        """The assignments that computing the lifted initial values made and the call's own trace (the
        last one) does not make again: the next call that succeeds starts from them and keeps them.

        The trace that created the Variables assigned each of these ``total`` times, ``before`` of them
        by the creation; the call's trace makes the same assignments except the creating code's. With
        every assignment made before the creation the creating code's, the value then is the
        initializer's side effect alone; with some made by the call too it holds theirs as well, and
        the call would make them twice.
        """
        closed, inputs, readable, related, variables = self._unlifted
        fn = getattr(self._fn, "__name__", "the function")
        taken = []
        for var, before, total, output in related:
            creating = total - self._assign_counts.get(id(var), 0)
            if creating <= 0:  # the call makes every one of them again
                continue
            if creating < before:
                raise _errors.GradkitRuntimeError(
                    _errors.MSG_INITIALIZER_ASSIGNMENT_SHARED.format(
                        fn=fn, name=variables[-1]._label(), other=var._label()
                    )
                )
            taken.append((var, output))
        try:
            values = initial_values.lift(closed, [output for _, output in taken], inputs, readable)
        except (initial_values.ReadsArgument, initial_values.ReadsTraced):
            raise _errors.GradkitTypeError(
                _errors.MSG_INITIALIZER_ASSIGNMENT_READS_ARGUMENTS.format(
                    fn=fn, name=variables[-1]._label(), other=taken[0][0]._label()
                )
            ) from None
        with jax.ensure_compile_time_eval():
            initial_assigned = [(var, owned_array(x, var.dtype)) for (var, _), x in zip(taken, values)]
        self._unlifted = None
        if isinstance(frames.top(), StateFrame):
            # Called inside another traced call (an enclosing gk.jit's first trace, whose program never
            # runs, as it learns the created Variables): applied to the live Variables now, as the
            # initial values are, so the enclosing function's next trace reads them.
            for var, value in initial_assigned:
                frames.set_live(var, value)
        else:
            self._initial_assigned = initial_assigned

    def _capture_late(self) -> None:
        """Capture the constants of earlier traces that a layer above now records (a tape watches
        a tensor the function closes over, which no tape recorded when it was traced), as
        TensorFlow captures every eager tensor: every signature traces again, taking them as inputs."""
        alive = [(ref, obj) for ref in self._baked if (obj := ref()) is not None]
        late = captures.now_capturable([obj for _, obj in alive])
        if len(alive) != len(self._baked):
            self._baked = [ref for ref, _ in alive]
            self._baked_ids = {id(obj) for _, obj in alive}
        if not late:
            return
        for obj in late:
            self._baked_ids.discard(id(obj))
            if id(obj) not in self._capture_ids:
                self._capture_ids[id(obj)] = len(self._captures)
                self._captures.append(obj)
        self._baked = [ref for ref in self._baked if id(ref()) in self._baked_ids]
        self._traced_captures.clear()

    def _learn(self):
        for var in self._discovered:
            if id(var) not in self._read_ids:
                self._read_ids.add(id(var))
                self._reads.append(var)
        if not self._discovered:
            # With new Variables, what the trace captured may include their reads, which the next
            # trace takes from its inputs: the captures are learned from a trace that knew them all.
            for obj in self._captured:
                if id(obj) not in self._capture_ids:
                    self._capture_ids[id(obj)] = len(self._captures)
                    self._captures.append(obj)
        self._stable = False

    def lower(self, *args, **kwargs):
        """Lower for the Variables the function reads (``jax.jit(...).lower``), e.g. to read the HLO."""
        # Learned first, as a call does: a trace that read a Variable not yet learned has its
        # value baked in, and jax would hand that trace to the next call with the same State.
        args, kwargs, _ = jit_arguments.mark(args, kwargs, self._static_argnums, self._static_argnames, frames.read)
        self._discover(args, kwargs)
        values = _concrete(tuple(map(frames.read, self._reads)))
        n = self._capture_count(args, kwargs)
        captured = _concrete(tuple(map(captures.argument, self._captures[:n])))
        return self._jitted.lower((values, captured), *args, **kwargs)

    def __get__(self, instance, owner=None):
        # Decorating a method: the instance is not an array, so it cannot be an argument of
        # the compiled program. Compile the bound method instead (once per instance, as
        # tf.function does); the Variables it reads through self are found like any others.
        # static_argnums count self as argument 0, as for jax.jit on a method.
        if instance is None:
            return self
        try:
            return self._bound[instance]
        except KeyError:
            pass
        except TypeError:  # not weak-referenceable or not hashable: compile per access
            return self._bind(instance)
        bound = self._bound[instance] = self._bind(instance)
        return bound

    def _bind(self, instance) -> JitFunction:
        static = tuple(i - 1 for i in self._static_argnums if i > 0)
        init_arguments = {i - 1: fn for i, fn in self._init_arguments.items() if i > 0}
        return JitFunction(
            types.MethodType(self._fn, instance), static, self._static_argnames, init_arguments, self._on_created_kept
        )


_live_value = operator.attrgetter("_value")
# The types of the concrete jax arrays met so far (jax's one array type), learned rather than
# made at import, which would start jax's backend.
_ARRAY_TYPES: set[type] = set()


def _all_arrays(values) -> bool:
    """Whether every value is a concrete jax array (never a tracer, nor a pending value); checked
    without a Python loop, as it is on every call."""
    return _ARRAY_TYPES.issuperset(map(type, values))


def _weak(obj):
    """A weak reference to ``obj``, or (for an object that takes none) a callable holding it."""
    try:
        return weakref.ref(obj)
    except TypeError:
        return lambda: obj


def _learn_array_types(values) -> None:
    for x in values:
        if isinstance(x, jax.Array) and not isinstance(x, jax.core.Tracer):
            _ARRAY_TYPES.add(type(x))


def _is_wrapped(x) -> bool:
    return hasattr(type(x), "__gradkit_value__")


def _leaf_signature(x) -> tuple:
    """A traced argument's shape and dtype, as jax traces it (a Python number weakly, NumPy's
    64-bit types as jax's defaults), without computing a value a layer above holds."""
    try:
        dtype = getattr(x, "dtype", None)
        dtype = np.result_type(type(x)) if dtype is None else dtype
        shape = np.shape(x) if getattr(x, "shape", None) is None else x.shape
        return tuple(shape), jax.dtypes.canonicalize_dtype(dtype)
    except TypeError:  # not an array: jax refuses it, with the error _check_arguments gives
        return (type(x),)


def _plain(x) -> bool:
    """Whether an argument is a plain value, whatever layers sit above the core."""
    return x is None or isinstance(x, (jax.Array, np.ndarray, int, float, complex))


def _static_both_ways(fn, argnums: tuple, argnames: tuple) -> tuple[tuple, tuple]:
    """Each static argument by position and by name, as jax.jit infers them from ``fn``'s signature.

    The compiled wrapper takes ``(state, *args, **kwargs)``, so jax cannot infer them itself: an
    argument marked static by position but passed by keyword (or the reverse) would be traced.
    """
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return argnums, argnames
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    position = {p.name: i for i, p in enumerate(positional) if p.kind is p.POSITIONAL_OR_KEYWORD}
    names = [p.name for i, p in enumerate(positional) if i in argnums and p.kind is p.POSITIONAL_OR_KEYWORD]
    numbers = [position[n] for n in argnames if n in position]
    return (
        argnums + tuple(i for i in numbers if i not in argnums),
        argnames + tuple(n for n in names if n not in argnames),
    )


def _parameter_name(fn, position: int) -> str | None:
    """The name of ``fn``'s positional parameter ``position``, if it has one."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return None
    if position < len(params) and params[position].kind in (
        params[position].POSITIONAL_ONLY,
        params[position].POSITIONAL_OR_KEYWORD,
    ):
        return params[position].name
    return None


def _concrete(tree):
    # Values a layer above wraps (a tape's tensors) are leaves here: tracing needs only
    # their shapes, and must not treat them as pytrees.
    return jax.tree_util.tree_map(frames.concrete, tree, is_leaf=lambda x: hasattr(type(x), "__gradkit_value__"))


def jit(
    fn: Callable | None = None,
    *,
    static_argnums: int | Sequence[int] = (),
    static_argnames: str | Sequence[str] = (),
):
    """Compile ``fn`` with ``jax.jit``; Variables it reads are inputs, assignments are outputs.

    Usable as ``@gk.jit`` or ``@gk.jit(static_argnums=...)``. A loop of calls with
    same-shaped arguments compiles once.

    >>> import gradkit as gk
    >>> counter = gk.Variable(0.0)
    >>> @gk.jit
    ... def step(x):
    ...     counter.assign_add(x)
    ...     return counter * 2
    >>> float(step(1.0)), float(step(2.0)), float(counter.value)
    (2.0, 6.0, 3.0)

    On a method, the instance's Variables are found the same way:

    >>> class Model:
    ...     def __init__(self):
    ...         self.w = gk.Variable(1.0)
    ...     @gk.jit
    ...     def scale(self, x):
    ...         self.w.assign(self.w * x)
    ...         return self.w
    >>> model = Model()
    >>> float(model.scale(3.0)), float(model.scale(2.0))
    (3.0, 6.0)

    A tensor a tape records that the function closes over is an input of the program (as
    TensorFlow captures it), so the tape's gradient flows through it. As with ``jax.jit``, the
    function keeps the tensor it saw when traced:

    >>> x = gk.Variable(2.0)
    >>> with gk.GradientTape() as tape:
    ...     y = x * 3.0
    ...     scaled = gk.jit(lambda z: y * z)
    ...     out = scaled(4.0)
    >>> float(tape.gradient(out, x))
    12.0
    """
    if fn is None:
        return functools.partial(jit, static_argnums=static_argnums, static_argnames=static_argnames)
    check_callable(fn, "gk.jit")
    return JitFunction(fn, static_argnums, static_argnames)


_VARIABLE_INPUT = re.compile(r"argument inputs\[0\]\[(\d+)\]")
_OPERATORS_FILE = operators_module.__file__


def _variable_value_needed(error: BaseException, variables, read_any: bool, name: str):
    """The clear error for jax's report that the traced value of a Variable read as an input was
    needed as a Python value, or None for any other error."""
    if not isinstance(error, frames.TRACER_VALUE_ERRORS) or isinstance(error, _errors.GradkitError):
        return None
    found = _VARIABLE_INPUT.search(str(error))
    if found is not None and int(found.group(1)) < len(variables):
        what = f"the value of Variable {variables[int(found.group(1))]._label()}"
    elif read_any and _OPERATORS_FILE in str(error):
        # jax names the op that made the value: one of a Variable's operators (a > 0, k + 1).
        what = "a value computed from a Variable"
    else:
        return _argument_value_needed(error, name)
    return _errors.VariableValueNeededError(
        f"[gradkit] {name} needed {what} as a Python value while gk.jit traced "
        f"it ({type(error).__name__}: a slice bound x[k:], a Python if or loop on it, int(k), a shape). gk.jit "
        "passes the Variables a function reads as traced arguments, so that later assignments run in the same "
        "compiled program; a value that sets the program's structure cannot come from one. Use a traced op "
        "(jax.lax.dynamic_slice(x, (k.value,), (size,)), jnp.where, jax.lax.cond), or read the Variable outside and "
        "pass its value as a static argument (gk.jit(fn, static_argnums=...), fn(x, int(k.value)))."
    )


def _argument_value_needed(error: BaseException, name: str):
    """The clear error for jax's report that a traced argument's value was needed as a Python
    value: of gradkit's and of jax's own class, with jax's first line (it names the argument)."""
    first_line = str(error).strip().splitlines()[0] if str(error).strip() else ""
    return _errors.traced_value_needed(
        error,
        f"[gradkit] {name} needed a traced value as a Python value while gk.jit traced it "
        f"({type(error).__name__}: {first_line}). gk.jit traces its arguments, as jax.jit does, so a Python "
        "if/while/range on one, int(x), x.item(), np.asarray(x) or a slice bound x[:n] has no value to see. Use "
        "jax.lax.cond, jnp.where or jax.lax.fori_loop (jax.lax.dynamic_slice for a slice), or make the argument "
        "static: gk.jit(fn, static_argnums=(i,)) compiles once for each value.",
    )


def _check_outputs(out, fn) -> None:
    """Refuse a result jax cannot return from a compiled program (a str, an object), naming the
    user's function and where in its result the value is, rather than gradkit's wrapper."""
    for path, leaf in jax.tree_util.tree_flatten_with_path(out)[0]:
        if not isinstance(leaf, (jax.Array, np.ndarray, np.generic, numbers.Number)) and not hasattr(
            type(leaf), "__jax_array__"
        ):
            raise _errors.GradkitTypeError(
                f"gk.jit({getattr(fn, '__name__', 'the function')}) returned "
                f"{_errors.describe_value(leaf)} at output{jax.tree_util.keystr(path)}: a compiled function "
                "returns arrays, numbers, or pytrees of them. Return that value from a function outside gk.jit, "
                "or hold it as an array."
            )
