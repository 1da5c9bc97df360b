"""A proof that a batch Jacobian's graph, run on one example, computes the batch's rows.

``batch_jacobian``'s per-example algorithm runs the recorded graph on one example at a time.
That gives the batch's Jacobians only where row ``i`` of the graph reads example ``i`` alone
(``batch_independence`` with ``primal``) and nothing reads how many examples there are:
``sum(ones_like(x))`` counts them, ``x / x.shape[0]`` inside one op divides by their number,
and either may matter for some values only (behind a ``relu``). Without a proof, the program
checks every call with a random JVP; with one, the check is not needed. The proof reads the
derivative's program (``jax.jvp`` of the target in the source), for every value:

- An axis of the batch's size that a step creates (a broadcast: ``ones_like(x)``, a bias
  added to the batch) has size one in the graph run on one example, so it is followed as if
  it carried the examples: a step that sums, sorts or otherwise mixes along it reads the
  batch's size (``batch_independence.walk`` with ``fresh``). Another step creating one
  (``iota``, a random draw) is refused.
- The program traced for ``b + 1`` examples must be the same program, with ``b`` replaced by
  ``b + 1`` in sizes only: a literal or a constant computed from the batch's size
  (``x / x.shape[0]``), or a step that differs, is refused.
"""

from __future__ import annotations

import jax
import numpy as np
from jax.extend.core import ClosedJaxpr, Jaxpr, Literal

from .._core.compat import array_const
from . import batch_independence, replay


def rows_read_no_batch_size(plan: replay.Plan, leaf_values) -> bool:
    """Whether the batch Jacobian ``plan``'s graph provably reads neither other examples nor
    the batch's size (``leaf_values``: only their shapes and dtypes are read)."""
    return function_reads_no_batch_size(batch_independence.plan_target(plan), list(leaf_values), plan.source_avals[0])


def function_reads_no_batch_size(target, args, source) -> bool:
    """``rows_read_no_batch_size`` for ``target(args, x)``, ``x`` like ``source`` (an array
    or ShapeDtypeStruct of shape ``(b, ...)``)."""
    b = source.shape[0]
    if b == 1:
        return True  # the batch is one example
    closed = batch_independence.jvp_program(target, args, source)
    grown = batch_independence.jvp_program(target, args, source, b + 1)
    if closed is None or grown is None:
        return False  # no program to read for one of the sizes: unproven
    jaxpr = closed.jaxpr
    labels = [None] * (len(jaxpr.invars) - 2) + [0, 0]
    (out,) = batch_independence.walk(jaxpr, labels, b, fresh=True)
    return (out is None or out == 0) and _same_closed(closed, grown, b)


def _same_closed(one: ClosedJaxpr, other: ClosedJaxpr, b: int) -> bool:
    return (
        len(one.consts) == len(other.consts)
        and all(_same_value(array_const(x), array_const(y)) for x, y in zip(one.consts, other.consts))
        and _same_jaxpr(one.jaxpr, other.jaxpr, b)
    )


def _same_jaxpr(one: Jaxpr, other: Jaxpr, b: int) -> bool:
    """The same steps on the same inputs, with the same literals and parameters (sizes ``b``
    in ``one`` may be ``b + 1`` in ``other``)."""
    if (len(one.invars), len(one.constvars), len(one.outvars), len(one.eqns)) != (
        len(other.invars),
        len(other.constvars),
        len(other.outvars),
        len(other.eqns),
    ):
        return False
    paired = dict(zip(one.constvars, other.constvars))
    paired.update(zip(one.invars, other.invars))

    def same_input(u, v) -> bool:
        if isinstance(u, Literal) or isinstance(v, Literal):
            return isinstance(u, Literal) and isinstance(v, Literal) and _same_value(u.val, v.val)
        return paired.get(u) is v

    for e1, e2 in zip(one.eqns, other.eqns):
        if e1.primitive is not e2.primitive or len(e1.invars) != len(e2.invars) or len(e1.outvars) != len(e2.outvars):
            return False
        if not all(same_input(u, v) for u, v in zip(e1.invars, e2.invars)):
            return False
        if e1.params.keys() != e2.params.keys():
            return False
        rules = _RULES if e1.primitive.name in _CUSTOM_CALLS else ()
        if not all(k in rules or _same_param(e1.params[k], e2.params[k], b) for k in e1.params):
            return False
        paired.update(zip(e1.outvars, e2.outvars))
    return all(same_input(u, v) for u, v in zip(one.outvars, other.outvars))


# A custom-derivative call's rules, traced anew with each program: the program's values are
# its body's (a jaxpr parameter, compared), and the derivative the rules give is already
# written out, as steps, in the JVP program that is compared.
_CUSTOM_CALLS = frozenset(("custom_jvp_call", "custom_vjp_call", "custom_vjp_call_jaxpr"))
_RULES = frozenset(("jvp_jaxpr_fun", "jvp_jaxpr_thunk", "jvp", "fwd_jaxpr_thunk", "bwd", "out_trees"))


def _same_param(x, y, b: int) -> bool:
    if isinstance(x, ClosedJaxpr) and isinstance(y, ClosedJaxpr):
        return _same_closed(x, y, b)
    if isinstance(x, Jaxpr) and isinstance(y, Jaxpr):
        return _same_jaxpr(x, y, b)
    if isinstance(x, (tuple, list)) and isinstance(y, (tuple, list)):
        return len(x) == len(y) and all(_same_param(u, v, b) for u, v in zip(x, y))
    if type(x) is int and type(y) is int:
        return x == y or (x == b and y == b + 1)  # a size: the batch's
    if isinstance(x, (np.ndarray, jax.Array)) or isinstance(y, (np.ndarray, jax.Array)):
        return _same_value(x, y)
    try:
        same = x == y
    except Exception:  # an object that does not compare: the same object only
        return x is y
    return same if isinstance(same, bool) else x is y


def _same_value(x, y) -> bool:
    try:
        x, y = np.asarray(x), np.asarray(y)
    except (TypeError, ValueError):  # a PRNG key, say: unproven
        return False
    if x.shape != y.shape or x.dtype != y.dtype:
        return False
    try:
        return bool(np.array_equal(x, y, equal_nan=True))
    except TypeError:  # a dtype without NaN
        return bool(np.array_equal(x, y))
