"""``tape.explain(target, source)``: why a gradient is None or zero, or how it connects."""

from __future__ import annotations

from collections import deque

from .._core.variable import Variable
from . import dependence, replay


def _name(x) -> str:
    if isinstance(x, Variable):
        return f"Variable '{x.name}'"
    return f"a tensor of shape {tuple(getattr(x, 'shape', ()))}"


def _path(source, target):
    """Op names along one path from ``source`` to ``target`` (breadth-first), or None."""
    users: dict[int, list] = {}
    for node in replay.topo_order([target]):
        for inp, _ in node.inputs:
            users.setdefault(id(inp), []).append(node)
    queue = deque([(source, [source])])
    seen = {id(source)}
    while queue:
        node, path = queue.popleft()
        if node is target:
            return path
        for user in users.get(id(node), ()):
            if id(user) not in seen:
                seen.add(id(user))
                queue.append((user, path + [user]))
    return None


def _read_path(s_ref, t_ref):
    """Like ``_path`` between ``(node, output)`` pairs, through only the outputs that read the
    value before them: a derivative recorded as one op may have results that do not (see
    ``dependence``). The shortest such path, or None."""
    source, target = s_ref[0], t_ref[0]
    if source is target:
        return [source] if s_ref[1] == t_ref[1] or source.op is None else None
    reached: dict[tuple[int, int], list] = {(id(source), s_ref[1]): [source]}
    for node in replay.topo_order([target]):
        best = [None] * len(node.avals)
        reads = (
            dependence.output_dependence(node.op, [n.avals[k] for n, k in node.inputs])
            if dependence.traced(node.op)
            else None
        )
        for p, (inp, k) in enumerate(node.inputs):
            path = reached.get((id(inp), k))
            if path is None:
                continue
            for j in range(len(node.avals)):
                if (reads is None or reads[j] >> p & 1) and (best[j] is None or len(path) < len(best[j])):
                    best[j] = path
        for j, path in enumerate(best):
            if path is not None:
                reached[(id(node), j)] = path + [node]
    return reached.get((id(target), t_ref[1]))


def _unread_by(path):
    """The first derivative op on ``path`` that is recorded as one op (see ``dependence``)."""
    return next((n for n in path[1:] if dependence.traced(n.op)), None)


def explain(tape, target, source) -> str:
    """A short account of how ``source`` reaches ``target`` on ``tape``, or why it does not."""
    what = _name(source)
    s_ref = tape._source_ref(source)
    if s_ref is None and isinstance(source, Variable):
        released = tape._released_sources.get(id(source))  # a non-persistent tape after its gradient
        node = released() if released is not None else None
        s_ref = (node, 0) if node is not None else None
    if s_ref is None:
        if isinstance(source, Variable):
            if not tape._watch_accessed and id(source) not in tape._watched_vars:
                return (
                    f"gradient is None: {what} was never watched. The tape has watch_accessed_variables=False; "
                    "call tape.watch(variable) inside the tape."
                )
            if not source._trainable:
                return f"gradient is None: {what} is not trainable, so the tape does not watch it on read; call tape.watch(it)."
            return (
                f"gradient is None: {what} was never read while this tape was recording "
                "(read only under stop_recording, before 'with tape:', or after it)."
            )
        return f"gradient is None: {what} was not watched by this tape; call tape.watch(x) first."
    t_ref = tape._target_ref(target)
    if t_ref is None:
        return (
            "gradient is None: the target was not recorded by this tape. It was computed outside "
            "'with tape:', from values no tape watched, or with plain jax/numpy instead of gk.numpy."
        )
    s_node, _ = s_ref
    t_node, _ = t_ref
    path = _read_path(s_ref, t_ref)
    if path is None and (node_path := _path(s_node, t_node)) is not None and (op := _unread_by(node_path)) is not None:
        return (
            f"gradient is None: {what} reaches the target only through '{op.op.name}', a derivative recorded as one "
            f"op whose result does not depend on it (d(x * x + y)/dx = 2x does not depend on y), as in TensorFlow."
        )
    if path is None:
        sites = tape._session.assign_sites if tape._session is not None else {}
        if isinstance(source, Variable) and id(source) in sites:
            return (
                f"gradient is None: the value {what} had when the tape first saw it is not used by the target: "
                f"it was overwritten by the assignment at {sites[id(source)]} before any read the target depends on. "
                "To get the gradient with respect to the assigned value, take it with respect to the tensor you assigned."
            )
        for leaf in t_node.leaves:
            if leaf.origin is not None and leaf.origin[0] == "numpy" and _path(s_node, leaf.origin[1]) is not None:
                return (
                    f"gradient is None: {what} reaches the target only through a value that left the tape as a "
                    f"NumPy value at {leaf.origin[2]} (.numpy() or np.asarray). Keep it a tensor (use gk.numpy)."
                )
        return f"gradient is None: the target does not depend on {what}."
    for node in path[1:]:
        if not (node.session is tape._session and node.mask & tape._bit):
            if node.cut is not None:
                reason, site, _ = node.cut
                return f"gradient is None: the path from {what} to the target is cut by {reason} at {site}."
            return f"gradient is None: the path from {what} to the target passes through '{node.op.name}', which this tape did not record."
    ops = " -> ".join("source" if n.op is None else n.op.name for n in path)
    return f"connected: {what} reaches the target through {ops}."
