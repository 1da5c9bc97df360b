"""Computing, outside a traced call, the initial value of a Variable the call created and kept.

A function compiled with ``gk.jit`` may build a layer on its first call: it creates a
Variable and stores it somewhere that outlives the call. Created from a constant computed
inside the trace (``jnp.ones((3, 2))``, a draw from a fixed key, ``zeros_like`` of another
Variable), its initial value is a tracer, which has no value outside the call. TensorFlow
lifts such an initializer out of the function's graph (``init_scope``) and runs it once,
eagerly; this does the same with the traced program: the operations the initial value
depends on are taken from the program and evaluated once, concretely. An initial value
that depends on an argument of the call cannot be lifted: it is the call's own input.

Computing the initial value may assign other Variables too: a random generator's draw splits
its state, keeps one half as the next state and draws with the other. TensorFlow's init_scope
runs the initializer once with its side effects, so the draw leaves the state advanced. The
value such a Variable had when the kept one was created is another output of the program;
``related`` tells whether it was computed together with the initial values (sharing an
equation with them, or read by them), as opposed to by unrelated code that ran before.
"""

from __future__ import annotations

from collections.abc import Sequence

import jax
from jax.extend.core import Literal

from .compat import array_const, bind_params


class ReadsArgument(Exception):
    """The initial values read an input of the program that they may not read."""


class ReadsTraced(Exception):
    """The initial values read a value traced by a transform around the call (``gk.grad`` of it
    differentiating a Variable they read): it has no concrete value to compute them from."""


def lift(closed, outputs: Sequence[int], inputs: Sequence, readable: Sequence[bool]) -> list:
    """The outputs of ``closed`` (a ``ClosedJaxpr``) at the positions ``outputs``, computed from ``inputs``.

    Only the equations those outputs depend on run, each eagerly (even while another trace is
    active). Raises ``ReadsArgument`` when one of them depends on an input whose ``readable``
    entry is False, or when ``inputs`` does not match the program's inputs; ``ReadsTraced`` when
    one depends on a traced value of a transform around the call.
    """
    jaxpr = closed.jaxpr
    # A value of a trace around the call that the function closed over (a Variable read while
    # gk.grad differentiates it) is an input too, before the call's own: jax passes such closed-over
    # tracers to the program first.
    outer = len(jaxpr.invars) - len(inputs)
    if outer < 0 or len(readable) != len(inputs) or not all(map(_fits, jaxpr.invars[outer:], inputs)):
        raise ReadsArgument
    targets = [jaxpr.outvars[i] for i in outputs]
    eqns, needed = _ancestry(jaxpr, targets)
    read = [i - outer for i, v in enumerate(jaxpr.invars) if v in needed]
    if not all(readable[i] for i in read if i >= 0):
        raise ReadsArgument
    if any(i < 0 or isinstance(inputs[i], jax.core.Tracer) for i in read):
        raise ReadsTraced
    env = {v: array_const(c) for v, c in zip(jaxpr.constvars, closed.consts)}
    env.update((jaxpr.invars[outer + i], inputs[i]) for i in read)

    def value(v):
        return v.val if isinstance(v, Literal) else env[v]

    with jax.ensure_compile_time_eval():
        for eqn in eqns:
            subfuns, params = bind_params(eqn)
            outs = eqn.primitive.bind(*subfuns, *map(value, eqn.invars), **params)
            env.update(zip(eqn.outvars, outs if eqn.primitive.multiple_results else (outs,)))
    return [value(v) for v in targets]


def _fits(var, x) -> bool:
    """Whether the program's input ``var`` can be the value ``x`` (the same shape)."""
    return tuple(var.aval.shape) == tuple(jax.numpy.shape(x))


def related(closed, outputs: Sequence[int], other: int) -> bool:
    """Whether output ``other`` of ``closed`` was computed together with the outputs at ``outputs``:
    they read it, or it and they depend on a common equation (one draw's split key)."""
    jaxpr = closed.jaxpr
    eqns, needed = _ancestry(jaxpr, [jaxpr.outvars[i] for i in outputs])
    var = jaxpr.outvars[other]
    if isinstance(var, Literal):
        return False
    if var in needed:
        return True
    theirs = {id(e) for e in eqns}
    return any(id(e) in theirs for e in _ancestry(jaxpr, [var])[0])


def _ancestry(jaxpr, targets) -> tuple[list, set]:
    """The equations ``targets`` depend on, in program order, and every variable they read."""
    needed = {v for v in targets if not isinstance(v, Literal)}
    eqns = []
    for eqn in reversed(jaxpr.eqns):
        # An equation with several results (a loop) counts as read whole: every input it reads.
        if any(v in needed for v in eqn.outvars):
            eqns.append(eqn)
            needed.update(v for v in eqn.invars if not isinstance(v, Literal))
    eqns.reverse()
    return eqns, needed
