"""``GradientTape``: TensorFlow's tape API, exact through Variable assignment.

While any tape records, a ``TapeFrame`` sits on the core's frame stack. A Variable read
returns a recorded tensor; where a tape first sees a Variable (its first read, watch or
assignment while recording) that tape takes the Variable's value at that moment as its
source. An assignment binds the Variable to the assigned tensor, history included, so
later reads carry the path back to the sources. The live Variables receive their new
values when the last tape stops recording.

``gradient``/``jacobian``/``batch_jacobian`` replay the recorded graph as a pure JAX
function (see ``replay``), compiled once per graph structure.
"""

from __future__ import annotations

import contextlib
import enum

import jax
import jax.numpy as jnp
import numpy as np

from .. import _errors
from .._core import frames
from .._core.variable import Variable
from . import graph, record, replay
from .graph import Node, Session, make_leaf, merge_leaves
from .tensor import Tensor


class UnconnectedGradients(enum.Enum):
    """What ``gradient`` returns for a source the target does not depend on."""

    NONE = "none"
    ZERO = "zero"


def _unconnected(value) -> UnconnectedGradients:
    if isinstance(value, UnconnectedGradients):
        return value
    try:
        return UnconnectedGradients(value)
    except ValueError:
        raise _errors.GradkitValueError(
            f"unconnected_gradients={value!r} is not one of 'none', 'zero' (or gk.UnconnectedGradients.NONE / .ZERO)."
        ) from None


class TapeFrame(frames.Frame):
    """Intercepts Variable reads and assignments for every tape of one session."""

    def __init__(self, session: Session):
        self.session = session

    def read(self, var):
        s = self.session
        bound = s.bindings.get(id(var))
        new = 0
        parity_sources = None
        if s.active:
            for tape in s.recording:
                if tape._bit & s.active:
                    src = tape._var_sources.get(id(var))
                    if src is None:
                        if tape._watch_accessed and var.trainable:
                            new |= tape._bit
                    elif not tape._track and bound is not None and bound[0] is not src:
                        parity_sources = (parity_sources or []) + [src]
        if bound is None and not new:
            return frames.read_below(self, var)
        node = self._see(var, bound, new) if new else bound
        if parity_sources:
            node = (record.record_parity_read(node, parity_sources, s), 0)
        return Tensor._make(*node)

    def _see(self, var, bound, bits: int) -> tuple[Node, int]:
        """The tapes in ``bits`` see ``var`` for the first time: their source for it."""
        s = self.session
        if bound is None:
            node = make_leaf(frames.read_below(self, var), bits, s)
            node.origin = ("variable", var)
        else:
            node = record.record_identity(bound[0], bound[1], bound[0].mask | bits, s)
        for tape in s.tapes:
            if tape is not None and tape._bit & bits:
                tape._var_sources[id(var)] = node
                tape._watched_vars.setdefault(id(var), var)
        s.bindings[id(var)] = (node, 0)
        s.variables[id(var)] = var
        return node, 0

    def watch(self, tape, var):
        s = self.session
        if id(var) not in tape._var_sources:
            self._see(var, s.bindings.get(id(var)), tape._bit)

    def assign(self, var, value):
        s = self.session
        for tape in s.recording:
            if tape._bit & s.active and id(var) not in tape._var_sources and tape._watch_accessed and var.trainable:
                self._see(var, s.bindings.get(id(var)), tape._bit)
        if isinstance(value, Tensor) and value._node.session is s:
            node, index = value._node, value._index
        else:
            node, index = make_leaf(frames.concrete(value), 0, s), 0
        parity = node.mask & s.parity_bits
        if parity:
            node = record.record_identity(
                node,
                index,
                node.mask & ~parity,
                s,
                cut=("assignment (track_assignments=False)", graph.user_site(), parity),
            )
            index = 0
        s.bindings[id(var)] = (node, index)
        s.variables[id(var)] = var
        s.assign_sites[id(var)] = graph.user_site()

    def write_back(self):
        """Give the live Variables the values assigned while recording."""
        s = self.session
        for key, (node, index) in list(s.bindings.items()):
            var = s.variables[key]
            if node.op is None and node.origin is not None and node.origin[1] is var:
                continue  # only ever read: unchanged
            frames.assign_below(self, var, record.materialize(node)[index])
        s.bindings.clear()


