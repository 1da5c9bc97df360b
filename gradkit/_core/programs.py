"""Functions that read Variables, traced to programs and interned by their text.

A layer above the core that records calls (a tape) keys its ops, and so its compiled
programs, by the function it is given. A call made through ``program_call`` hands it one
function per distinct program, so a loop that builds a new Python function each step (a
lambda, a fresh ``gk.vmap``) still records the same op and compiles once. Arrays the function
closes over are the program's constants, passed as runtime inputs, so new values compile
nothing new either.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend.core import ClosedJaxpr, Jaxpr, Var, jaxpr_as_fun

from .. import _errors
from . import captures, frames
from .compat import DebugInfo, DropVar, array_const, jaxprs_in_params
from .functionalize import StateFrame, values_of
from .state import State
from .variable import _PYTHON_SCALARS

_BOUND = 512  # programs remembered; a forgotten one is rebuilt as a new op (compiled again), never a wrong one
_interned: OrderedDict = OrderedDict()
_lock = threading.Lock()


def intern(key, build: Callable):
    """The object ``build()`` made for ``key`` (equal keys: the very same object)."""
    with _lock:
        hit = _interned.get(key)
        if hit is not None:
            _interned.move_to_end(key)
            return hit
        hit = _interned[key] = build()
        if len(_interned) > _BOUND:
            _interned.popitem(last=False)
        return hit


def aval_of(x) -> jax.ShapeDtypeStruct:
    """The abstract value ``x`` is traced as; a recorded tensor's is known without computing it."""
    dtype = getattr(x, "dtype", None)
    dtype = jnp.result_type(x) if dtype is None else jax.dtypes.canonicalize_dtype(dtype)
    weak = getattr(x, "weak_type", None)
    if weak is None:
        weak = type(x) in (int, float, complex)  # a Python number is weakly typed, as jax takes it
    return jax.ShapeDtypeStruct(tuple(getattr(x, "shape", ())), dtype, weak_type=bool(weak))


def runtime(x):
    """``x``, or a Python number as the (weakly typed) array it was traced as.

    The program takes it as a runtime input either way; as an array it is one for a tape too,
    which would otherwise take a Python number for a fixed part of the op and compile again
    for every new value (a schedule).
    """
    return jnp.asarray(x) if type(x) in _PYTHON_SCALARS else x


def trace(fn, avals) -> tuple[ClosedJaxpr, object]:
    """``fn`` traced to a program on ``avals``, and the structure of what it returns."""
    closed, shapes = jax.make_jaxpr(fn, return_shape=True)(*avals)
    return closed, jax.tree_util.tree_structure(shapes)


def program_key(closed: ClosedJaxpr) -> tuple:
    """What makes two traced programs the same program (their constants' values aside)."""
    # The text names every primitive, parameter, shape and Python literal; the avals add weak
    # types, which it leaves out. Constants are not in it: they are the op's runtime inputs.
    # The text leaves out two things the interned op keeps from the first program traced: the
    # constants of a nested program (a jax.jit the function calls, closing over an array) and
    # the rules of a jax.custom_vjp / custom_jvp (its bwd prints as its name only).
    text = str(closed.jaxpr)
    key = (text, tuple(v.aval for v in closed.jaxpr.constvars), tuple(closed.in_avals), _nested_consts(closed.jaxpr))
    if "custom_vjp_call" in text or "custom_jvp_call" in text:
        key += (_rules_key(closed),)
    return key


_SMALL_CONST = 1 << 16  # bytes: a nested constant up to this size is told apart by value, a larger one by identity


class _Same:
    """A key part equal only to itself's object (a large constant, kept alive by the key)."""

    __slots__ = ("obj",)

    def __init__(self, obj):
        self.obj = obj

    def __eq__(self, other):
        return isinstance(other, _Same) and other.obj is self.obj

    def __hash__(self):
        return id(self.obj)


def _const_key(c):
    c = array_const(c)
    if isinstance(c, (jax.Array, np.ndarray, np.generic)) and np.dtype(c.dtype) != np.dtype(object):
        if c.nbytes <= _SMALL_CONST:
            a = np.asarray(c)
            return (a.shape, str(a.dtype), a.tobytes())
    return _Same(c)


