"""Running a tape's derivatives: find the compiled program for a graph, run or record it.

The usual call runs one cached ``jax.jit`` program of the graph's leaves (forward and
derivative together). A derivative taken while a tape records is recorded as a node
instead, over only the values its tape's part reads, so outer tapes differentiate it.
"""

from __future__ import annotations

import enum
import math
import sys
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .. import _errors
from .._core import frames
from .._core.variable import Variable, broadcasts_to
from . import batch_independence, batch_size_reads, bounded, graph, inner_sources, record, replay
from .bounded import BoundedDict
from .graph import make_leaf, merge_leaves
from .tensor import Tensor


class UnconnectedGradients(enum.Enum):
    """What ``gradient`` returns for a source the target does not depend on."""

    NONE = "none"
    ZERO = "zero"


def unconnected(value) -> UnconnectedGradients:
    if isinstance(value, UnconnectedGradients):
        return value
    try:
        return UnconnectedGradients(value)
    except ValueError:
        raise _errors.GradkitValueError(
            f"unconnected_gradients={value!r} is not one of 'none', 'zero' (or gk.UnconnectedGradients.NONE / .ZERO)."
        ) from None


def flatten(tree):
    return jax.tree_util.tree_flatten(tree, is_leaf=lambda x: isinstance(x, (Variable, Tensor)) or x is None)


def flatten_like(output_gradients, n):
    leaves, _ = jax.tree_util.tree_flatten(
        output_gradients, is_leaf=lambda x: isinstance(x, (Variable, Tensor)) or x is None
    )
    if len(leaves) != n:
        raise _errors.GradkitValueError(
            f"output_gradients has {len(leaves)} entries but the target has {n}; give one cotangent per target tensor."
        )
    return leaves


def dtype_of(x):
    return np.dtype(getattr(x, "dtype", None) or jnp.result_type(x))


def shape_of(x) -> tuple:
    """The shape of a tensor, Variable or array; () for a Python scalar."""
    return tuple(getattr(x, "shape", ()))


def zeros_if_unconnected(result, shape, dtype, mode):
    """``result``, or zeros of ``shape`` where it is None and ``mode`` asks for zeros."""
    if result is None and mode is UnconnectedGradients.ZERO:
        return Tensor.concrete(jnp.zeros(tuple(shape), dtype))
    return result


programs: dict = BoundedDict(bounded.PROGRAMS)


def structure(tape, t_refs, s_refs):
    """Leaves, cache key parts, and source specs for targets/sources in this tape's session."""
    live = [r for r in t_refs if r is not None]
    if not live:
        return None
    leaves, maps = merge_leaves([n for n, _ in live])
    leaf_pos = {id(leaf): i for i, leaf in enumerate(leaves)}
    specs = []
    needs_walk = False
    for r in s_refs:
        if r is None:
            specs.append(None)
        elif r[0].op is None:
            p = leaf_pos.get(id(r[0]))
            specs.append(("leaf", p) if p is not None else None)
        else:
            needs_walk = True
            specs.append(("node",))
    shape = None
    if needs_walk:
        order = replay.topo_order([n for n, _ in live])
        index = {id(n): i for i, n in enumerate(order)}
        specs = [
            (s if s is None or s[0] == "leaf" else (("node", index[id(r[0])], r[1]) if id(r[0]) in index else None))
            for s, r in zip(specs, s_refs)
        ]
        if _untagged_node_source(s_refs):
            shape = replay.exact_shape(order)
    key = (tuple((n.sid, k) for n, k in live), maps, tape._bit, tuple(specs), shape)
    sources = [r if spec is not None else None for r, spec in zip(s_refs, specs)]
    return leaves, live, key, sources


