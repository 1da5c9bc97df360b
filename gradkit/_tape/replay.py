"""Replaying a recorded graph as a pure JAX function, and differentiating it.

A *plan* is built once per graph structure (a walk of the graph) and turned into a
``jax.jit``-compiled program of the graph's leaf values; later graphs with the same
structure reuse it, so a training loop that records the same-shaped graph every step
compiles once and then runs one XLA call per gradient.

For a tape, the plan splits the graph in two. *Inside* nodes were recorded by that tape
and depend on a source: they are recomputed from the sources inside the function that
``jax.vjp`` / ``jax.jvp`` differentiates. Everything else (nodes other tapes recorded,
nodes recorded under ``stop_recording``, values a cut passed through) is computed outside
it and closed over: a constant for this tape, yet still a function of the leaves, so an
outer tape differentiating this gradient sees every path.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from .._core.programs import holds_custom_vjp
from . import chunked_jacobian, dependence
from .graph import Node
from .record import PARITY_TERM


def topo_order(roots: Sequence[Node], stop: frozenset | set = frozenset()) -> list[Node]:
    """Non-leaf ancestors of ``roots`` (roots included), inputs before their users.

    Nodes whose id is in ``stop`` are not expanded (they are leaves of the plan).
    """
    order: list[Node] = []
    seen: set[int] = set()
    for root in roots:
        if id(root) in seen or root.op is None or id(root) in stop:
            continue
        stack = [(root, False)]
        while stack:
            node, expanded = stack.pop()
            if expanded:
                order.append(node)
                continue
            if id(node) in seen:
                continue
            seen.add(id(node))
            stack.append((node, True))
            for inp, _ in node.inputs:
                if id(inp) not in seen and inp.op is not None and id(inp) not in stop:
                    stack.append((inp, False))
    return order


def frontier(roots: Sequence[tuple[Node, int]], tape_bit: int, session) -> list[tuple[Node, int]]:
    """The values just outside what ``tape_bit``'s tape recorded, below ``roots``.

    A plan whose leaves are these covers only that tape's part of the graph: what a
    gradient recorded by an outer tape needs, however long the history before it.
    """
    out: list[tuple[Node, int]] = []
    taken: set[tuple[int, int]] = set()
    seen: set[int] = set()

    def on_tape(node):
        return node.op is not None and node.session is session and node.mask & tape_bit

    stack = list(reversed(roots))
    while stack:
        node, k = stack.pop()
        if not on_tape(node):
            if (id(node), k) not in taken:
                taken.add((id(node), k))
                out.append((node, k))
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.extend(reversed(node.inputs))
    return out


def _numbering(leaves, targets, sources):
    """Slots for every value the targets need: leaves first, then node outputs in topological
    order. Deterministic for a given graph structure, so a cached Plan's slots can be mapped
    back onto the nodes of a later graph of the same structure (see ``slot_refs``).

    ``leaves`` are leaf nodes or ``(node, output)`` pairs (a frontier, see ``frontier``).
    """
    slot: dict[tuple[int, int], int] = {}
    refs: list[tuple[Node, int]] = []
    stop = set()
    for leaf in leaves:
        ref = leaf if isinstance(leaf, tuple) else (leaf, 0)
        slot[(id(ref[0]), ref[1])] = len(refs)
        refs.append(ref)
        stop.add(id(ref[0]))
    order = topo_order([t for t, _ in targets] + [s[0] for s in sources if s is not None], stop)
    steps = []
    for node in order:
        ins = tuple(slot[(id(inp), k)] for inp, k in node.inputs)
        outs = []
        for k in range(len(node.avals)):
            slot[(id(node), k)] = len(refs)
            outs.append(len(refs))
            refs.append((node, k))
        steps.append((node, ins, tuple(outs)))
    return slot, steps, refs


def slot_refs(leaves, targets, sources) -> list[tuple[Node, int]]:
    """The (node, output) behind each slot of a Plan built from a graph of this structure."""
    return _numbering(leaves, targets, sources)[2]


def exact_shape(order: Sequence[Node]) -> tuple:
    """The graph's exact shape: each node's structure id and which earlier node each input is.

    Structure ids say what is computed; this also says which equal computations are the
    same node object (needed only for gradients with respect to intermediate nodes).
    """
    index = {id(n): i for i, n in enumerate(order)}
    return tuple((n.sid, tuple((index.get(id(inp), -1), k) for inp, k in n.inputs)) for n in order)


def paths_to(roots: Sequence[Node], wanted: Sequence[tuple[Node, int]], expand) -> dict | None:
    """A path from ``roots`` to each wanted ``(node, output)``: ``(root, input, ..., output)``,
    through nodes for which ``expand(node)`` holds.

    ``follow`` walks it back in a later graph of the same structure. None if one is not
    reachable that way.
    """
    want = {id(n) for n, _ in wanted}
    found: dict[int, tuple] = {}
    seen: set[int] = set()
    for r, root in enumerate(roots):
        stack = [(root, (r,))]
        while stack and len(found) < len(want):
            node, path = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            if id(node) in want:
                found[id(node)] = path
            if not expand(node):
                continue
            for j, (inp, _) in enumerate(node.inputs):
                if id(inp) not in seen:
                    stack.append((inp, path + (j,)))
    if len(found) < len(want):
        return None
    return {(id(n), k): found[id(n)] + (k,) for n, k in wanted}


def follow(roots: Sequence[Node], path: tuple) -> tuple[Node, int]:
    """The ``(node, output)`` at the end of a path from ``paths_to``."""
    node = roots[path[0]]
    for j in path[1:-1]:
        node = node.inputs[j][0]
    return node, path[-1]


class Plan:
    """Slot-numbered steps for evaluating (and differentiating) one graph structure.

    Holds no reference to the nodes it was built from, so a cached plan keeps no graph alive.
    """

    def __init__(
        self,
        leaves: Sequence[Node],
        targets: Sequence[tuple[Node, int]],
        sources: Sequence[tuple[Node, int] | None] = (),
        tape_bit: int = 0,
        session=None,
        fixed: Sequence[tuple[Node, int]] = (),
    ):
        slot, steps, refs = _numbering(leaves, targets, sources)
        n = len(refs)
        self.n_leaves = len(leaves)
        self.n_slots = n
        self.target_slots = tuple(slot[(id(t), k)] for t, k in targets)
        self.source_slots = tuple(None if s is None else slot[(id(s[0]), s[1])] for s in sources)

        # Which slots depend on which sources, through nodes this tape recorded. A source
        # does not cut the paths through it: like TensorFlow, the gradient of an earlier
        # source includes the paths through a later one.
        dep: dict[int, int] = {}
        self.delta_of: dict[int, tuple[int, ...]] = {}
        for j, s in enumerate(self.source_slots):
            if s is not None:
                dep[s] = dep.get(s, 0) | (1 << j)
                self.delta_of[s] = self.delta_of.get(s, ()) + (j,)
        inside_steps, outside_steps = [], []
        produced_inside: set[int] = set()
        # Parity terms (see Plan.inside) that only this tape records.
        self.own_parity_terms: set[int] = set()
        for node, ins, outs in steps:
            on_tape = bool(tape_bit) and node.session is session and bool(node.mask & tape_bit)
            d = 0
            if on_tape:
                for i in ins:
                    d |= dep.get(i, 0)
            per_output = _output_deps(node, ins, dep) if d else None
            if per_output is not None and not any(per_output):
                d = 0  # a derivative op none of whose results reads a source: a constant here
            if d:
                for o, od in zip(outs, per_output) if per_output is not None else ((o, d) for o in outs):
                    if od:
                        dep[o] = dep.get(o, 0) | od
                    produced_inside.add(o)
                inside_steps.append((node.op, ins, outs))
                if node.op.kind == PARITY_TERM and not node.mask & ~tape_bit:
                    self.own_parity_terms.add(outs[0])
            outside_steps.append((node.op, ins, outs))
        self.outside_steps = outside_steps
        self.inside_steps = inside_steps
        self.produced_inside = produced_inside
        # The values the differentiated part reads from outside itself. A gradient recorded
        # by an outer tape takes these (not the leaves) as inputs, so it never recomputes
        # the history before it, which would grow exponentially with nesting depth.
        needed = {i for _, ins, _ in inside_steps for i in ins}
        needed |= set(self.delta_of) | set(self.target_slots)
        self.boundary = tuple(sorted(i for i in needed if i not in produced_inside))
        # Values computed inside that the op takes as inputs all the same (``fixed``), after
        # the boundary: see ``inside``. Only where an outer tape differentiates with respect
        # to such a value (see ``inner_sources``); a plain recorded derivative has none.
        fixed_slots = []
        for ref in fixed:
            s = slot.get((id(ref[0]), ref[1]))
            if s is not None and s in produced_inside and s not in fixed_slots:
                fixed_slots.append(s)
        self.fixed_slots = frozenset(fixed_slots)
        self.boundary += tuple(fixed_slots)
        # The values computed inside that a fixed value is computed from: ``inside`` also
        # computes these without the deltas.
        upstream = set(fixed_slots)
        for _, ins, outs in reversed(inside_steps):
            if any(o in upstream for o in outs):
                upstream.update(i for i in ins if i in produced_inside)
        self.upstream_of_fixed = frozenset(upstream)
        # Decided from the recorded shapes, not from values: in boundary mode the values
        # computed inside do not exist until the differentiated function runs.
        self.source_avals = tuple(None if s is None else refs[s][0].avals[refs[s][1]] for s in self.source_slots)
        self.target_avals = tuple(refs[t][0].avals[refs[t][1]] for t in self.target_slots)
        # Targets that are results of a recorded derivative (a gradient differentiated again,
        # as in a Hessian-vector product by nested tapes): see vjp_program.
        self.derivative_targets = tuple(
            refs[t][0].op is not None and refs[t][0].op.kind in dependence.DERIVATIVE_KINDS for t in self.target_slots
        )
        # Integer and boolean values carry no gradient (TensorFlow gives None): a path from
        # an integer source, or to an integer target, does not connect them.
        self.connected = tuple(
            tuple(
                bool(dep.get(t, 0) & (1 << j)) and _is_float(t_aval) and _is_float(s_aval)
                for j, s_aval in enumerate(self.source_avals)
            )
            for t, t_aval in zip(self.target_slots, self.target_avals)
        )

    # -- evaluation ------------------------------------------------------------------------
    def forward(self, leaf_values) -> list:
        env = list(leaf_values) + [None] * (self.n_slots - self.n_leaves)
        for op, ins, outs in self.outside_steps:
            values = op.call_flat(*[env[i] for i in ins])
            for o, v in zip(outs, values):
                env[o] = v
        return env

    def env_from_boundary(self, values) -> list:
        env: list = [None] * self.n_slots
        for i, v in zip(self.boundary, values):
            env[i] = v
        return env

    def inside(self, env: list, deltas) -> list:
        """Target values recomputed with ``deltas[j]`` added to source ``j``.

        Differentiating at ``deltas == 0`` gives the derivative with respect to each
        source, leaf or intermediate, with every other value held fixed.
        """
        env = list(env)
        delta_of = self.delta_of
        # Without the deltas, for the values fixed values are computed from (see below).
        unperturbed = list(env) if self.fixed_slots else None

        def perturbed(slot, value):
            for j in delta_of[slot]:
                if deltas[j] is not None:
                    value = value + deltas[j]
            return value

        for slot in delta_of:
            if slot not in self.produced_inside:
                env[slot] = perturbed(slot, env[slot])
        for op, ins, outs in self.inside_steps:
            values = self._step(op, ins, outs, env, perturbed)
            if unperturbed is not None and outs[0] in self.upstream_of_fixed:
                # A fixed value is an input of the op: its value is that input, and its
                # derivative along the deltas is that of its recomputation. Written as
                # ``fixed + (recomputed - recomputed without deltas)``, which is the input at
                # zero deltas and differentiates as the recomputation does along them, while
                # a derivative of the whole op with respect to the values it reads sees the
                # fixed value, not the recomputation (whose two terms cancel): TensorFlow's
                # gradient graph, which reads the forward values it was given.
                values0 = self._step(op, ins, outs, unperturbed, lambda slot, value: value)
                fixed = [o in self.fixed_slots for o in outs]
                values = [unperturbed[o] + (v - v0) if f else v for o, v, v0, f in zip(outs, values, values0, fixed)]
                for o, v0, f in zip(outs, values0, fixed):
                    if not f:
                        unperturbed[o] = v0
            for o, v in zip(outs, values):
                env[o] = perturbed(o, v) if o in delta_of else v
        return [env[t] for t in self.target_slots]

    def _step(self, op, ins, outs, env, perturbed) -> list:
        if outs[0] in self.own_parity_terms and ins[0] in self.delta_of and ins[0] not in self.produced_inside:
            # A parity tape's term through its Variable source, recorded by this tape
            # alone: zero, with that source's path for this derivative only. Built from
            # the deltas, not from the source's value: an outer tape differentiating this
            # derivative (nested tapes) has a term of its own for the read, and the source
            # may be on its path (an inner tape's source made after an outer tape's read),
            # which would count the read twice. A term the outer tape shares keeps the
            # value's path: it is that tape's only one.
            return op.call_flat(perturbed(ins[0], jnp.zeros_like(env[ins[0]])))
        return op.call_flat(*[env[i] for i in ins])


def _output_deps(node: Node, ins, dep) -> list[int] | None:
    """The sources each output of ``node`` depends on, where its op is a derivative recorded
    as one op whose outputs may each read only some of its inputs; None for any other op
    (every output depends on every input)."""
    if not dependence.traced(node.op):
        return None
    reads = dependence.output_dependence(node.op, [n.avals[k] for n, k in node.inputs])
    out = []
    for mask in reads:
        d = 0
        for p, i in enumerate(ins):
            if mask >> p & 1:
                d |= dep.get(i, 0)
        out.append(d)
    return out


def _scatter(n, positions, values) -> list:
    full: list[Any] = [None] * n
    for i, v in zip(positions, values):
        full[i] = v
    return full


def vjp_program(plan: Plan, from_boundary: bool = False):
    """``program(values, cotangents) -> (target_values, source_grads)``.

    ``values`` are the leaf values, or with ``from_boundary`` the values of
    ``plan.boundary``. ``cotangents[i]`` is ``None`` for "ones" (the gradient of the sum,
    TensorFlow's rule). Source gradients are ``None`` where the source is not connected.
    """

    diff_targets = [j for j, row in enumerate(plan.connected) if any(row) and _is_float(plan.target_avals[j])]
    active = [i for i, a in enumerate(plan.source_avals) if a is not None and _is_float(a)]

    def program(values, cotangents):
        env = plan.env_from_boundary(values) if from_boundary else plan.forward(values)

        def g(active_deltas):
            outs = plan.inside(env, _scatter(len(plan.source_slots), active, active_deltas))
            return [outs[j] for j in diff_targets]

        zeros = [jnp.zeros(plan.source_avals[i].shape, plan.source_avals[i].dtype) for i in active]
        outs, pull = jax.vjp(g, zeros)
        cts = []
        for j, out in zip(diff_targets, outs):
            ct = cotangents[j]
            cts.append(jnp.ones_like(out) if ct is None else jnp.broadcast_to(jnp.asarray(ct, out.dtype), out.shape))
        (grads,) = pull(cts)
        result: list[Any] = [None] * len(plan.source_slots)
        for i, gval in zip(active, grads):
            result[i] = gval
        # The targets' values come back with their gradient (a loss read for logging costs no
        # second call), except a derivative's results: the value of a gradient differentiated
        # again is a whole inner backward pass that the outer derivative does not otherwise
        # need, so it is computed only if it is read.
        targets_now = [None if derived else env[t] for t, derived in zip(plan.target_slots, plan.derivative_targets)]
        return targets_now, result

    return program


def _jvp(f, primals: tuple, tangents: tuple):
    """``jax.jvp(f, primals, tangents)``; where ``f`` holds a ``custom_gradient``, the JVP as the
    transpose of its VJP (the double-backward trick TensorFlow's forward mode uses)."""
    if not holds_custom_vjp(f, *primals):
        return jax.jvp(f, primals, tangents)
    out, pull = jax.vjp(f, *primals)
    # Linear in the cotangent, so any point gives the transpose; at ones, not zeros, as a rule
    # may branch on the cotangent's sign (cumulative_logsumexp splits it into its positive and
    # negative parts) and be flat in it exactly at zero.
    _, pull_back = jax.vjp(pull, jax.tree_util.tree_map(jnp.ones_like, out))
    return out, pull_back(tuple(tangents))[0]


def _jacfwd(f):
    """``jax.jacfwd(f)``, or ``jax.jacrev(f)`` where ``f`` holds a ``custom_gradient``."""

    def jacobian(*args):
        return (jax.jacrev if holds_custom_vjp(f, *args) else jax.jacfwd)(f)(*args)

    return jacobian


def _jacobian(g, primals: list, forward_mode: bool, parallel_iterations):
    """``jax.jacfwd(g)(primals)`` or ``jax.jacrev(g)(primals)``; a large Jacobian in chunks."""
    if forward_mode and holds_custom_vjp(g, primals):
        forward_mode = False  # a custom_gradient has no forward rule: the same Jacobian, in reverse
    return chunked_jacobian.jacobian(g, primals, forward_mode, parallel_iterations)


def _is_float(aval) -> bool:
    return jnp.issubdtype(aval.dtype, jnp.inexact)


def jvp_program(plan: Plan, pattern: tuple, from_boundary: bool = False):
    """``program(values, tangents) -> target_tangents``.

    ``values`` are the leaf values, or with ``from_boundary`` the values of
    ``plan.boundary``; ``tangents`` has an entry for each source where ``pattern`` is True.
    """
    active = [i for i, a in enumerate(plan.source_avals) if a is not None and _is_float(a) and pattern[i]]
    tangent_at = {i: k for k, i in enumerate(j for j, has in enumerate(pattern) if has)}

    def program(values, tangents):
        env = plan.env_from_boundary(values) if from_boundary else plan.forward(values)

        def g(active_deltas):
            return plan.inside(env, _scatter(len(plan.source_slots), active, active_deltas))

        avals = [plan.source_avals[i] for i in active]
        primals = [jnp.zeros(a.shape, a.dtype) for a in avals]
        tans = [jnp.asarray(tangents[tangent_at[i]], a.dtype).reshape(a.shape) for i, a in zip(active, avals)]
        _, out_t = _jvp(g, (primals,), (tans,))
        return out_t

    return program


def jvp_reads_program(plan: Plan, pattern: tuple):
    """``program(values, tangents) -> target_tangents`` like ``jvp_program`` from the boundary,
    with a zero tangent for every float value read as well: TensorFlow's ``ForwardAccumulator``
    gives an op's inputs without a tangent a zero one, so its JVP of ``x * y`` along ``x``
    reads ``x`` too. Traced only to find which values a recorded JVP reads (see
    ``dependence``), never run."""
    active = [i for i, a in enumerate(plan.source_avals) if a is not None and _is_float(a) and pattern[i]]
    tangent_at = {i: k for k, i in enumerate(j for j, has in enumerate(pattern) if has)}

    def program(values, tangents):
        floats = [k for k, v in enumerate(values) if _is_float(v)]

        def g(float_values, active_deltas):
            full = list(values)
            for k, v in zip(floats, float_values):
                full[k] = v
            return plan.inside(plan.env_from_boundary(full), _scatter(len(plan.source_slots), active, active_deltas))

        avals = [plan.source_avals[i] for i in active]
        primals = ([values[k] for k in floats], [jnp.zeros(a.shape, a.dtype) for a in avals])
        zero_tangents = [jnp.zeros_like(values[k]) for k in floats]
        tans = [jnp.asarray(tangents[tangent_at[i]], a.dtype).reshape(a.shape) for i, a in zip(active, avals)]
        _, out_t = _jvp(g, primals, (zero_tangents, tans))
        return out_t

    return program


def jacobian_program(plan: Plan, forward_mode: bool, from_boundary: bool = False, parallel_iterations=None):
    """``program(values) -> (target_value, [d target / d source])`` (one target).

    ``values`` are the leaf values, or with ``from_boundary`` the values of ``plan.boundary``
    (the target value is then None when the tape computed it). Each Jacobian has shape
    ``target.shape + source.shape``: vectorised with ``vmap`` (``jax.jacrev`` /
    ``jax.jacfwd``), never a Python loop over elements; a large one a chunk of
    ``parallel_iterations`` rows (or columns) at a time (``chunked_jacobian``).
    """
    active = [i for i, a in enumerate(plan.source_avals) if a is not None and _is_float(a)]

    def program(values):
        env = plan.env_from_boundary(values) if from_boundary else plan.forward(values)

        def g(active_deltas):
            return plan.inside(env, _scatter(len(plan.source_slots), active, active_deltas))[0]

        result: list[Any] = [None] * len(plan.source_slots)
        if active and _is_float(plan.target_avals[0]):
            avals = [plan.source_avals[i] for i in active]
            zeros = [jnp.zeros(a.shape, a.dtype) for a in avals]
            # TensorFlow's Jacobian has each source's dtype, computed in reverse mode. Forward
            # mode computes in the target's dtype: used only where the two agree (a float32
            # target of a float16 source would lose the float32 precision otherwise).
            same = all(a.dtype == plan.target_avals[0].dtype for a in avals)
            jac = _jacobian(g, zeros, forward_mode and same, parallel_iterations)
            for i, j, a in zip(active, jac, avals):
                result[i] = j.astype(a.dtype)
        return env[plan.target_slots[0]], result

    return program


def batch_jacobian_program(
    plan: Plan, check: bool, per_example: bool = False, from_boundary: bool = False, select_tolerance=None
):
    """``program(values, probe) -> (jac, leak)``: per-example Jacobians.

    ``values`` are the leaf values, or with ``from_boundary`` the values of ``plan.boundary``.

    The target ``y`` has shape ``(b, *t)`` and the source ``x`` ``(b, *s)``; the result is
    ``(b, *t, *s)``. By default it takes one vector-Jacobian product per target element (the
    same cotangent on every example), vectorised with vmap: TensorFlow's algorithm, which is
    the per-example Jacobian when examples are independent.

    With ``per_example``, it instead vmaps ``jacrev`` (or ``jacfwd``) of the graph run on one
    example at a time, as a hand-written ``jax.vmap(jax.jacrev(f))`` does, which XLA often
    compiles to less work. That is only valid when the graph works example by example; if
    the graph does not even run on one example (a value with the batch's size would
    broadcast against it), the default algorithm is used.

    With ``check``, the JVP of the whole batch along ``probe`` (a random tangent on every
    example; unused, and may be None, without ``check``) is compared with what the
    per-example Jacobians say it is (each example's own JVP with ``per_example``, the
    Jacobians contracted with ``probe`` otherwise): ``leak``, relative, is ~0 exactly when
    examples are independent (and, with ``per_example``, the graph is per-example).

    With ``select_tolerance`` (and ``check`` and ``per_example``), the program itself picks:
    the per-example Jacobians where this call's ``leak`` is at most the tolerance, the
    whole-batch algorithm otherwise (``jax.lax.cond``: only the picked one runs). For a
    program compiled while the values are unknown (inside ``jax.jit``), whose examples are
    proven independent: the whole-batch algorithm is then exact, and the per-example one is
    used wherever this call's values confirm it.
    """

    def program(values, probe):
        env = plan.env_from_boundary(values) if from_boundary else plan.forward(values)
        source = env[plan.source_slots[0]]  # a source is never computed by the differentiated part

        def g(delta):
            return plan.inside(env, [delta])[0]

        t_aval = plan.target_avals[0]
        b = t_aval.shape[0]
        t_inner = t_aval.shape[1:]
        zero = jnp.zeros_like(source)
        one = _one_example(plan, env, source, t_inner) if per_example else None
        if select_tolerance is not None and one is not None:
            return _selected_batch_jacobian(g, one, source, probe, t_aval, select_tolerance)
        if one is not None:
            jac = jax.vmap(one.jacobian)(source)
        else:
            jac = _batch_summed_jacobian(g, zero, t_aval.shape)
        if check and select_tolerance is None:
            probe = probe.astype(source.dtype)
            _, t_out = _jvp(g, (zero,), (probe,))
            if one is not None:
                # What the per-example Jacobians say the tangent does, as a JVP of each example:
                # the same linear map as ``jac``, without reading ``jac`` back from memory.
                explained = jax.vmap(lambda e, p: _jvp(one.fn, (e,), (p,))[1])(source, probe)
            else:
                s_axes = "".join(chr(ord("m") + i) for i in range(source.ndim - 1))
                t_axes = "".join(chr(ord("c") + i) for i in range(len(t_inner)))
                spec = f"a{t_axes}{s_axes},a{s_axes}->a{t_axes}"
                explained = jnp.einsum(spec, jac, probe)
                if _is_complex(t_aval) or _is_complex(source):
                    # Complex values: the map from tangent to target tangent is only real-linear.
                    # A VJP's rows ``r`` satisfy Re(ct . jvp(p)) = Re(r . p) (JAX's pairing), so
                    # Re(dy_j) = Re(r_j . p) and Im(dy_j) = -Re(r'_j . p), r'_j the row of the
                    # cotangent 1j * e_j.
                    explained = jnp.real(explained)
                    if _is_complex(t_aval):
                        imag_rows = _batch_summed_jacobian(g, zero, t_aval.shape, 1j)
                        explained = explained - 1j * jnp.real(jnp.einsum(spec, imag_rows, probe))
            leak = _relative_gap(t_out, explained)
            if not (_is_complex(t_aval) or _is_complex(source)):
                # A forward-mode derivative can overflow where the reverse-mode Jacobian does not
                # (the JVP of x / y squares y): then the same test runs in reverse mode, with a
                # random cotangent, instead of letting a NaN answer pass.
                leak = jax.lax.cond(
                    jnp.isfinite(leak),
                    lambda: leak,
                    lambda: _reverse_leak(g, zero, jac.reshape(-1), t_aval).astype(leak.dtype),
                )
        else:
            leak = jnp.zeros((), t_aval.dtype)
        return jac.reshape((b, *t_inner, *source.shape[1:])), leak

    return program


def _selected_batch_jacobian(g, one, source, probe, t_aval, tolerance):
    """The per-example Jacobians where a random JVP confirms them on this call's values, else
    the whole-batch algorithm's (see ``batch_jacobian_program``); ``(jac, leak)``."""
    b, t_inner = t_aval.shape[0], t_aval.shape[1:]
    shape = (b, *t_inner, *source.shape[1:])
    zero = jnp.zeros_like(source)

    def per_example(x):
        return jax.vmap(one.jacobian)(x).reshape(shape)

    def whole_batch(x):
        return _batch_summed_jacobian(g, zero, t_aval.shape).reshape(shape)

    if jax.eval_shape(per_example, source) != jax.eval_shape(whole_batch, source):
        return whole_batch(source), jnp.zeros((), t_aval.dtype)  # lax.cond needs one type
    probe = probe.astype(source.dtype)
    _, t_out = _jvp(g, (zero,), (probe,))
    explained = jax.vmap(lambda e, p: _jvp(one.fn, (e,), (p,))[1])(source, probe)
    leak = _relative_gap(t_out, explained)
    # A NaN leak (NaN values) fails the comparison too: the whole-batch algorithm.
    return jax.lax.cond(leak <= tolerance, per_example, whole_batch, source), leak


def _is_complex(x) -> bool:
    return jnp.issubdtype(x.dtype, jnp.complexfloating)


def _relative_gap(got, explained):
    """How far ``got`` is from ``explained``, relative to the larger of the two (0 when equal)."""
    scale = jnp.max(jnp.abs(got)) + jnp.max(jnp.abs(explained)) + 1e-30
    return jnp.max(jnp.abs(got - explained)) / scale


def _reverse_leak(g, zero, jac_flat, t_aval):
    """The independence check in reverse mode: the VJP of the whole batch with a random
    cotangent on every example, against what the computed Jacobians ``jac`` (one example's
    own, or the whole-batch algorithm's rows) say it is."""
    y, pull = jax.vjp(g, zero)
    cotangent = jax.random.normal(jax.random.PRNGKey(0), y.shape, y.dtype)
    got = pull(cotangent)[0]
    b, t_size = t_aval.shape[0], int(np.prod(t_aval.shape[1:], dtype=np.int64))
    jac = jac_flat.reshape((b, t_size, -1))
    explained = jnp.einsum("ats,at->as", jac, cotangent.reshape((b, t_size)))
    return _relative_gap(got.reshape(explained.shape), explained)


def _batch_summed_jacobian(g, zero, t_shape, unit=1):
    """``result[i] = sum_b d y[b] / d x[i]``, one VJP per target element (TensorFlow's).

    Row ``j`` is the VJP of the cotangent ``unit * e_j`` on every example.
    """
    y, pull = jax.vjp(g, zero)
    t_inner = t_shape[1:]
    t_size = int(np.prod(t_inner, dtype=np.int64))

    def row(j):
        ct = jax.nn.one_hot(j, t_size, dtype=y.dtype)
        if unit != 1:
            ct = ct * jnp.asarray(unit, y.dtype)
        ct = jnp.broadcast_to(ct.reshape(t_inner), y.shape)
        return pull(ct)[0]

    rows = jax.vmap(row)(jnp.arange(t_size))  # (t_size, b, *s)
    return jnp.moveaxis(rows, 0, 1).reshape((t_shape[0], *t_inner, *zero.shape[1:]))


class _OneExample(NamedTuple):
    fn: Any  # one example -> its target
    jacobian: Any  # jacrev or jacfwd of fn, whichever is cheaper


def _one_example(plan: Plan, env, source, t_inner) -> _OneExample | None:
    """The graph run on one example, or None where the graph is not per-example."""
    src_slot = plan.source_slots[0]

    def batch_of_one(example):
        env1 = list(env)
        env1[src_slot] = example[None]
        return plan.inside(env1, [None])[0]

    def one(example):
        return batch_of_one(example)[0]

    t_dtype = plan.target_avals[0].dtype
    row = jax.ShapeDtypeStruct(source.shape[1:], source.dtype)
    try:
        out = jax.eval_shape(batch_of_one, row)
    except (TypeError, ValueError, IndexError):
        return None
    if tuple(out.shape) != (1, *t_inner):
        return None  # a value with the batch's size broadcast against the single example
    s_size = int(np.prod(source.shape[1:], dtype=np.int64))
    t_size = int(np.prod(t_inner, dtype=np.int64))
    if jnp.issubdtype(t_dtype, jnp.complexfloating):
        # jacrev/jacfwd of a complex output need a holomorphic function; TensorFlow's rows
        # (one VJP per target element) are defined for any.
        return _OneExample(one, _rows_jacobian(one, t_inner, t_size))
    # Forward mode takes real inputs only, and computes in the target's dtype: reverse mode
    # (TensorFlow's) for a complex source or a target of another dtype.
    reverse = t_size <= s_size or source.dtype != t_dtype or jnp.issubdtype(source.dtype, jnp.complexfloating)
    return _OneExample(one, jax.jacrev(one) if reverse else _jacfwd(one))


def _rows_jacobian(fn, t_inner, t_size):
    """The Jacobian of ``fn`` (one example) as one VJP per output element with the one-hot
    cotangent: TensorFlow's definition, valid for non-holomorphic complex functions."""

    def jacobian(example):
        y, pull = jax.vjp(fn, example)
        basis = jnp.eye(t_size, dtype=y.dtype).reshape((t_size, *t_inner))
        (rows,) = jax.vmap(pull)(basis)
        return rows.reshape((*t_inner, *example.shape))

    return jacobian