def _nested_consts(jaxpr) -> tuple:
    """The constants of the closed programs nested in ``jaxpr``'s equations, told apart by value."""
    out: list = []
    for eqn in jaxpr.eqns:
        for p in eqn.params.values():
            for sub in p if isinstance(p, (tuple, list)) else (p,):
                if isinstance(sub, ClosedJaxpr):
                    out.extend(_const_key(c) for c in sub.consts)
        for sub in jaxprs_in_params(eqn.params):
            out.extend(_nested_consts(sub))
    return tuple(out)


# A jax.custom_vjp call in a traced program: custom_vjp_call_jaxpr in jax 0.6.0, custom_vjp_call after.
CUSTOM_VJP_CALLS = ("custom_vjp_call", "custom_vjp_call_jaxpr")
_CUSTOM_CALLS = (*CUSTOM_VJP_CALLS, "custom_jvp_call")


def _rules_key(closed: ClosedJaxpr) -> tuple:
    """The derivatives of the program's custom-rule calls, each traced on its own, where the
    rules are written out: two programs equal as text but with different rules (a bwd closing
    over another bound) differ here. Only the calls are differentiated, not the program around
    them, so the price is a trace of each rule."""
    return tuple(_derivative_text(_alone(eqn), eqn.primitive.name) for eqn in custom_eqns(closed.jaxpr))


def holds_custom_vjp(f, *args) -> bool:
    """Whether ``f`` on arguments like ``args`` runs a ``jax.custom_vjp`` (a ``custom_gradient``):
    it has no forward rule, and inside a trace ``jax.jvp`` of it fails only when the program is
    compiled, too late to take another way."""
    avals = jax.tree_util.tree_map(lambda x: jax.ShapeDtypeStruct(jnp.shape(x), jnp.result_type(x)), args)
    jaxpr = jax.make_jaxpr(f)(*avals).jaxpr
    return any(eqn.primitive.name in CUSTOM_VJP_CALLS for eqn in custom_eqns(jaxpr))


def custom_eqns(jaxpr) -> list:
    """The custom-rule calls (``jax.custom_vjp`` / ``custom_jvp``) in ``jaxpr`` and the programs
    nested in it, in order."""
    found = []
    for eqn in jaxpr.eqns:
        if eqn.primitive.name in _CUSTOM_CALLS:
            found.append(eqn)
        for sub in jaxprs_in_params(eqn.params):
            found.extend(custom_eqns(sub))
    return found


def _alone(eqn) -> ClosedJaxpr | None:
    """``eqn`` as a program of its own (its variable inputs in, its outputs out), or None."""
    if any(isinstance(v, DropVar) for v in eqn.outvars):
        return None
    invars = list(dict.fromkeys(v for v in eqn.invars if isinstance(v, Var)))
    # Unnamed arguments and results, one each: jax 0.6 refuses None for the result paths.
    info = DebugInfo("gradkit rule key", eqn.primitive.name, ("",) * len(invars), ("",) * len(eqn.outvars))
    return ClosedJaxpr(Jaxpr([], invars, list(eqn.outvars), [eqn], eqn.effects, info), [])


def _derivative_text(closed: ClosedJaxpr | None, call: str) -> tuple:
    """``closed``'s derivative traced, as text and constants: forward mode for a custom JVP
    rule (the cheaper trace), reverse mode for a custom VJP rule (its bwd runs only there),
    the other mode where that one cannot be traced; a key part equal to no other when neither
    can."""
    if closed is None:
        return (_Same(object()),)
    jaxpr = closed.jaxpr
    avals = [jax.ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type) for a in closed.in_avals]

    def inexact(x):
        return jnp.issubdtype(x.dtype, jnp.inexact)

    def split(flat):
        at = [i for i, x in enumerate(flat) if inexact(x)]

        def g(*diff):
            full = list(flat)
            for i, d in zip(at, diff):
                full[i] = d
            outs = jaxpr_as_fun(ClosedJaxpr(jaxpr, closed.consts))(*full)
            return [o for o in outs if inexact(o)]

        return g, [flat[i] for i in at]

    def pulled(*flat):
        g, diff = split(flat)
        outs, pull = jax.vjp(g, *diff)
        return pull(outs)

    def pushed(*flat):
        g, diff = split(flat)
        return jax.jvp(g, diff, diff)

    for derivative in (pushed, pulled) if call == "custom_jvp_call" else (pulled, pushed):
        try:
            traced = jax.make_jaxpr(derivative)(*avals)
        except Exception:  # noqa: BLE001 - any failure to trace: try the next, or no sharing
            continue
        return str(traced.jaxpr), tuple(map(_const_key, traced.consts)), _nested_consts(traced.jaxpr)
    return (_Same(object()),)