def _begin(tape) -> Session:
    s = graph.local.session
    if s is None:
        s = graph.local.session = Session()
        s.frame = TapeFrame(s)
        s.frame.__enter__()
    tape._bit = s.new_bit(tape)
    tape._session = s
    s.recording.append(tape)
    s.active |= tape._bit
    if not tape._track:
        s.parity_bits |= tape._bit
    return s


def _end(tape) -> None:
    s = tape._session
    if s is None or tape not in s.recording:
        return
    s.recording.remove(tape)
    s.active &= ~tape._bit
    if not s.recording:
        try:
            s.frame.write_back()
        finally:
            s.frame.__exit__(None, None, None)
            graph.local.session = None


class GradientTape:
    """Record operations for automatic differentiation (TensorFlow's ``tf.GradientTape``).

    Args:
      persistent: allow more than one ``gradient``/``jacobian`` call.
      watch_accessed_variables: watch every trainable Variable read while recording.
      track_assignments: ``True`` (default): gradients flow through Variable assignment
        and are with respect to each Variable's value when the tape first saw it.
        ``False`` reproduces TensorFlow exactly: an assignment cuts the path, and a
        Variable source collects the gradient of every read of it.

    >>> import gradkit as gk
    >>> gnp = gk.numpy
    >>> a, b, c = gk.Variable(1.0), gk.Variable(2.0), gk.Variable(3.0)
    >>> with gk.GradientTape(persistent=True) as tape:
    ...     _ = c.assign(a + b)
    ...     loss = gnp.mean(c ** 2)
    >>> float(tape.gradient(loss, b))          # TensorFlow: None
    6.0
    >>> [None if g is None else float(g) for g in tape.gradient(loss, [a, b, c])]
    [6.0, 6.0, None]
    """

    def __init__(self, persistent: bool = False, watch_accessed_variables: bool = True, track_assignments: bool = True):
        self._persistent = bool(persistent)
        self._watch_accessed = bool(watch_accessed_variables)
        self._track = bool(track_assignments)
        self._bit = 0
        self._session: Session | None = None
        self._var_sources: dict[int, Node] = {}
        self._watched_vars: dict[int, Variable] = {}
        self._watched_tensors: list = []
        self._used = False
        self._recording = False

    # -- recording -------------------------------------------------------------------------
    def __enter__(self) -> GradientTape:
        if self._recording:
            raise _errors.GradkitValueError(
                "this GradientTape is already recording; nested 'with' on one tape is not supported."
            )
        _begin(self)
        self._recording = True
        return self

    def __exit__(self, *exc):
        self._recording = False
        _end(self)
        return False

    def _require_recording(self, what):
        if not self._recording or self._session is not graph.local.session:
            raise _errors.GradkitValueError(
                f"GradientTape.{what} needs the tape to be recording: call it inside 'with tape:'."
            )

    def watch(self, tensor) -> None:
        """Watch ``tensor`` (a Variable, a Tensor, an array, or a nested structure of them)."""
        self._require_recording("watch")
        s = self._session
        for x in jax.tree_util.tree_leaves(tensor, is_leaf=lambda x: isinstance(x, (Variable, Tensor))):
            if isinstance(x, Variable):
                s.frame.watch(self, x)
            elif isinstance(x, Tensor):
                node = x._node
                if node.session is s:
                    x._node = record.record_identity(node, x._index, node.mask | self._bit, s)
                else:
                    x._node = make_leaf(record.value_of(x), self._bit, s)
                    x._node.origin = ("tensor", None)
                x._index = 0
                self._watched_tensors.append(x)
            elif isinstance(x, (jax.Array, np.ndarray, jax.core.Tracer)):
                prev = s.watched_arrays.get(id(x))
                if prev is None:
                    leaf = make_leaf(x, self._bit, s)
                    s.watched_arrays[id(x)] = (x, leaf)
                else:
                    leaf = record.record_identity(prev[1], 0, prev[1].mask | self._bit, s)
                    s.watched_arrays[id(x)] = (x, leaf)
            else:
                raise _errors.GradkitTypeError(
                    f"GradientTape.watch takes Variables, tensors or arrays, but got {type(x).__name__}: {x!r}."
                )

    @contextlib.contextmanager
    def stop_recording(self):
        """Temporarily stop recording on this tape (TensorFlow's ``stop_recording``)."""
        self._require_recording("stop_recording")
        s = self._session
        s.active &= ~self._bit
        try:
            yield
        finally:
            if self._recording:
                s.active |= self._bit

    def reset(self) -> None:
        """Forget everything recorded so far; keep recording as if the tape were new."""
        s = self._session
        self._var_sources = {}
        self._watched_vars = {}
        self._watched_tensors = []
        if self._recording:
            old = self._bit
            s.recording.remove(self)
            s.active &= ~old
            s.parity_bits &= ~old
            s.tapes[old.bit_length() - 1] = None
            self._bit = s.new_bit(self)
            s.recording.append(self)
            s.active |= self._bit
            if not self._track:
                s.parity_bits |= self._bit

    def watched_variables(self) -> tuple:
        """The Variables this tape has seen (watched or read while recording), in order."""
        return tuple(self._watched_vars.values())

    # -- derivatives -----------------------------------------------------------------------
    def _check_usable(self):
        if self._used and not self._persistent:
            raise RuntimeError(
                "A non-persistent GradientTape can only be used to compute one set of gradients "
                "(or jacobians). Create the tape with GradientTape(persistent=True) to call it again."
            )
        self._used = True

    def _release(self):
        if not self._persistent:
            self._var_sources = {}
            self._watched_tensors = []

    def _target_ref(self, t):
        """(node, index) of a recorded target in this tape's session, or None."""
        if isinstance(t, Variable):
            s = self._session
            bound = s.bindings.get(id(t)) if s is not None and graph.local.session is s else None
            if bound is None:
                src = self._var_sources.get(id(t))
                return (src, 0) if src is not None else None
            return bound
        if isinstance(t, Tensor) and t._node.session is self._session and self._session is not None:
            return t._node, t._index
        return None

    def _source_ref(self, x):
        s = self._session
        if isinstance(x, Variable):
            node = self._var_sources.get(id(x))
            return (node, 0) if node is not None else None
        if isinstance(x, Tensor):
            node = x._node
            if node.session is s and s is not None and node.mask & self._bit:
                return node, x._index
            return None
        if s is not None:
            hit = s.watched_arrays.get(id(x))
            if hit is not None and hit[0] is x and hit[1].mask & self._bit:
                return hit[1], 0
        if isinstance(x, (jax.Array, np.ndarray, jax.core.Tracer, Tensor)):
            return None
        raise _errors.GradkitTypeError(
            f"a gradient source must be a Variable, a tensor or an array, but got {type(x).__name__}: {x!r}."
        )

    def gradient(self, target, sources, output_gradients=None, unconnected_gradients=UnconnectedGradients.NONE):
        """The gradient of ``target`` (the sum of its elements) with respect to ``sources``.

        Args:
          target: a tensor or a nested structure of tensors (their gradients add up).
          sources: a Variable, tensor, or a nested structure of them; results mirror it.
          output_gradients: cotangents for ``target`` (same structure): the result is the
            vector-Jacobian product ``sum(output_gradients * d target / d source)``.
          unconnected_gradients: ``'none'`` (default) or ``'zero'`` for sources the target
            does not depend on.
        """
        mode = _unconnected(unconnected_gradients)
        self._check_usable()
        targets, _ = _flatten(target)
        src_leaves, src_tree = _flatten(sources)
        cts = [None] * len(targets)
        if output_gradients is not None:
            cts = _flatten_like(output_gradients, len(targets))
        t_refs = [self._target_ref(t) for t in targets]
        s_refs = [self._source_ref(x) for x in src_leaves]
        results = _run_vjp(self, t_refs, s_refs, cts)
        out = [_finish_grad(g, x, mode) for g, x in zip(results, src_leaves)]
        self._release()
        return jax.tree_util.tree_unflatten(src_tree, out)

    def jacobian(
        self,
        target,
        sources,
        unconnected_gradients=UnconnectedGradients.NONE,
        parallel_iterations=None,
        experimental_use_pfor=True,
    ):
        """The full Jacobian of ``target`` with respect to each source.

        Each result has shape ``target.shape + source.shape``. Vectorised (``jacrev`` or
        ``jacfwd``, whichever needs fewer passes), compiled once per graph structure.
        ``parallel_iterations`` and ``experimental_use_pfor`` are accepted for TensorFlow
        compatibility.
        """
        mode = _unconnected(unconnected_gradients)
        self._check_usable()
        src_leaves, src_tree = _flatten(sources)
        t_ref = self._target_ref(target)
        s_refs = [self._source_ref(x) for x in src_leaves]
        t_shape = tuple(getattr(target, "shape", ()))
        results = _run_jacobian(self, t_ref, s_refs, t_shape, src_leaves)
        out = []
        for j, x in zip(results, src_leaves):
            if j is None and mode is UnconnectedGradients.ZERO:
                shape = t_shape + tuple(getattr(x, "shape", ()))
                j = Tensor.concrete(jnp.zeros(shape, _dtype_of(x)))
            out.append(j)
        self._release()
        return jax.tree_util.tree_unflatten(src_tree, out)

    def batch_jacobian(
        self,
        target,
        source,
        unconnected_gradients=UnconnectedGradients.NONE,
        parallel_iterations=None,
        experimental_use_pfor=True,
        check_independence=True,
    ):
        """Per-example Jacobians: ``(batch, *target_dims, *source_dims)``.

        Assumes example ``i`` of ``target`` depends only on example ``i`` of ``source``
        (TensorFlow's assumption). Unlike TensorFlow, by default it checks that with one
        cheap JVP probe and raises if examples interact (BatchNorm in training mode,
        ``x - mean(x, axis=0)``), where the result would be meaningless; use
        ``jacobian`` there, or ``check_independence=False`` for TensorFlow's behaviour.
        """
        mode = _unconnected(unconnected_gradients)
        self._check_usable()
        t_shape = tuple(getattr(target, "shape", ()))
        s_shape = tuple(getattr(source, "shape", ()))
        if not t_shape or not s_shape or t_shape[0] != s_shape[0]:
            raise _errors.GradkitValueError(
                f"Need first dimension of target shape ({t_shape}) and source shape ({s_shape}) to match: "
                "batch_jacobian pairs example i of the target with example i of the source."
            )
        t_ref = self._target_ref(target)
        s_ref = self._source_ref(source)
        result = _run_batch_jacobian(self, t_ref, s_ref, check_independence)
        if result is None and mode is UnconnectedGradients.ZERO:
            result = Tensor.concrete(jnp.zeros(t_shape + s_shape[1:], _dtype_of(source)))
        self._release()
        return result

    def explain(self, target, source) -> str:
        """Why ``gradient(target, source)`` is what it is, in words (see ``gk.explain``)."""
        from .explain import explain

        return explain(self, target, source)