def frontier_structure(bit, session, live, s_refs, fixed=()):
    """Like ``structure``, over only this tape's part of the graph (for a recorded gradient),
    with ``fixed`` values among its inputs (see ``inner_sources``)."""
    roots = live + [r for r in s_refs if r is not None]
    front = replay.frontier(roots, bit, session)
    position = {(id(n), k): i for i, (n, k) in enumerate(front)}
    order = replay.topo_order([n for n, _ in roots], {id(n) for n, _ in front})
    index = {id(n): i for i, n in enumerate(order)}
    specs = []
    for r in s_refs:
        if r is None:
            specs.append(None)
        elif (id(r[0]), r[1]) in position:
            specs.append(("front", position[(id(r[0]), r[1])]))
        else:
            specs.append(("node", index[id(r[0])], r[1]))
    shape = replay.exact_shape(order) if fixed or _untagged_node_source(s_refs) else None
    fixed_spec = tuple((index.get(id(n), -1), k) for n, k in fixed)
    key = ("recorded", tuple((n.sid, k) for n, k in live), bit, tuple(specs), shape, fixed_spec)
    return front, key


def _untagged_node_source(s_refs) -> bool:
    """Whether a source is an intermediate node whose structure id may be shared.

    A gradient with respect to such a node depends on which uses of it are that very node
    object, so its cache key needs the graph's exact shape. Leaves and the nodes where a
    tape first saw a Variable or a watched tensor are told apart by their structure ids.
    """
    return any(r is not None and r[0].op is not None and r[0].sid not in graph.source_sids for r in s_refs)


def run_vjp(tape, t_refs, s_refs, cts):
    t_refs, s_refs = inner_sources.rewrite(t_refs, s_refs, recorded_entry)
    live = [r for r in t_refs if r is not None]
    if not live:
        return [None] * len(s_refs)
    for r, c in zip(t_refs, cts):
        if r is not None and c is not None:
            _check_cotangent(r[0].avals[r[1]].shape, c)
    live_cts = [c for r, c in zip(t_refs, cts) if r is not None]
    ct_spec = tuple(c is not None for c in live_cts)
    s = graph.local.session
    if s is not None and s.active and s is tape._session:
        # Another tape (or this one) is recording: the gradient becomes a node of the graph,
        # over only the values this tape's part reads, so outer tapes differentiate it.
        return _record_vjp(tape, live, list(s_refs), live_cts, ct_spec, s)
    st = structure(tape, t_refs, s_refs)
    leaves, live, key, sources = st
    key = ("vjp", key, ct_spec)
    entry = programs.get(key)
    if entry is None:
        plan = replay.Plan(leaves, live, sources, tape._bit, tape._session)
        entry = programs[key] = _VjpEntry(plan, ct_spec)
    ct_values = [as_array(c) for c in live_cts if c is not None]
    leaf_values = [leaf.values[0] for leaf in leaves]
    targets, grads = entry.run(leaf_values, ct_values)
    # Called inside a jax trace the graph was not recorded in (a gk.jit step or tf.function
    # differentiating a tape recorded outside it), the targets keep no value: a later read
    # outside that trace could not use its tracers.
    keep = record.keepable(tape._session, leaf_values, targets)
    for (node, _), value in zip(live, targets):
        if keep and node.values is None and len(node.avals) == 1 and value is not None:
            node.values = [value]
    out = [None] * len(s_refs)
    for i, g in zip(entry.present, grads):
        if entry.connected[i]:
            out[i] = Tensor.concrete(g)
    return out


def _check_cotangent(target_shape, c) -> None:
    """An ``output_gradients`` entry must have its target's shape, or broadcast to it."""
    shape = shape_of(c) if not isinstance(c, (list, tuple)) else np.shape(c)
    if not broadcasts_to(shape, target_shape):
        raise _errors.GradkitValueError(
            f"output_gradients has an entry of shape {tuple(shape)} for a target of shape {tuple(target_shape)}; "
            "each cotangent must have its target's shape (or broadcast to it, as a scalar does)."
        )


