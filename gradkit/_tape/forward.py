"""``ForwardAccumulator``: forward-mode derivatives of recorded code (``tf.autodiff``)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .. import _errors
from . import bounded, graph, record, replay
from .bounded import BoundedDict
from .derivatives import (
    UnconnectedGradients,
    as_array,
    dtype_of,
    flatten,
    shape_of,
    structure,
    touches,
    unconnected,
    zeros_if_unconnected,
)
from .tape import GradientTape
from .tensor import Tensor

_programs: dict = BoundedDict(bounded.PROGRAMS)


class ForwardAccumulator:
    """Push tangents forward through recorded code: Jacobian-vector products.

    Args:
      primals: a Variable, tensor, or nested structure of them to differentiate at.
      tangents: the direction, with the structure of ``primals``.

    Exact through assignment, like the tape: a Variable's primal is its value when the
    accumulator starts. Over a tape it gives Hessian-vector products (forward over
    reverse)::

        with gk.ForwardAccumulator(x, v) as acc:
            with gk.GradientTape() as tape:
                loss = f(x)
            g = tape.gradient(loss, x)
        hvp = acc.jvp(g)

    >>> import gradkit as gk
    >>> x = gk.Variable(3.0)
    >>> with gk.ForwardAccumulator(x, 1.0) as acc:
    ...     _ = x.assign(x * 2)
    ...     y = x ** 2
    >>> float(acc.jvp(y))      # d (2x)^2 / dx = 8x
    24.0
    """

    def __init__(self, primals, tangents):
        self._primal_leaves, tree = flatten(primals)
        tangent_leaves, t_tree = flatten(tangents)
        if len(tangent_leaves) != len(self._primal_leaves):
            raise _errors.GradkitValueError(
                f"ForwardAccumulator got {len(self._primal_leaves)} primal(s) but {len(tangent_leaves)} tangent(s); "
                "give one tangent per primal, in the same structure."
            )
        for p, t in zip(self._primal_leaves, tangent_leaves):
            if shape_of(p) != tuple(jnp.shape(as_array(t))):
                raise _errors.GradkitValueError(
                    f"a tangent of shape {tuple(jnp.shape(as_array(t)))} does not match its primal of shape "
                    f"{tuple(getattr(p, 'shape', ()))}."
                )
        self._tangents = [as_array(t) for t in tangent_leaves]
        self._tape = GradientTape(persistent=True, watch_accessed_variables=False)

    def __enter__(self) -> ForwardAccumulator:
        self._tape.__enter__()
        self._tape.watch(self._primal_leaves)
        return self

    def __exit__(self, *exc):
        return self._tape.__exit__(*exc)

    def jvp(self, primals, unconnected_gradients=UnconnectedGradients.NONE):
        """The Jacobian-vector product of ``primals`` (a tensor or a nested structure)."""
        mode = unconnected(unconnected_gradients)
        leaves, tree = flatten(primals)
        out = [self._jvp_one(t, mode) for t in leaves]
        return jax.tree_util.tree_unflatten(tree, out)

    def _jvp_one(self, target, mode):
        tape = self._tape
        t_ref = tape._target_ref(target)
        s_refs = [tape._source_ref(p) for p in self._primal_leaves]
        result = None
        st = structure(tape, [t_ref], s_refs) if t_ref is not None else None
        if st is not None:
            leaves, live, key, sources = st
            tangents = [t if s is not None else None for t, s in zip(self._tangents, sources)]
            pattern = tuple(t is not None for t in tangents)
            key = ("jvp", key, pattern)
            entry = _programs.get(key)
            if entry is None:
                plan = replay.Plan(leaves, live, sources, tape._bit, tape._session)
                connected = any(plan.connected[0])
                jvp = replay.jvp_program(plan)
                n = len(leaves)

                def flat(leaf_values, tangents):
                    _, out_t = jvp(leaf_values, tangents)
                    return out_t[0]

                def forward_derivative(*values):
                    it = iter(values[n:])
                    return flat(list(values[:n]), [next(it) if has else None for has in pattern])

                entry = _programs[key] = (jax.jit(flat), connected, forward_derivative)
            program, connected, recorded_op = entry
            if connected:
                s = graph.local.session
                if s is not None and s.active and touches(s, leaves, []):
                    live_t = [t for t in tangents if t is not None]
                    inputs = [(leaf, 0) for leaf in leaves] + [(graph.make_leaf(t, 0, s), 0) for t in live_t]
                    result = Tensor._make(record.record_call(recorded_op, inputs, s, "jvp"), 0)
                else:
                    result = Tensor.concrete(program([leaf.values[0] for leaf in leaves], tangents))
        return zeros_if_unconnected(result, shape_of(target), dtype_of(target), mode)