# -- running the compiled programs -------------------------------------------------------


def _flatten(tree):
    return jax.tree_util.tree_flatten(tree, is_leaf=lambda x: isinstance(x, (Variable, Tensor)) or x is None)


def _flatten_like(output_gradients, n):
    leaves, _ = jax.tree_util.tree_flatten(
        output_gradients, is_leaf=lambda x: isinstance(x, (Variable, Tensor)) or x is None
    )
    if len(leaves) != n:
        raise _errors.GradkitValueError(
            f"output_gradients has {len(leaves)} entries but the target has {n}; give one cotangent per target tensor."
        )
    return leaves


def _dtype_of(x):
    return np.dtype(getattr(x, "dtype", None) or jnp.result_type(x))


def _finish_grad(g, source, mode):
    if g is None and mode is UnconnectedGradients.ZERO:
        return Tensor.concrete(jnp.zeros(tuple(getattr(source, "shape", ())), _dtype_of(source)))
    return g


_programs: dict = {}


def _structure(tape, t_refs, s_refs):
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
    if needs_walk:
        order = replay.topo_order([n for n, _ in live])
        index = {id(n): i for i, n in enumerate(order)}
        specs = [
            (s if s is None or s[0] == "leaf" else (("node", index[id(r[0])], r[1]) if id(r[0]) in index else None))
            for s, r in zip(specs, s_refs)
        ]
    key = (tuple((n.sid, k) for n, k in live), maps, tape._bit, tuple(specs))
    sources = [r if spec is not None else None for r, spec in zip(s_refs, specs)]
    return leaves, live, key, sources