class _VjpEntry:
    """A cached gradient program: compiled from the leaves (the usual call) or, when an
    outer tape records the gradient, run as an op over the plan's boundary values."""

    def __init__(self, plan, ct_spec):
        self.plan = plan
        n = len(plan.source_slots)
        self.connected = [any(col) for col in zip(*plan.connected)] if plan.connected else [False] * n
        self.present = [i for i in range(n) if plan.source_slots[i] is not None]
        self.ct_spec = ct_spec
        self.compiled = jax.jit(self._flat(replay.vjp_program(plan)))
        self.op_by_op = False  # set when the program cannot be compiled (see ``run``)
        from_boundary = self._flat(replay.vjp_program(plan, from_boundary=True))
        n_boundary = len(plan.boundary)

        def gradient(*values):
            return from_boundary(list(values[:n_boundary]), list(values[n_boundary:]))[1]

        # One function per cached program, so that a recorded gradient has the same op (and
        # the graph around it the same structure) every time: no recompiles in a loop.
        self.recorded_op = gradient

    def run(self, leaf_values, ct_values):
        """The targets' values and the gradients: one compiled program, or, where the program
        needs a value while it is compiled (a custom gradient's ``grad_fn`` that branches in
        Python on ``float(dy)``), op by op on concrete values, as eager TensorFlow runs it."""
        if not self.op_by_op:
            try:
                return self.compiled(leaf_values, ct_values)
            except frames.TRACER_VALUE_ERRORS:
                if any(isinstance(v, jax.core.Tracer) for v in (*leaf_values, *ct_values)):
                    raise  # inside a trace there are no concrete values to run on
                self.op_by_op = True
        with jax.disable_jit():
            return self._flat(replay.vjp_program(self.plan))(leaf_values, ct_values)

    def _flat(self, vjp):
        ct_spec, present = self.ct_spec, self.present

        def flat(values, ct_values):
            it = iter(ct_values)
            full_cts = [next(it) if has else None for has in ct_spec]
            targets, grads = vjp(values, full_cts)
            return targets, [grads[i] if grads[i] is not None else jnp.zeros(()) for i in present]

        return flat


def as_array(c):
    if isinstance(c, Tensor):
        return record.value_of(c)
    if isinstance(c, Variable):
        return frames.concrete(c.value)
    if isinstance(c, (jax.Array, jax.core.Tracer)):
        return c  # jnp.asarray would return it too, after tens of microseconds of checks
    return jnp.asarray(c)


# Where a recorded gradient's inputs are, by the structure ids of its targets and sources:
# paths from the targets (see replay.follow), checked against the sources before use.
_located: dict = BoundedDict(bounded.PROGRAMS)


def _record_vjp(tape, live, sources, cts, ct_spec, session):
    """Record the gradient computation itself, so that an outer tape can differentiate it.

    A training step repeats the same structure, so where the gradient's inputs lie in the
    graph is remembered by the targets' and sources' structure ids, and only checked (the
    sources must be found where they were) instead of walking this tape's part again.
    """
    roots = [n for n, _ in live]
    fast = not _untagged_node_source(sources)
    if fast:
        where = (
            tuple((n.sid, k) for n, k in live),
            tape._bit,
            tuple(None if r is None else (r[0].sid, r[1]) for r in sources),
            ct_spec,
            session.active,
        )
        hit = _located.get(where)
        if hit is not None:
            entry, input_paths, source_paths = hit
            if all((r is None) if p is None else replay.follow(roots, p) == r for p, r in zip(source_paths, sources)):
                inputs = [replay.follow(roots, p) for p in input_paths]
                return _record_result(entry, inputs, cts, sources, session, tape, live, ct_spec)
    entry, inputs = recorded_entry(tape._bit, tape._session, live, sources, ("vjp", ct_spec), _VjpEntry)
    if fast:
        bit = tape._bit
        paths = replay.paths_to(
            roots,
            inputs + [r for r in sources if r is not None],
            lambda node: node.op is not None and node.session is session and node.mask & bit,
        )
        if paths is not None:
            source_paths = [None if r is None else paths[(id(r[0]), r[1])] for r in sources]
            _located[where] = (entry, [paths[(id(n), k)] for n, k in inputs], source_paths)
    return _record_result(entry, inputs, cts, sources, session, tape, live, ct_spec)


