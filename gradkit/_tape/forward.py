"""``ForwardAccumulator``: forward-mode derivatives of recorded code (``tf.autodiff``)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .. import _errors
from .._core import key_order
from . import bounded, graph, record, replay
from .bounded import BoundedDict
from .derivatives import (
    UnconnectedGradients,
    as_array,
    attach_part,
    dtype_of,
    flatten,
    recorded_entry,
    shape_of,
    structure,
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
        seen = set()
        for k, (p, t) in enumerate(zip(self._primal_leaves, tangent_leaves)):
            if id(p) in seen:
                raise _errors.GradkitValueError(
                    f"ForwardAccumulator got primal {k} (shape {shape_of(p)}) more than once, as TensorFlow refuses "
                    "('specified as a primal multiple times'): its tangent would be ambiguous. Pass each primal once."
                )
            seen.add(id(p))
            if t is None:
                raise _errors.GradkitValueError(
                    f"ForwardAccumulator got None as the tangent of primal {k} (shape {shape_of(p)}); give a tensor of "
                    "the primal's shape, the direction to differentiate in (tf.ones_like(x))."
                )
            if shape_of(p) != tuple(jnp.shape(as_array(t))):
                raise _errors.GradkitValueError(
                    f"a tangent of shape {tuple(jnp.shape(as_array(t)))} does not match its primal of shape "
                    f"{tuple(getattr(p, 'shape', ()))}."
                )
        self._tangents = [as_array(t) for t in tangent_leaves]
        # The tangents as given: a recorded tensor among them stays connected to the tapes that
        # recorded it, so they differentiate a JVP with respect to its tangent too (reverse over
        # forward), as TensorFlow's do.
        self._tangent_leaves = tangent_leaves
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
        return key_order.like(primals, jax.tree_util.tree_unflatten(tree, out))

    def _jvp_one(self, target, mode):
        tape = self._tape
        t_ref = tape._target_ref(target)
        s_refs = [tape._source_ref(p) for p in self._primal_leaves]
        result = None
        if t_ref is not None:
            session = tape._session
            # TensorFlow computes a JVP while the forward ops run, so the tapes and accumulators
            # recording then record its computation, whether or not they still record when
            # ``jvp`` fetches it, and this accumulator never sees its own JVPs: the JVP is a node
            # for the tapes, other than this one, that recorded the target.
            node = t_ref[0]
            tangent_refs = [_recorded_tangent(t, session) for t in self._tangent_leaves]
            recorders = node.mask if node.session is session else 0
            for ref in tangent_refs:
                recorders |= 0 if ref is None else ref[0].mask
            recorders &= session.alive & ~tape._bit
            if recorders:
                pattern = tuple(r is not None for r in s_refs)
                kind = ("jvp", pattern)
                entry, inputs = recorded_entry(
                    tape._bit, session, [t_ref], s_refs, kind, _JvpEntry, recording=recorders
                )
                if entry.connected:
                    tangents = [
                        ref if ref is not None else (graph.make_leaf(t, 0, session), 0)
                        for t, ref, r in zip(self._tangents, tangent_refs, s_refs)
                        if r is not None
                    ]
                    mask = 0
                    for n, _ in inputs + tangents:
                        mask |= n.mask if n.session is session else 0
                    jvp_node = record.record_call(
                        entry.recorded_op, inputs + tangents, session, "jvp", mask & recorders
                    )
                    attach_part(jvp_node, tape, [t_ref], s_refs, kind, _JvpEntry, len(inputs))
                    result = Tensor._make(jvp_node, 0)
            else:
                leaves, live, key, sources = structure(tape, [t_ref], s_refs)
                pattern = tuple(r is not None for r in sources)
                key = ("jvp", key, pattern)
                entry = _programs.get(key)
                if entry is None:
                    plan = replay.Plan(leaves, live, sources, tape._bit, tape._session)
                    entry = _programs[key] = _JvpEntry(plan, pattern, from_boundary=False)
                if entry.connected:
                    tangents = [t for t, r in zip(self._tangents, sources) if r is not None]
                    result = Tensor.concrete(entry.program([leaf.values[0] for leaf in leaves], tangents))
        return zeros_if_unconnected(result, shape_of(target), dtype_of(target), mode)


def _recorded_tangent(tangent, session):
    """``(node, index)`` of a tangent recorded in ``session``, or None."""
    if isinstance(tangent, Tensor) and session is not None and tangent._node.session is session:
        return tangent._node, tangent._index
    return None


class _JvpEntry:
    """A cached JVP program: of the leaf values (``program``, compiled), or of the plan's
    boundary values then the tangents (``recorded_op``, the op of a JVP a tape records)."""

    def __init__(self, plan, pattern, from_boundary=True):
        self.plan = plan
        self.connected = any(plan.connected[0])
        jvp = replay.jvp_program(plan, pattern, from_boundary)
        n = len(plan.boundary)

        def forward_derivative(*values):
            return jvp(list(values[:n]), list(values[n:]))[0]

        if from_boundary:
            reads = replay.jvp_reads_program(plan, pattern)
            # The outer tape reads from this program which values the JVP depends on.
            forward_derivative.dependence_program = lambda *values: reads(list(values[:n]), list(values[n:]))[0]
        self.recorded_op = forward_derivative
        self.program = None if from_boundary else jax.jit(lambda values, tangents: jvp(values, tangents)[0])