def _recording_now(tape) -> bool:
    s = graph.local.session
    return s is not None and s is tape._session and bool(s.active)


def _frontier_structure(tape, live, s_refs):
    """Like ``_structure``, over only this tape's part of the graph (for a recorded gradient)."""
    roots = live + [r for r in s_refs if r is not None]
    front = replay.frontier(roots, tape._bit, tape._session)
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
    key = ("recorded", tuple((n.sid, k) for n, k in live), tape._bit, tuple(specs))
    return front, key


def _run_vjp(tape, t_refs, s_refs, cts):
    live = [r for r in t_refs if r is not None]
    if not live:
        return [None] * len(s_refs)
    live_cts = [c for r, c in zip(t_refs, cts) if r is not None]
    ct_spec = tuple(c is not None for c in live_cts)
    s = graph.local.session
    if s is not None and s.active and s is tape._session:
        # Another tape (or this one) is recording: the gradient becomes a node of the graph,
        # over only the values this tape's part reads, so outer tapes differentiate it.
        front, key = _frontier_structure(tape, live, s_refs)
        sources = list(s_refs)
        entry = _programs.get(("vjp", key, ct_spec))
        if entry is None:
            plan = replay.Plan(front, live, sources, tape._bit, tape._session)
            entry = _programs[("vjp", key, ct_spec)] = _VjpEntry(plan, sources, ct_spec)
        return _record_result(entry, front, live, sources, live_cts, len(s_refs), s)
    st = _structure(tape, t_refs, s_refs)
    leaves, live, key, sources = st
    key = ("vjp", key, ct_spec)
    entry = _programs.get(key)
    if entry is None:
        plan = replay.Plan(leaves, live, sources, tape._bit, tape._session)
        entry = _programs[key] = _VjpEntry(plan, sources, ct_spec)
    ct_values = [_as_array(c) for c in live_cts if c is not None]
    targets, grads = entry.compiled([leaf.values[0] for leaf in leaves], ct_values)
    for (node, _), value in zip(live, targets):
        if node.values is None and len(node.avals) == 1 and value is not None:
            node.values = [value]
    out = [None] * len(s_refs)
    for i, g in zip(entry.present, grads):
        if entry.connected[i]:
            out[i] = Tensor.concrete(g)
    return out