def _record_result(entry, inputs, cts, sources, session, tape, live, ct_spec):
    n_read = len(inputs)
    inputs = list(inputs)
    for c in cts:
        if c is None:
            continue
        if isinstance(c, Tensor) and c._node.session is session:
            inputs.append((c._node, c._index))
        else:
            inputs.append((make_leaf(as_array(c), 0, session), 0))
    node = record.record_call(entry.recorded_op, inputs, session, "gradient")
    attach_part(node, tape, live, sources, ("vjp", ct_spec), _VjpEntry, n_read)
    out = [None] * len(sources)
    for k, i in enumerate(entry.present):
        if entry.connected[i]:
            out[i] = Tensor._make(node, k)
    return out


def run_jacobian(tape, t_ref, s_refs, t_shape, src_leaves, parallel_iterations=None):
    if t_ref is None:
        return [None] * len(s_refs)
    (t_ref,), s_refs = inner_sources.rewrite([t_ref], s_refs, recorded_entry)
    # Ties go to forward mode: a Hessian from nested tapes is then forward-over-reverse, as in
    # jax.hessian, which beats reverse-over-reverse.
    forward_mode = math.prod(t_shape) >= sum(
        math.prod(shape_of(x)) for x, r in zip(src_leaves, s_refs) if r is not None
    )
    s = graph.local.session
    if s is not None and s.active and s is tape._session:
        kind = ("jac", forward_mode, parallel_iterations)
        entry, inputs = recorded_entry(tape._bit, tape._session, [t_ref], s_refs, kind, _JacobianEntry)
        node = record.record_call(entry.recorded_op, inputs, s, "jacobian")
        attach_part(node, tape, [t_ref], s_refs, kind, _JacobianEntry, len(inputs))
        outs = [Tensor._make(node, k) for k in range(len(entry.present))]
        return _scatter_out(len(s_refs), entry.present, outs, entry.connected)
    leaves, live, key, sources = structure(tape, [t_ref], s_refs)
    key = ("jac", key, forward_mode, parallel_iterations)
    entry = programs.get(key)
    if entry is None:
        plan = replay.Plan(leaves, live, sources, tape._bit, tape._session)
        entry = programs[key] = _JacobianEntry(plan, forward_mode, parallel_iterations, from_boundary=False)
    values = entry.program(*[leaf.values[0] for leaf in leaves])
    return _scatter_out(len(s_refs), entry.present, [Tensor.concrete(v) for v in values], entry.connected)


class _JacobianEntry:
    """A cached Jacobian program: of the leaf values (``program``, compiled), or of the
    plan's boundary values (``recorded_op``, the op of a Jacobian an outer tape records)."""

    def __init__(self, plan, forward_mode, parallel_iterations=None, from_boundary=True):
        self.plan = plan
        self.connected = list(plan.connected[0])
        self.present = [i for i, a in enumerate(plan.source_slots) if a is not None]
        jac = replay.jacobian_program(plan, forward_mode, from_boundary, parallel_iterations)
        present = self.present

        def jacobian(*values):
            _, js = jac(list(values))
            return [js[i] if js[i] is not None else jnp.zeros(()) for i in present]

        self.recorded_op = jacobian
        self.program = None if from_boundary else jax.jit(jacobian)


def recorded_entry(bit, session, live, s_refs, kind, make_entry, fixed=(), recording=None):
    """The cached entry of a derivative an outer tape records, and the ``(node, output)``
    inputs of its op: the values the part of the graph recorded by the tape with ``bit``
    reads (its boundary), so that the op neither recomputes the history before it nor
    loses a path through a source that is an intermediate tensor; then the ``fixed``
    values computed inside that part (see ``inner_sources``).

    ``recording`` holds the bits of the tapes that may record the op (by default those
    recording now).
    """
    front, key = frontier_structure(bit, session, live, s_refs, fixed)
    refs = replay.slot_refs(front, live, s_refs)
    recording = (session.active if recording is None else recording) & ~bit
    entry = programs.get((kind, key, recording))
    if entry is None:
        plan = replay.Plan(front, live, s_refs, bit, session, fixed)
        # The other tapes that record the op: those that recorded a value it reads.
        recorders = 0
        for i in plan.boundary:
            node = refs[i][0]
            if node.session is session:
                recorders |= node.mask
        unseen = _unseen_by(recorders & recording, plan, refs)
        entered = [r for r in _entered_inside(recording, plan, refs, session) if r not in unseen]
        if unseen or entered:
            plan = replay.Plan(front, live, s_refs, bit, session, list(fixed) + unseen + entered)
        entry = programs[(kind, key, recording)] = make_entry(plan, *kind[1:])
    return entry, [refs[i] for i in entry.plan.boundary]


