"""The program a recorded ``gk.jit`` call traced, kept to run it later.

A layer above that records a call (a tape) computes it later: when a result is first read,
when a gradient is taken, or inside another program that replays the tape. Handed the
compiled function itself, it would trace the Python body again then, in whatever context it
runs, reading Python values (a closed-over float, a list) as they are by then and repeating
the body's side effects. ``jax.jit`` and ``tf.function`` trace a body once per argument
signature and keep what it read while tracing; a recorded call must too.

So a recorded call is handed its trace instead: the program ``jax.jit(...).trace`` gives for
the call's arguments (jax's cache answers, so this traces only where a call would), evaluated
from its text. One function per argument signature, found again by a dict lookup as jax.jit's
cache finds its trace, so the calls a loop records share one op and the tape compiles once;
the cut and uncut programs are different traces, so they stay apart.
A program holding values of a trace around the call (a closure over an outer ``jax.jit``'s
tracer) could not run outside that trace: such a call is recorded as before.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable

import jax
from jax.extend.core import jaxpr_as_fun

from .programs import aval_of, is_value

_BOUND = 256  # traces kept per compiled function; a forgotten one is made again (compiled again), never wrong


class Replays:
    """The replay function of each program a ``jax.jit``-compiled ``pure(inputs, *args, **kwargs)`` traced.

    ``static_argnums`` and ``static_argnames`` are those of the original function (the compiled
    one takes ``inputs`` first).
    """

    def __init__(self, static_argnums: tuple, static_argnames: tuple, name: str):
        self._static_argnums = frozenset(static_argnums)
        self._static_argnames = frozenset(static_argnames)
        self._name = name
        self._made: OrderedDict = OrderedDict()  # a call's signature -> what a recorder calls for it
        self._lock = threading.Lock()

    def of(self, jitted, inputs, args: tuple, kwargs: dict) -> Callable:
        """What a recorder should call for ``jitted(inputs, *args, **kwargs)``: its traced program,
        or ``jitted`` itself when nothing in the call is a value a layer above stands in for (then
        nothing records it, and it runs now)."""
        statics = tuple((i, static_key(a)) for i, a in enumerate(args) if i in self._static_argnums)
        statics += tuple((k, static_key(kwargs[k])) for k in sorted(kwargs) if k in self._static_argnames)
        dynamic = (
            inputs,
            tuple(a for i, a in enumerate(args) if i not in self._static_argnums),
            {k: v for k, v in kwargs.items() if k not in self._static_argnames},
        )
        leaves, treedef = jax.tree_util.tree_flatten(dynamic, is_leaf=is_value)
        if not any(map(is_value, leaves)):
            return jitted
        # What jax.jit tells its traces by (the dynamic leaves' shapes, dtypes and weak types, the
        # static values), known without a call into jax: a recorded call costs a lookup.
        key = (id(jitted), treedef, statics, tuple(map(_leaf_key, leaves)))
        hit = self._made.get(key)
        if hit is not None:
            return hit
        hit = self._traced(jitted, inputs, args, kwargs)
        with self._lock:  # another thread may record a call of the same function meanwhile
            hit = self._made.setdefault(key, hit)
            if len(self._made) > _BOUND:
                self._made.popitem(last=False)  # the oldest trace: made again if called again
        return hit

    def _traced(self, jitted, inputs, args, kwargs) -> Callable:
        # Shapes alone: a recorded value is never computed to trace its call.
        abstract = jax.tree_util.tree_map(
            lambda x: aval_of(x) if is_value(x) else x, (inputs, args, kwargs), is_leaf=is_value
        )
        traced = jitted.trace(abstract[0], *abstract[1], **abstract[2])
        closed = traced.jaxpr
        if any(isinstance(c, jax.core.Tracer) for c in closed.consts):
            return jitted
        return self._replay(closed, jax.tree_util.tree_structure(traced.out_info), jitted)

    def _replay(self, closed, out_tree, jitted) -> Callable:
        run = jax.jit(jaxpr_as_fun(closed))
        statics, static_names = self._static_argnums, self._static_argnames

        def replay(inputs, /, *args, **kwargs):
            # The program's inputs as jax.jit flattened them: the dynamic arguments in order,
            # then the dynamic keyword arguments (by sorted name, as a dict flattens).
            dynamic = tuple(a for i, a in enumerate(args) if i not in statics)
            dynamic_kw = {k: v for k, v in kwargs.items() if k not in static_names}
            flat = jax.tree_util.tree_leaves(((inputs, *dynamic), dynamic_kw))
            return jax.tree_util.tree_unflatten(out_tree, run(*flat))

        replay.__name__ = replay.__qualname__ = self._name
        # What a recorder reads from the compiled function (see jit.py), the same for its trace.
        replay.per_output_dependence = jitted.per_output_dependence
        replay.returns_read_together = jitted.returns_read_together
        return replay


def _leaf_key(x) -> tuple:
    """A dynamic argument's part of a trace's signature: its shape, dtype and weak type (a dtype
    jax would canonicalize tells apart more signatures than jax does, never fewer)."""
    shape = getattr(x, "shape", None)
    if shape is None:
        return (type(x),)  # a Python number: weakly typed, its dtype fixed by its type
    return tuple(shape), x.dtype, getattr(x, "weak_type", False)


def static_key(x):
    """A static argument as a cache-key part: itself, or its identity when it cannot be hashed."""
    try:
        hash(x)
    except TypeError:
        return ("id", id(x))
    return x