class _VjpEntry:
    """A cached gradient program: compiled from the leaves (the usual call) or, when an
    outer tape records the gradient, run as an op over the plan's boundary values."""

    def __init__(self, plan, sources, ct_spec):
        self.plan = plan
        self.connected = [any(col) for col in zip(*plan.connected)] if plan.connected else [False] * len(sources)
        self.present = [i for i in range(len(sources)) if sources[i] is not None]
        self.ct_spec = ct_spec
        self.compiled = jax.jit(self._flat(replay.vjp_program(plan)))
        from_boundary = self._flat(replay.vjp_program(plan, from_boundary=True))
        n_boundary = len(plan.boundary)

        def gradient(*values):
            return from_boundary(list(values[:n_boundary]), list(values[n_boundary:]))[1]

        # One function per cached program, so that a recorded gradient has the same op (and
        # the graph around it the same structure) every time: no recompiles in a loop.
        self.recorded_op = gradient

    def _flat(self, vjp):
        ct_spec, present = self.ct_spec, self.present

        def flat(values, ct_values):
            it = iter(ct_values)
            full_cts = [next(it) if has else None for has in ct_spec]
            targets, grads = vjp(values, full_cts)
            return targets, [grads[i] if grads[i] is not None else jnp.zeros(()) for i in present]

        return flat


def _touches(session, leaves, cts) -> bool:
    return any(leaf.session is session and leaf.mask for leaf in leaves) or any(
        isinstance(c, Tensor) and c._node.session is session for c in cts
    )


def _as_array(c):
    if isinstance(c, Tensor):
        return record.value_of(c)
    if isinstance(c, Variable):
        return frames.concrete(c.value)
    return jnp.asarray(c)