def _unseen_by(recorders, plan, refs) -> list:
    """The values computed inside a derivative's part that a tape which records the
    derivative (one of ``recorders``) did not record, made under its ``stop_recording`` or
    before it started: constants for that tape, as in TensorFlow, whose gradient graph reads
    them. The op takes them as inputs (fixed values, see ``replay.Plan.inside``) instead of
    recomputing them from values that tape would differentiate. (A tape that recorded them
    sees the same derivative either way.)"""
    if not recorders:
        return []
    # A parity read's term is recorded by its tape alone by design (see record_parity_read).
    return [
        refs[s]
        for s in sorted(plan.produced_inside)
        if refs[s][0].mask & recorders != recorders and refs[s][0].op.kind != record.PARITY_TERM
    ]


def _entered_inside(recording, plan, refs, session) -> list:
    """The sources of a tape recording the derivative (one of ``recording``) that lie inside
    the derivative's part: a tensor this tape watched and another tape watched after it, which
    that tape sees through a node of its own (see ``GradientTape.watch``). The other tape
    records none of the values the part reads, so the op takes its source as an input (a fixed
    value, see ``replay.Plan.inside``): the derivative is then a function of that source, as in
    TensorFlow, whose gradient graph reads the forward values."""
    entered = []
    for s in sorted(plan.produced_inside):
        node = refs[s][0]
        if node.session is not session or node.sid not in graph.source_sids:
            continue
        below = 0
        for n, _ in node.inputs:
            below |= n.mask if n.session is session else 0
        if node.mask & recording & ~below:
            entered.append(refs[s])
    return entered


def attach_part(node, tape, live, sources, kind, make_entry, n_read) -> None:
    """Remember how a recorded derivative was made: an outer derivative with respect to a
    value computed inside its part records it again with that value as an input."""
    inner_sources.attach(
        node,
        inner_sources.Part(
            tape._bit, tape._session, tuple(live), tuple(sources), kind, make_entry, node.op.kind, n_read
        ),
    )


def _scatter_out(n, present, values, connected):
    out = [None] * n
    for i, v in zip(present, values):
        if connected[i]:
            out[i] = v
    return out


def run_batch_jacobian(tape, t_ref, s_ref, check):
    if t_ref is None or s_ref is None:
        return None
    (t_ref,), (s_ref,) = inner_sources.rewrite([t_ref], [s_ref], recorded_entry)
    s = graph.local.session
    if s is not None and s.active and s is tape._session:
        entry, inputs = recorded_entry(tape._bit, tape._session, [t_ref], [s_ref], ("batch_jac",), _BatchJacobianEntry)
        if not entry.connected:
            return None
        if check:
            # The recorded op is TensorFlow's algorithm, which outer tapes differentiate; the
            # check still runs on this call's values, so interacting examples raise here too.
            _batch_jacobian_now(tape, t_ref, s_ref, check, only_check=True)
        node = record.record_call(entry.recorded_op, inputs, s, "batch_jacobian")
        attach_part(node, tape, [t_ref], [s_ref], ("batch_jac",), _BatchJacobianEntry, len(inputs))
        return Tensor._make(node, 0)
    return _batch_jacobian_now(tape, t_ref, s_ref, check)


