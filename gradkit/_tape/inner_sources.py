"""Differentiating a recorded derivative with respect to a value computed inside its part.

A derivative taken while another tape records (a gradient, Jacobian, batch Jacobian or
``ForwardAccumulator`` JVP) is one node whose op recomputes its tape's part of the graph
from the values that part reads. For ``y = x * x; z = sin(y)`` on two tapes and
``g = inner.gradient(z, x)``, that op is ``g(x)``: an outer tape differentiates it exactly
with respect to ``x``, but ``y`` is not among its inputs. TensorFlow's gradient graph reads
the forward values, so there ``outer.gradient(g, y)`` is ``-2x sin(y)``: ``g`` as a function
of ``x`` and of ``y``, the inner derivative's chain still running through ``y = x * x``.

Where an outer derivative's source is such a value, the graph below its targets is rewritten
for that call: each recorded derivative whose part computes the source is recorded again
with the source as an extra input (a *fixed* value, see ``replay.Plan.inside``), and the
nodes above it are rebuilt over the new one. Nothing changes for any other call, and the
recorded graph itself is left as it was.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from . import bounded, graph, record, replay
from .bounded import BoundedDict


class Part(NamedTuple):
    """How a recorded derivative node was made, so it can be made again with fixed values."""

    bit: int  # its tape
    session: Any
    live: tuple  # its targets, (node, output)
    sources: tuple  # its sources, (node, output) or None
    kind: tuple  # the cache key's kind (see derivatives.recorded_entry)
    make_entry: Any
    label: str  # the recorded op's kind
    n_read: int  # how many of the node's inputs are values its part reads (then cotangents, tangents)


def attach(node, part: Part) -> None:
    node.part = part


def part_of(node) -> Part | None:
    return getattr(node, "part", None)


def rewrite(t_refs: list, s_refs: list, build) -> tuple[list, list]:
    """``t_refs`` and ``s_refs`` over a graph in which every recorded derivative that
    computes a source inside its part takes that source as an input; the same lists where
    none does.

    ``build(bit, session, live, sources, kind, make_entry, fixed, recording)`` is
    ``derivatives.recorded_entry``: the entry and input refs of a derivative recorded with
    ``fixed`` values.
    """
    wanted = [r for r in s_refs if r is not None and r[0].op is not None]  # a leaf is computed nowhere
    if not wanted:
        return t_refs, s_refs
    # Whether anything changes is a matter of structure where each source's structure id
    # names one node (a Variable's or a watched tensor's, see graph.tag_source), so a
    # training step that differentiates nested tapes with respect to those walks its graph
    # once, not at every step.
    key = None
    if all(r[0].sid in graph.source_sids for r in wanted):
        key = (tuple((r[0].sid, r[1]) for r in t_refs if r is not None), tuple((r[0].sid, r[1]) for r in wanted))
        if key in _unchanged:
            return t_refs, s_refs
    rewriter = _Rewriter(wanted, build)
    rewriter.visit([r[0] for r in t_refs if r is not None])
    if not rewriter.new:
        if key is not None:
            _unchanged[key] = True
        return t_refs, s_refs
    return [rewriter.ref(r) for r in t_refs], [rewriter.ref(r) for r in s_refs]


_unchanged: dict = BoundedDict(bounded.PROGRAMS)  # structures ``rewrite`` leaves as they are


class _Rewriter:
    def __init__(self, wanted, build):
        self.wanted = wanted
        self.build = build
        self.new: dict[int, graph.Node] = {}  # id(old node) -> its rebuilt node
        self.seen: set[int] = set()

    def ref(self, r):
        if r is None:
            return None
        return self.new.get(id(r[0]), r[0]), r[1]

    def visit(self, roots) -> None:
        for node in replay.topo_order(roots):
            if id(node) in self.seen:
                continue
            self.seen.add(id(node))
            inputs = tuple(self.ref(r) for r in node.inputs)
            part = part_of(node)
            replacement = self._derivative(node, part, inputs) if part is not None else None
            if replacement is None and any(a[0] is not b[0] for a, b in zip(inputs, node.inputs)):
                replacement = graph.make_node(node.op, inputs, node.mask, node.session)[0]
                replacement.cut = node.cut
                if part is not None:
                    attach(replacement, part)
            if replacement is not None:
                self.new[id(node)] = replacement

    @staticmethod
    def _may_be_inside(value, node, part: Part) -> bool:
        """Whether ``value`` may be computed inside the part of derivative ``node``: recorded
        by its tape, and not an input of the node (a value its part reads)."""
        if value.session is not part.session or not value.mask & part.bit:
            return False
        return all(value is not n for n, _ in node.inputs)

    def _derivative(self, node, part: Part, inputs):
        """``node`` recorded again where its part computes a wanted value (or a derivative
        inside its part was rebuilt); None where neither."""
        if not any(self._may_be_inside(r[0], node, part) for r in self.wanted):
            return None
        self.visit([n for n, _ in part.live] + [r[0] for r in part.sources if r is not None])
        live = tuple(self.ref(r) for r in part.live)
        sources = tuple(self.ref(r) for r in part.sources)
        fixed = [self.ref(r) for r in self.wanted]
        entry, reads = self.build(
            part.bit, part.session, list(live), list(sources), part.kind, part.make_entry, fixed, node.mask
        )
        changed = any(a[0] is not b[0] for a, b in zip(live + sources, part.live + part.sources) if a is not None)
        if not entry.plan.fixed_slots and not changed:
            return None
        op_inputs = [self.ref(r) for r in reads] + list(inputs[part.n_read :])
        new = record.record_call(entry.recorded_op, op_inputs, part.session, part.label, mask=node.mask)
        attach(new, part._replace(live=live, sources=sources, n_read=len(reads)))
        return new