def _record_result(entry, front, live, sources, cts, n, session):
    """Record the gradient computation itself, so that an outer tape can differentiate it."""
    refs = replay.slot_refs(front, live, sources)
    inputs = [refs[i] for i in entry.plan.boundary]
    for c in cts:
        if c is None:
            continue
        if isinstance(c, Tensor) and c._node.session is session:
            inputs.append((c._node, c._index))
        else:
            inputs.append((make_leaf(_as_array(c), 0, session), 0))
    node = record.record_call(entry.recorded_op, inputs, session, "gradient")
    out = [None] * n
    for k, i in enumerate(entry.present):
        if entry.connected[i]:
            out[i] = Tensor._make(node, k)
    return out


def _run_jacobian(tape, t_ref, s_refs, t_shape, src_leaves):
    st = _structure(tape, [t_ref], s_refs)
    if st is None:
        return [None] * len(s_refs)
    leaves, live, key, sources = st
    t_size = int(np.prod(t_shape, dtype=np.int64))
    s_size = sum(
        int(np.prod(getattr(x, "shape", ()), dtype=np.int64)) for x, r in zip(src_leaves, sources) if r is not None
    )
    forward_mode = t_size > s_size
    key = ("jac", key, forward_mode)
    entry = _programs.get(key)
    if entry is None:
        plan = replay.Plan(leaves, live, sources, tape._bit, tape._session)
        connected = list(plan.connected[0])
        jac = replay.jacobian_program(plan, forward_mode)
        present = [i for i in range(len(sources)) if sources[i] is not None]

        def flat(leaf_values):
            _, js = jac(leaf_values)
            return [js[i] if js[i] is not None else jnp.zeros(()) for i in present]

        def jacobian(*values):
            return flat(list(values))

        entry = _programs[key] = (jax.jit(flat), connected, present, jacobian)
    program, connected, present, recorded_op = entry
    s = graph.local.session
    if s is not None and s.active and _touches(s, leaves, []):
        node = record.record_call(recorded_op, [(leaf, 0) for leaf in leaves], s, "jacobian")
        return _scatter_out(len(s_refs), present, [Tensor._make(node, k) for k in range(len(present))], connected)
    values = program([leaf.values[0] for leaf in leaves])
    return _scatter_out(len(s_refs), present, [Tensor.concrete(v) for v in values], connected)


def _scatter_out(n, present, values, connected):
    out = [None] * n
    for i, v in zip(present, values):
        if connected[i]:
            out[i] = v
    return out


def _run_batch_jacobian(tape, t_ref, s_ref, check):
    st = _structure(tape, [t_ref], [s_ref])
    if st is None or st[3][0] is None:
        return None
    leaves, live, key, sources = st
    key = ("batch_jac", key, check)
    entry = _programs.get(key)
    if entry is None:
        plan = replay.Plan(leaves, live, sources, tape._bit, tape._session)
        connected = plan.connected[0][0]
        program = replay.batch_jacobian_program(plan, check)

        def batch_jacobian(*values):
            return program(list(values[:-1]), values[-1])[1]

        entry = _programs[key] = (jax.jit(program), connected, batch_jacobian)
    program, connected, recorded_op = entry
    if not connected:
        return None
    src_node, src_index = sources[0]
    aval = src_node.avals[src_index]
    probe = np.zeros(aval.shape, np.float32)
    if aval.shape[0] > 1:
        rng = np.random.default_rng(0)
        probe[0] = rng.standard_normal(aval.shape[1:])
    probe = jnp.asarray(probe)
    s = graph.local.session
    if s is not None and s.active and _touches(s, leaves, []):
        node = record.record_call(
            recorded_op,
            [(leaf, 0) for leaf in leaves] + [(make_leaf(probe, 0, s), 0)],
            s,
            "batch_jacobian",
        )
        return Tensor._make(node, 0)
    _, jac, leak = program([leaf.values[0] for leaf in leaves], probe)
    if check and float(leak) > 1e-5:
        raise _errors.GradkitValueError(
            "batch_jacobian assumes example i of the target depends only on example i of the source, but "
            f"here examples interact (a tangent on example 0 changed other examples, relative size {float(leak):.2g}); "
            "for instance BatchNorm in training mode or x - mean(x, axis=0) mixes the batch. The per-example "
            "Jacobian would be meaningless (TensorFlow silently returns it). Use tape.jacobian(target, source) for "
            "the full (batch, ..., batch, ...) Jacobian, or pass check_independence=False for TensorFlow's behaviour."
        )
    return Tensor.concrete(jac)