def _batch_jacobian_now(tape, t_ref, s_ref, check, only_check=False):
    """The batch Jacobian computed at this call (raising where the check finds examples
    interact); with ``only_check``, just the check, skipped where values are traced or the
    graph is proven."""
    st = structure(tape, [t_ref], [s_ref])
    if st[3][0] is None:
        return None
    leaves, live, key, sources = st
    src_node, src_index = sources[0]
    aval = src_node.avals[src_index]
    values = [leaf.values[0] for leaf in leaves]
    traced = any(isinstance(v, jax.core.Tracer) for v in values)
    # An empty target or source has an empty Jacobian, with no examples to tell apart.
    empty = aval.size == 0 or math.prod(live[0][0].avals[live[0][1]].shape) == 0
    check = check and not empty
    per_example = check and key not in _not_per_example
    entry = _batch_jacobian_entry(tape, key, leaves, live, sources, check, per_example)
    if not entry.connected:
        return None
    if only_check and (traced or not check or entry.proven(values)):
        return None
    if check and entry.proven(values):
        # The check is not needed, for any values: examples provably do not interact (the
        # whole-batch algorithm), and the graph run on one example provably computes the
        # batch's rows (the per-example one).
        unchecked = _batch_jacobian_entry(tape, key, leaves, live, sources, False, per_example)
        jac, _ = unchecked.program(values, None)
        return Tensor.concrete(jac)
    if traced:
        # Inside jax.jit / gk.jit values are unknown while tracing: the check cannot decide
        # here. On a CPU the compiled program makes it at every call where examples are
        # proven independent (the whole-batch algorithm, its fallback, is then exact);
        # otherwise TensorFlow's whole-batch algorithm runs unchecked (documented on
        # batch_jacobian).
        if per_example and _checks_in_program() and entry.independent(values):
            selecting = _batch_jacobian_entry(tape, key, leaves, live, sources, True, True, select=True)
            jac, _ = selecting.program(values, _probe(aval))
        else:
            unchecked = _batch_jacobian_entry(tape, key, leaves, live, sources, False, False)
            jac, _ = unchecked.program(values, None)
        return Tensor.concrete(jac)
    # Concrete values may still meet a trace (a gk.jit step's first trace, which has not yet
    # made the Variables it reads its inputs): computed concretely, so the check can read them.
    with jax.ensure_compile_time_eval():
        jac, leak = entry.program(values, _probe(aval) if check else None)
    leak = float(leak) if check else 0.0
    # A per-example replay of a graph that reads another example (rows of the batch taken one by
    # one, as tf.foldr does) reads out of bounds, which jax fills with NaN: the check's answer is
    # then NaN too, and the per-example Jacobians are not the batch's.
    if check and (leak > _leak_tolerance(aval.dtype) or (per_example and not math.isfinite(leak))):
        if per_example:
            # Either examples interact, or the graph computes something else one example at a
            # time: TensorFlow's algorithm on the whole batch tells which.
            _not_per_example[key] = True
            return _batch_jacobian_now(tape, t_ref, s_ref, check, only_check)
        # TensorFlow's result, as its programs (the autodiff guide's own BatchNorm example) expect,
        # but said to be meaningless where TensorFlow says nothing.
        warnings.warn(
            _errors.PREFIX + "batch_jacobian assumes example i of the target depends only on example i of the "
            f"source, but here examples interact (a random tangent moved the target by {leak:.2g} more than the "
            "per-example Jacobians explain, relatively); for instance BatchNorm in training mode or "
            "x - mean(x, axis=0) mixes the batch. The result is TensorFlow's (per target column, the gradient "
            "of that column summed over the batch), which is no per-example Jacobian here. Use "
            "tape.jacobian(target, source) for the full (batch, ..., batch, ...) Jacobian, or pass "
            "check_independence=False to skip this check.",
            _errors.GradkitWarning,
            stacklevel=_user_stacklevel(),
        )
        if only_check:
            return None
        unchecked = _batch_jacobian_entry(tape, key, leaves, live, sources, False, False)
        with jax.ensure_compile_time_eval():
            jac, _ = unchecked.program(values, None)
    return Tensor.concrete(jac)


def _user_stacklevel() -> int:
    """The ``stacklevel`` that points a warning at the first frame outside gradkit (the user's call)."""
    level, frame = 1, sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__", "").startswith("gradkit."):
        level, frame = level + 1, frame.f_back
    return level


