"""Which inputs each output of a derivative op depends on, read from its program.

A derivative taken while a tape records (a gradient, Jacobian, batch Jacobian or
``ForwardAccumulator`` JVP, or a functional transform called under a tape) is recorded as
one op over every value its part of the graph reads. TensorFlow records such a derivative
op by op, so an outer tape there sees which of those values each result actually reads:
``d(x * x + y)/dx = 2x`` does not read ``y``, and a second derivative with respect to ``y``
is None. Reading the same from the op's program (a structural walk of its jaxpr: a value
multiplied by zero still counts as read) lets the tape give None exactly there too.

The walk is made once per op and input shapes, when a tape first plans a derivative
through such an op, never per step.
"""

from __future__ import annotations

import jax
from jax.extend.core import ClosedJaxpr, Literal

from . import bounded
from .bounded import BoundedDict
from .graph import Op

# The kinds ``record.record_call`` gives the derivatives a tape records as one op.
DERIVATIVE_KINDS = frozenset(("gradient", "jacobian", "batch_jacobian", "jvp"))

# Calls whose body runs once on exactly their inputs: their outputs depend on what the
# body's do. Other nested programs (loops, custom rules, whose derivatives may read more
# than their forward does) count every output as depending on every input. Names that differ
# across jax versions are all listed: pjit (jax < 0.7) and jit, closed_call and eval_jaxpr
# (what jax 0.12 stages for it).
_CALLS = frozenset(("jit", "pjit", "closed_call", "eval_jaxpr", "core_call", "remat2", "checkpoint"))


def traced(op) -> bool:
    """Whether ``op``'s outputs may each depend on only some of its inputs (see the module)."""
    return op.kind in DERIVATIVE_KINDS or getattr(op.fn, "per_output_dependence", False)


_cache: dict = BoundedDict(bounded.INTERNED)


def output_dependence(op, in_avals) -> tuple[int, ...]:
    """For each flat output of ``op`` on inputs of ``in_avals``, a bit mask of the inputs
    (by position) it depends on (cached by the op and the avals)."""
    key = (op.key, *[id(a) for a in in_avals])
    hit = _cache.get(key)
    if hit is None:
        closed, out_shape = jax.make_jaxpr(_dependence_call(op), return_shape=True)(*in_avals)
        call = getattr(op.fn, "returns_read_together", False)
        masks = _walk(closed.jaxpr, [1 << i for i in range(len(in_avals))], discrete_cut=call)
        if call:
            # A compiled function's call returns (results, assigned values). TensorFlow
            # differentiates the call as one op, so each result counts as reading every input
            # some result reads: a source read only by a result the target does not use gets
            # a zero gradient there, not None (None where no result reads it).
            n = jax.tree_util.tree_structure(out_shape[0]).num_leaves
            together = 0
            for m in masks[:n]:
                together |= m
            masks[:n] = [together] * n
        hit = _cache[key] = tuple(masks)
    return hit


def _dependence_call(op):
    """``op.call``, or the same call of the op's ``dependence_program`` where it has one: a
    program reading what TensorFlow's version of the derivative reads (see
    ``replay.jvp_reads_program``)."""
    program = getattr(op.fn, "dependence_program", None)
    if program is None:
        return op.call
    return Op(program, op.treedef, op.static, op.dynamic_at, None).call


def _walk(jaxpr, in_masks, discrete_cut=False) -> list[int]:
    """The input masks each output of ``jaxpr`` depends on, given each input's mask.

    ``discrete_cut``: an integer or boolean value (a comparison, a cast to int) carries no
    derivative, so what reads it does not depend on its inputs: TensorFlow's None past it, for
    the ops of a compiled function's body. Not for a derivative's program, whose masks stand
    for TensorFlow's gradient kernels: the second derivative of ``relu`` is zeros there
    (ReluGrad's gradient), though jax's first derivative selects with a comparison.
    """
    masks: dict = dict(zip(jaxpr.invars, in_masks))

    def of(v) -> int:
        return 0 if isinstance(v, Literal) else masks.get(v, 0)  # constants depend on nothing

    for eqn in jaxpr.eqns:
        ins = [of(v) for v in eqn.invars]
        outs = _eqn_dependence(eqn, ins, discrete_cut)
        for v, m in zip(eqn.outvars, outs):
            masks[v] = m if not discrete_cut or _inexact(v) else 0
    return [of(v) for v in jaxpr.outvars]


def _inexact(v) -> bool:
    dtype = getattr(getattr(v, "aval", None), "dtype", None)
    return dtype is None or jax.numpy.issubdtype(dtype, jax.numpy.inexact)


def _eqn_dependence(eqn, ins, discrete_cut) -> list[int]:
    name = eqn.primitive.name
    if name in _CALLS:
        body = _body(eqn.params.get("jaxpr") or eqn.params.get("call_jaxpr"))
        if body is not None and len(body.invars) == len(ins) and len(body.outvars) == len(eqn.outvars):
            return _walk(body, ins, discrete_cut)
    elif name == "stop_gradient":
        return [0] * len(eqn.outvars)  # no derivative through it (TensorFlow's None)
    elif name == "cond":
        # Each output depends on the branch index and on what any branch reads for it.
        branches = [_body(b) for b in eqn.params.get("branches", ())]
        if branches and all(b is not None and len(b.invars) == len(ins) - 1 for b in branches):
            outs = [ins[0]] * len(eqn.outvars)
            for b in branches:
                outs = [o | m for o, m in zip(outs, _walk(b, ins[1:], discrete_cut))]
            return outs
    every = 0
    for m in ins:
        every |= m
    return [every] * len(eqn.outvars)


def _body(sub):
    if isinstance(sub, ClosedJaxpr):
        return sub.jaxpr
    return sub if hasattr(sub, "eqns") else None