def is_value(x) -> bool:
    """Whether ``x`` is a layer above's stand-in for a value (a tape's tensor): one argument, not a pytree."""
    return hasattr(type(x), "__gradkit_value__")


def array_like(x) -> bool:
    """Whether ``x`` can be an argument of a compiled program."""
    return isinstance(x, (jax.Array, np.ndarray, np.generic, bool, int, float, complex, jax.core.Tracer)) or (
        is_value(x) or hasattr(x, "__jax_array__")
    )


def discover(fn: Callable, avals) -> tuple[tuple, ClosedJaxpr, object]:
    """The Variables ``fn(*flat)`` reads, and its program and output structure (``fn``'s own
    program when it reads none). Its reads answer concretely from the frames below, so nothing
    a layer above recorded leaks into the trace. Variables it creates are local to it, unless
    something keeps them after the call (a layer built on its first call): those are Variables
    it reads, as any other."""
    seen: dict[int, object] = {}

    def note(var):
        seen.setdefault(id(var), var)

    frame = StateFrame(State._make((), ()), strict=False, on_unknown_read=note, created_are_local=True)

    def probe(*flat):
        with frame:
            return values_of(fn(*flat))

    closed, out_tree = trace(probe, avals)
    for var in frame.escaped():
        note(var)
    return tuple(seen.values()), closed, out_tree


def program_call(fn: Callable, args: tuple, kwargs: dict, what: str, traced: dict | None = None):
    """``fn(*args, **kwargs)``, where ``fn`` reads Variables, as one call of an interned program
    over (its constants, the values of the Variables it reads, the arguments), made through
    ``frames.apply`` so that a recording layer records it as one op and differentiates it.

    A Python int or bool argument is part of the program (``range(n)``, ``if training:``), as
    a static argument of ``jax.jit`` is; every other argument is a runtime input.

    ``traced``, kept by the caller for one ``fn``, remembers its program per argument
    structure, as ``jax.jit`` does: a later call with the same shapes traces nothing.
    """
    leaves, treedef = jax.tree_util.tree_flatten((args, kwargs), is_leaf=is_value)
    bad = next((x for x in leaves if not array_like(x)), None)
    if bad is not None:
        raise _errors.GradkitTypeError(
            f"{what} was called while a GradientTape records, with an argument of type {type(bad).__name__}: "
            "it then runs as one recorded program, whose arguments must be arrays or numbers. Close over the "
            "other values (functools.partial) instead of passing them."
        )
    static = tuple((i, x) for i, x in enumerate(leaves) if type(x) in _STATIC_TYPES)
    dynamic = [x for x in leaves if type(x) not in _STATIC_TYPES] if static else leaves
    avals = tuple(aval_of(x) for x in dynamic)
    # The static values with their types: 1 and True are equal in Python, not to jax.
    key = (treedef, avals, tuple((i, type(x), x) for i, x in static))
    hit = None if traced is None else traced.get(key)
    if hit is None:
        try:
            hit = _trace_program(fn, treedef, static, avals, what)
        except frames.TRACER_VALUE_ERRORS as e:
            raise _errors.GradkitTypeError(
                f"{what} was called while a GradientTape records, so it is traced as one recorded program "
                f"(as jax.jit traces), where Python control flow on a traced value cannot run "
                f"({type(e).__name__}). Use jnp.where or jax.lax.cond inside it, pass a flag as a Python bool "
                f"or int (those are part of the program), or call {what} outside the tape."
            ) from e
        # A program that captured values (see _trace_program) is not reused: the next call's
        # function may close over other ones (a tensor recorded anew each step).
        if traced is not None and not hit[1]:
            traced[key] = hit
    variables, captured, op, consts, states = hit
    out = frames.apply(
        op,
        consts,
        *(frames.read(v) for v in variables),
        *map(captures.argument, captured),
        *map(runtime, dynamic),
    )
    return _with_states(out, states) if states else out


_STATIC_TYPES = (int, bool)