def _checks_in_program() -> bool:
    """Whether a traced batch Jacobian picks its algorithm by a check inside its program.

    For a graph proven independent but not per-example. On a CPU the check and the
    per-example Jacobians took 1.35x the time of hand-written ``vmap(jacrev)`` on W4's graph
    (measured with its per-example proof left out), against 1.78x for the whole-batch algorithm. On a GPU (an H200)
    the whole-batch algorithm was the faster, 1.21x against 1.55x: the check must finish,
    and its answer reach the host, before either algorithm starts.
    """
    return jax.default_backend() == "cpu"


def _probe(aval):
    """The independence check's random tangent for a source of this shape (made once)."""
    probe = _probes.get(aval)
    if probe is None:
        rng = np.random.default_rng(0)
        value = rng.standard_normal(aval.shape)
        if jnp.issubdtype(aval.dtype, jnp.complexfloating):
            value = value + 1j * rng.standard_normal(aval.shape)  # a tangent in every direction
        with jax.ensure_compile_time_eval():  # a concrete array, even when first made inside a trace
            probe = _probes[aval] = jnp.asarray(value, aval.dtype)
    return probe


_probes: dict = BoundedDict(64)


def _leak_tolerance(dtype) -> float:
    """How far (relatively) a random JVP may differ from the per-example Jacobians' answer
    before examples count as interacting: rounding of two computations in ``dtype``."""
    eps = float(jnp.finfo(dtype).eps) if jnp.issubdtype(dtype, jnp.inexact) else 0.0
    return max(1e-4, 30 * eps)


# Structures whose graph is not per-example (see batch_jacobian_program): key -> True.
_not_per_example: dict = BoundedDict(bounded.PROGRAMS)


class _BatchJacobianEntry:
    """A cached batch-Jacobian program: of the leaf values (``program``, compiled, with the
    independence check when asked), or of the plan's boundary values (``recorded_op``, the
    op of a batch Jacobian an outer tape records: TensorFlow's algorithm, unchecked)."""

    def __init__(self, plan, check=False, per_example=False, from_boundary=True, select=False):
        self.plan = plan
        self.connected = plan.connected[0][0]
        tolerance = _leak_tolerance(plan.source_avals[0].dtype) if select else None
        program = replay.batch_jacobian_program(plan, check, per_example, from_boundary, tolerance)

        def batch_jacobian(*values):
            return program(list(values), None)[0]

        self.recorded_op = batch_jacobian
        self.program = None if from_boundary else jax.jit(program)
        self.per_example = per_example
        self._verdicts: dict = {}  # the structural proofs' answers, each found once

    def proven(self, values) -> bool:
        """Whether the checked program is not needed, for any values.

        The whole-batch algorithm needs examples that do not interact. The per-example one
        also needs the graph run on one example to compute the batch's rows, which reading
        other examples' values breaks (``x * sign(sum(x, axis=0))``), or reading the batch's
        size (``sum(ones_like(x))`` counts the examples), perhaps for some values only
        (``x * (1 + relu(x - 5) * sum(ones_like(x)))``): a check passed on one call's values
        says nothing of the next call's, so without a proof its program checks every call.
        """
        if self.per_example:
            return self._verdict("rows", values)
        return self.independent(values)

    def independent(self, values) -> bool:
        """Whether examples provably do not interact (``batch_independence``)."""
        return self._verdict("independent", values)

    def _verdict(self, kind: str, values) -> bool:
        verdict = self._verdicts.get(kind)
        if verdict is None:
            if kind == "rows":
                verdict = batch_size_reads.rows_read_no_batch_size(self.plan, values)
            else:
                verdict = batch_independence.rows_independent(self.plan, values)
            self._verdicts[kind] = verdict
        return verdict


def _batch_jacobian_entry(tape, key, leaves, live, sources, check, per_example, select=False):
    full_key = ("batch_jac", key, check, per_example, select)
    entry = programs.get(full_key)
    if entry is None:
        plan = replay.Plan(leaves, live, sources, tape._bit, tape._session)
        entry = programs[full_key] = _BatchJacobianEntry(plan, check, per_example, False, select)
    return entry