def _trace_program(fn, treedef, static, avals, what: str) -> tuple:
    """(the Variables ``fn`` reads, the values it captures, its interned op, the op's constants,
    the Variables of each State it returns) for these arguments.

    A value ``fn`` closes over that the layer above wants captured (a tensor a tape records)
    becomes an input of the program, after the Variables' values, as ``gk.jit`` captures it
    (``captures.py``): the call then passes the tensor itself, so the tape records the
    program over it and a gradient flows through it.
    """
    states: list = []

    def flat_fn(*flat):
        leaves = list(flat)
        for i, x in static:
            leaves.insert(i, x)
        a, k = jax.tree_util.tree_unflatten(treedef, leaves)
        states.clear()  # each trace finds them anew
        return _without_states(_checked_results(values_of(fn(*a, **k)), what), states)

    with captures.Scope({}, ()) as scope:
        variables, closed, out_tree = discover(flat_fn, avals)
    captured: tuple = ()
    if variables or scope.found:
        n = len(variables)
        var_avals = [aval_of(frames.read(v)) for v in variables]

        def traced_with(captured: tuple):
            m = len(captured)
            known = {id(obj): i for i, obj in enumerate(captured)}
            unknown: list = []

            def pure(*flat):  # the Variables' values are the program's first inputs, then the captures
                with captures.Scope(known, flat[n : n + m]) as inner:
                    with StateFrame(State._make(variables, flat[:n]), strict=False, created_are_local=True):
                        out = values_of(flat_fn(*flat[n + m :]))
                unknown[:] = inner.found
                return out

            closed, out_tree = trace(pure, [*var_avals, *map(aval_of, captured), *avals])
            return closed, out_tree, unknown

        # Found apart from the Variables' reads (discovery reads those from the tape, so its
        # captures may include what a Variable is bound to there).
        closed, out_tree, unknown = traced_with(())
        if unknown:
            captured = tuple(unknown)
            closed, out_tree, unknown = traced_with(captured)
            if unknown:
                raise _errors.GradkitRuntimeError(
                    f"{what} closes over values that change from one trace of it to the next, so it cannot "
                    "run as one recorded program. Pass them as arguments instead."
                )
    op = intern(("program", *program_key(closed), out_tree), lambda: _program_op(closed.jaxpr, out_tree, what))
    return variables, captured, op, tuple(map(array_const, closed.consts)), tuple(states)


class _StateValues:
    """A State's values in a program's results, without its Variables: the program (interned by
    its results' structure) is then the same whichever Variables the State holds, and keeps
    none of them alive."""

    __slots__ = ("values",)

    def __init__(self, values):
        self.values = tuple(values)


jax.tree_util.register_pytree_node(_StateValues, lambda s: (s.values, len(s.values)), lambda _, c: _StateValues(c))


def _without_states(out, states: list):
    """``out`` with each State's values in a ``_StateValues``; its Variables appended to ``states``."""

    def strip(x):
        if isinstance(x, State):
            states.append(x.variables)
            return _StateValues(x.values())
        return x

    return jax.tree_util.tree_map(strip, out, is_leaf=lambda x: isinstance(x, State))


def _with_states(out, states):
    """The inverse of ``_without_states`` on a program's results."""
    found = iter(states)
    return jax.tree_util.tree_map(
        lambda x: State._make(next(found), x.values) if isinstance(x, _StateValues) else x,
        out,
        is_leaf=lambda x: isinstance(x, _StateValues) or is_value(x),  # a tape's tensors are leaves here
    )


def _checked_results(out, what: str):
    """``out``, if every leaf can be a result of a program (an aux string cannot)."""
    for leaf in jax.tree_util.tree_leaves(out):
        if not array_like(leaf):
            raise _errors.GradkitTypeError(
                f"{what} was called while a GradientTape records, so it runs as one recorded program, whose "
                f"results (an aux value included) must be arrays or numbers, but its result holds a "
                f"{type(leaf).__name__}: {leaf!r:.60}. Return that value some other way (compute it outside "
                f"the call), or call {what} outside the tape."
            )
    return out


def _program_op(jaxpr, out_tree, what: str) -> Callable:
    def op(consts, *flat):
        return jax.tree_util.tree_unflatten(out_tree, jaxpr_as_fun(ClosedJaxpr(jaxpr, list(consts)))(*flat))

    op.__name__ = op.__qualname__ = what.replace(".", "_")
    # A recording layer may read from the program which inputs each output depends on: a
    # derivative's result often reads only some of them (d(x * x + y)/dx does not read y).
    op.per_output_dependence = True
    return op
