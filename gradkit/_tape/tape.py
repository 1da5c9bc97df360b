"""``GradientTape``: TensorFlow's tape API, exact through Variable assignment.

Recording itself is in ``frame`` (Variables) and ``record`` (ops); ``gradient``,
``jacobian`` and ``batch_jacobian`` run the compiled programs of ``derivatives``.
"""

from __future__ import annotations

import contextlib
import functools
import math
import weakref

import jax
import jax.numpy as jnp
import numpy as np

from .. import _errors
from .._core import captures, key_order, runtime_checks
from .._core.variable import Variable
from . import derivatives, graph, record
from .derivatives import (
    UnconnectedGradients,
    dtype_of,
    flatten,
    flatten_like,
    shape_of,
    unconnected,
    zeros_if_unconnected,
)
from .frame import begin, end, resume, unchanged
from .graph import Node, Session, make_leaf
from .tensor import Tensor


def _check_single_target(target, what: str) -> None:
    if not isinstance(target, (Tensor, Variable, jax.Array, np.ndarray, jax.core.Tracer)) and not hasattr(
        target,
        "_read_value",  # a slice of a Variable: a tensor, the value it was taken as
    ):
        raise _errors.GradkitTypeError(
            f"{what} takes one target tensor, but got {type(target).__name__}. For several targets, call "
            f"{what} once per target on a persistent tape (GradientTape(persistent=True)), or stack them into one tensor."
        )


# jax's error for reverse mode through a ``lax.while_loop`` (a loop whose bound is known only
# when the program runs: ``tf.while_loop`` with a traced condition inside ``tf.function``).
_WHILE_LOOP_REVERSE = "Reverse-mode differentiation does not work for lax.while_loop"


def _explains_reverse_mode_limits(method):
    """``method``, with jax's refusal to differentiate a while loop in reverse mode said in
    gradkit's words (what to change in the program); the tape stays usable after it. A
    ``tf.debugging`` assertion that fails when the derivative's program runs (one in a custom
    gradient function) raises its own error."""

    @functools.wraps(method)
    def wrapped(self, *args, **kwargs):
        try:
            try:  # a try costs nothing until it catches; a context manager would cost every call
                return method(self, *args, **kwargs)
            except runtime_checks.REPORTS as error:
                failed = runtime_checks.failed_check(error)
                if failed is None:
                    raise
                raise failed from None
        except ValueError as error:
            if isinstance(error, _errors.GradkitError) or _WHILE_LOOP_REVERSE not in str(error):
                raise
            raise _errors.GradkitValueError(
                f"GradientTape.{method.__name__}: the target is computed by a loop that runs until a condition "
                "known only when the compiled program runs (a jax.lax.while_loop: tf.while_loop inside "
                "tf.function with a tensor condition), and reverse mode cannot differentiate such a loop. Give "
                "the loop an upper bound, tf.while_loop(..., maximum_iterations=N) with a Python int N (it then "
                "runs as a bounded jax.lax.scan), or run it eagerly (outside tf.function), where the loop runs in "
                "Python and the tape records each step."
            ) from error

    return wrapped


def _check_parallel_iterations(parallel_iterations) -> None:
    if parallel_iterations is None:
        return
    if isinstance(parallel_iterations, bool) or not isinstance(parallel_iterations, (int, np.integer)):
        raise _errors.GradkitTypeError(
            f"GradientTape.jacobian: parallel_iterations is {parallel_iterations!r} "
            f"({type(parallel_iterations).__name__}), but it must be a positive int (how many rows of the "
            "Jacobian are computed together) or None (chosen for the Jacobian's size)."
        )
    if parallel_iterations < 1:
        raise _errors.GradkitValueError(
            f"GradientTape.jacobian: parallel_iterations is {parallel_iterations}, but at least one row of the "
            "Jacobian must be computed at a time: pass a positive int, or None (chosen for the Jacobian's size)."
        )


def _check_targets(target, leaves) -> None:
    """TensorFlow raises TypeError for a None target, or a None inside a structure of targets, and
    for a value no tape computed; gradkit does too, rather than answering None (or leaving the
    entry out of the sum)."""
    if target is None:
        raise _errors.GradkitTypeError(
            "GradientTape.gradient got target=None; the target must be a tensor or Variable, or a nested "
            "structure of them (compute it inside 'with tape:')."
        )
    if any(t is None for t in leaves):
        raise _errors.GradkitTypeError(
            f"GradientTape.gradient got a target structure holding None ({target!r}); every entry must be a "
            "tensor or Variable. Leave the None entries out of the target."
        )
    for t in leaves:
        # A value no tape computed (a string, a Python number, a NumPy array): TensorFlow raises
        # too, where an answer of None would look like a disconnected gradient.
        if isinstance(t, (str, bytes, bool, int, float, complex, np.ndarray, np.generic)):
            raise _errors.GradkitTypeError(
                f"GradientTape.gradient got the target {t!r:.60} ({type(t).__name__}), which no tape computed; "
                "the target must be a tensor or Variable computed inside 'with tape:' (or a nested structure "
                "of them)."
            )


def _is_complex(x) -> bool:
    return np.issubdtype(dtype_of(x), np.complexfloating)


def _empty_jacobian(t_shape, x, s_ref):
    """The Jacobian of a target with no elements: empty (None if ``x`` is no source)."""
    if s_ref is None:
        return None
    return Tensor.concrete(jnp.zeros(t_shape + shape_of(x), dtype_of(x)))


def _broadcast(c, shape, dtype):
    return jnp.broadcast_to(jnp.asarray(c, dtype), shape)


def _identity_cotangent(target, ct):
    """The gradient a target that is its own source passes to itself: its cotangent."""
    shape, dtype = shape_of(target), dtype_of(target)
    if ct is None:
        return Tensor.concrete(jnp.ones(shape, dtype))
    derivatives._check_cotangent(shape, ct)
    return record.apply(_broadcast, ct, shape, dtype)


# An output_gradients that is one array (not a structure of them), for a single target.
_SINGLE_COTANGENT = (jax.Array, np.ndarray, Tensor)


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
        # id(tensor or array) -> (it, node, index): this tape's source for what it watched.
        # Another tape watching the same tensor later does not move this tape's source.
        self._tensor_sources: dict[int, tuple] = {}
        # id(var) -> (node, index, live value): where each Variable's value came from when the
        # last tape of the session stopped, so a Variable target after 'with' is its final value.
        self._final_bindings: dict[int, tuple] = {}
        self._used = False
        self._recording = False
        self._released_sources: dict = {}

    # -- recording -------------------------------------------------------------------------
    def __enter__(self) -> GradientTape:
        if self._recording:
            raise _errors.GradkitValueError(
                "this GradientTape is already recording; nested 'with' on one tape is not supported."
            )
        if self._session is not None and self._used and not self._persistent:
            self._forget()  # used up: entered again, it starts afresh, as in TensorFlow
        if self._session is None:
            begin(self)
        else:
            resume(self)  # continues recording, as TensorFlow's tape does
        self._recording = True
        return self

    def __exit__(self, *exc):
        self._recording = False
        end(self)
        return False

    def _require_recording(self, what, error=_errors.GradkitValueError):
        if not self._recording or self._session is not graph.local.session:
            raise error(f"GradientTape.{what} needs the tape to be recording: call it inside 'with tape:'.")

    def watch(self, tensor) -> None:
        """Watch ``tensor`` (a Variable, a Tensor, an array, or a nested structure of them)."""
        self._require_recording("watch")
        s = self._session
        if not s.active & self._bit:
            return  # inside this tape's stop_recording: TensorFlow ignores the watch too
        leaves = jax.tree_util.tree_leaves(tensor, is_leaf=lambda x: x is None or isinstance(x, (Variable, Tensor)))
        for x in leaves:  # every one checked before any is watched: a refused call watches nothing
            if not isinstance(x, (Variable, Tensor, jax.Array, np.ndarray, jax.core.Tracer)) and not hasattr(
                x, "_read_value"
            ):
                # ValueError, as TensorFlow raises for None, a Python number or a string.
                raise _errors.GradkitValueError(
                    f"GradientTape.watch takes Variables, tensors or arrays, but got {type(x).__name__}: {x!r}. "
                    "Convert it first (tf.constant(x)) and compute the target from the converted tensor."
                )
        for x in leaves:
            if not isinstance(x, (Variable, Tensor)) and hasattr(x, "_read_value"):
                x = x._read_value()  # a slice of a Variable: a tensor, the value it was taken as
            if isinstance(x, Variable):
                s.frame.watch(self, x)
            elif isinstance(x, Tensor):
                if self._own_source(x) is not None:
                    continue  # watching twice is watching once
                node, index = x._node, x._index
                if node.session is s and self._records_result(node, index):
                    continue  # already on this tape: a gradient with respect to it sees every use, as in TensorFlow
                if node.session is s:
                    # Later uses go through a node of this tape's own; the tapes that already
                    # record the tensor keep the node they knew as its source.
                    for tape in s.recording:
                        if tape is not self and node.mask & tape._bit:
                            tape._tensor_sources.setdefault(id(x), (x, node, index))
                    x._node = record.record_identity(node, index, node.mask | self._bit, s, source=True)
                else:
                    if captures.active() and (node.session is None or node.session.scope is not captures.top()):
                        # A tensor from outside the compiled function being traced (a capture, a
                        # constant it closes over): as TensorFlow watches the function graph's
                        # own tensor for it, the watch is the trace's alone, and the tensor gets
                        # its node back when the trace ends.
                        captures.at_exit(functools.partial(_give_back_node, x, node, index))
                    x._node = make_leaf(record.value_of(x), self._bit, s)
                    x._node.origin = ("tensor", None)
                x._index = 0
                self._tensor_sources[id(x)] = (x, x._node, 0)
            elif isinstance(x, (jax.Array, np.ndarray, jax.core.Tracer)):
                if self._own_source(x) is not None:
                    continue
                prev = s.watched_arrays.get(id(x))
                if prev is None or prev[0] is not x:
                    node = make_leaf(x, self._bit, s)
                else:  # watched by another tape first: as for a tensor, its source stays
                    node = record.record_identity(prev[1], 0, prev[1].mask | self._bit, s, source=True)
                s.watched_arrays[id(x)] = (x, node)
                self._tensor_sources[id(x)] = (x, node, 0)

    def _records_result(self, node, index) -> bool:
        """Whether ``node``'s output ``index`` is the result of an op this tape recorded, which
        no other tensor stands for: not a leaf, and not a Variable's current value (a read of
        which returns that node again, where TensorFlow makes a tensor per read)."""
        if node.op is None or not node.mask & self._bit:
            return False
        return all(bound[0] is not node or bound[1] != index for bound in self._session.bindings.values())

    @contextlib.contextmanager
    def stop_recording(self):
        """Temporarily stop recording on this tape (TensorFlow's ``stop_recording``)."""
        # TensorFlow raises ValueError; the error is a RuntimeError too, as gradkit's was.
        self._require_recording("stop_recording", _errors.TapeNotRecordingError)
        s = self._session
        if not s.active & self._bit:  # inside its own stop_recording already: TensorFlow refuses it
            raise _errors.TapeNotRecordingError(
                "GradientTape.stop_recording was entered while this tape's recording is already stopped "
                "(nested in its own stop_recording); TensorFlow raises here. Leave out the inner one."
            )
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
        self._tensor_sources = {}
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
        else:
            self._forget()

    def _forget(self) -> None:
        """Back to a new tape's state (not recording)."""
        self._var_sources, self._watched_vars, self._tensor_sources = {}, {}, {}
        self._final_bindings, self._released_sources = {}, {}
        self._session, self._bit, self._used = None, 0, False

    def watched_variables(self) -> tuple:
        """The Variables this tape has seen (watched or read while recording), in the order
        they were created, as TensorFlow lists them."""
        return tuple(sorted(self._watched_vars.values(), key=lambda v: v._uid))

    # -- derivatives -----------------------------------------------------------------------
    def _check_usable(self):
        if self._session is None and not self._used:
            # TensorFlow raises here too: a tape that never recorded has nothing to differentiate,
            # and answering None (or the identity for a target that is its source) would hide it.
            raise _errors.GradkitRuntimeError(
                "this GradientTape has recorded nothing: it was never entered (or was reset since). "
                "Compute the target inside 'with tape:' (after tape.watch(x) for a tensor x), then call "
                "tape.gradient/jacobian/batch_jacobian."
            )
        if self._used and not self._persistent:
            raise _errors.GradkitRuntimeError(
                "A non-persistent GradientTape can only be used to compute one set of gradients "
                "(or jacobians). Create the tape with GradientTape(persistent=True) to call it again."
            )

    def _release(self):
        """After a successful derivative: a non-persistent tape is used up (a failed call leaves it usable)."""
        self._used = True
        if not self._persistent:
            # Weak references only: explain() can still answer "why None?" right after the
            # one gradient call, without this tape keeping any recorded value alive.
            self._released_sources = {key: weakref.ref(node) for key, node in self._var_sources.items()}
            self._var_sources = {}
            self._tensor_sources = {}
            self._final_bindings = {}

    def _own_source(self, x):
        """This tape's source for a tensor or array it watched, or None."""
        hit = self._tensor_sources.get(id(x))
        return (hit[1], hit[2]) if hit is not None and hit[0] is x else None

    def _target_ref(self, t):
        """(node, index) of a recorded target in this tape's session, or None."""
        if not isinstance(t, (Variable, Tensor)) and hasattr(t, "_read_value"):
            t = t._read_value()  # a slice of a Variable: the value it was taken as
        if isinstance(t, Variable):
            s = self._session
            if s is not None and graph.local.session is s:
                bound = s.bindings.get(id(t))
                if bound is not None:
                    return bound
            else:
                final = self._final_bindings.get(id(t))
                if final is not None:
                    # Unless the Variable was assigned since, its value is the recorded one.
                    if unchanged(self._session, t, *final):
                        return final[0], final[1]
                    return None  # assigned after the tapes stopped: not a recorded value
            src = self._var_sources.get(id(t))
            return (src, 0) if src is not None else None
        if isinstance(t, Tensor) and t._node.session is self._session and self._session is not None:
            return t._node, t._index
        return None

    def _source_ref(self, x):
        s = self._session
        if not isinstance(x, (Variable, Tensor)) and hasattr(x, "_read_value"):
            x = x._read_value()  # a slice of a Variable: a tensor, the value it was taken as
        if isinstance(x, Variable):
            node = self._var_sources.get(id(x))
            return (node, 0) if node is not None else None
        own = self._own_source(x)
        if own is not None:
            return own
        if isinstance(x, Tensor):
            node = x._node
            if node.session is s and s is not None and node.mask & self._bit:
                return node, x._index
            return None
        if isinstance(x, (jax.Array, np.ndarray, jax.core.Tracer, Tensor)):
            return None
        raise _errors.GradkitTypeError(
            f"a gradient source must be a Variable, a tensor or an array, but got {type(x).__name__}: {x!r}."
        )

    @_explains_reverse_mode_limits
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
        mode = unconnected(unconnected_gradients)
        if (
            type(target) is Tensor
            and isinstance(sources, (Variable, Tensor))
            and target is not sources
            and (output_gradients is None or isinstance(output_gradients, _SINGLE_COTANGENT))
        ):
            # The usual call, one tensor with respect to one Variable or tensor: no pytrees.
            self._check_usable()
            t_ref, s_ref = self._target_ref(target), self._source_ref(sources)
            (result,) = derivatives.run_vjp(self, [t_ref], [s_ref], [output_gradients])
            self._release()
            return (
                result if result is not None else zeros_if_unconnected(None, shape_of(sources), dtype_of(sources), mode)
            )
        self._check_usable()
        targets, _ = flatten(target)
        _check_targets(target, targets)
        src_leaves, src_tree = flatten(sources)
        cts = [None] * len(targets)
        if output_gradients is not None:
            cts = flatten_like(output_gradients, len(targets))
        t_refs = [self._target_ref(t) for t in targets]
        s_refs = [self._source_ref(x) for x in src_leaves]
        pairs = self._self_targets(targets, t_refs, src_leaves, s_refs)
        results = derivatives.run_vjp(self, t_refs, s_refs, cts)
        for i, j in pairs:
            ct = _identity_cotangent(targets[i], cts[i])
            results[j] = ct if results[j] is None else results[j] + ct
        out = [zeros_if_unconnected(g, shape_of(x), dtype_of(x), mode) for g, x in zip(results, src_leaves)]
        self._release()
        return key_order.like(sources, jax.tree_util.tree_unflatten(src_tree, out))

    def _self_targets(self, targets, t_refs, src_leaves, s_refs) -> list[tuple[int, int]]:
        """TensorFlow's rule for a target that is itself one of the sources (the same
        Variable or tensor): its derivative with respect to itself is the identity, even
        where the tape never saw it. Returns the (target index, source index) pairs that
        take the rule (every place the source is listed), and drops those targets from
        ``t_refs``.

        It applies where this tape has no source for it (it never saw it, though another
        tape may record its value), and to every
        Variable target of a TensorFlow-parity tape, which (as in TensorFlow) stands for the
        Variable itself, not a recorded value. Otherwise the recorded graph answers: for a
        Variable the tape saw, the derivative of its final value with respect to its value
        when the tape first saw it (None if it was assigned after the tape stopped).
        Integer targets keep None, as every integer derivative does.
        """
        pairs = []
        for i, t in enumerate(targets):
            if not isinstance(t, (Variable, Tensor)) or not jnp.issubdtype(dtype_of(t), jnp.inexact):
                continue
            same = [j for j, x in enumerate(src_leaves) if x is t]  # a source may be listed twice
            if not same:
                continue
            # Where this tape has no source for it (it never saw it, though another tape may
            # record it), or for a parity tape's Variable.
            if (isinstance(t, Variable) and not self._track) or s_refs[same[0]] is None:
                pairs.extend((i, j) for j in same)
                t_refs[i] = None
        return pairs

    @_explains_reverse_mode_limits
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
        ``jacfwd``, whichever needs fewer passes), compiled once per graph structure. A large
        Jacobian is computed a chunk of rows (columns in forward mode) at a time, which keeps
        the temporaries small: on a CPU, chunks of about 0.5 MiB of result; on an accelerator,
        chunks of 1 GiB. ``parallel_iterations``, as in TensorFlow, sets how many rows a chunk
        holds instead (fewer: less memory). ``experimental_use_pfor`` is accepted for
        TensorFlow compatibility.
        """
        mode = unconnected(unconnected_gradients)
        _check_parallel_iterations(parallel_iterations)
        self._check_usable()
        _check_single_target(target, "jacobian")
        src_leaves, src_tree = flatten(sources)
        t_refs = [self._target_ref(target)]
        s_refs = [self._source_ref(x) for x in src_leaves]
        t_shape = shape_of(target)
        pairs = self._self_targets([target], t_refs, src_leaves, s_refs)
        if any(_is_complex(x) for x in [target, *src_leaves]):
            results = self._jacobian_by_rows(t_refs[0], s_refs, t_shape, dtype_of(target), src_leaves)
        else:
            chunk = None if parallel_iterations is None else int(parallel_iterations)
            results = derivatives.run_jacobian(self, t_refs[0], s_refs, t_shape, src_leaves, chunk)
        for _, j in pairs:
            size = math.prod(t_shape)
            results[j] = Tensor.concrete(jnp.eye(size, dtype=dtype_of(target)).reshape(t_shape + t_shape))
        out = [zeros_if_unconnected(j, t_shape + shape_of(x), dtype_of(x), mode) for j, x in zip(results, src_leaves)]
        self._release()
        return key_order.like(sources, jax.tree_util.tree_unflatten(src_tree, out))

    def _jacobian_by_rows(self, t_ref, s_refs, t_shape, t_dtype, src_leaves):
        """A Jacobian with a complex target or source: one gradient per target element.

        jax's ``jacrev``/``jacfwd`` take complex values only for holomorphic functions, but
        TensorFlow's Jacobian is defined for any: row ``i`` is the gradient with the one-hot
        cotangent ``e_i``, which is what this computes (each row one cached program call).
        """
        size = math.prod(t_shape)
        rows = []
        for i in range(size):
            one_hot = jnp.zeros(size, t_dtype).at[i].set(1).reshape(t_shape)
            rows.append(derivatives.run_vjp(self, [t_ref], s_refs, [one_hot]))
        out = []
        for k, x in enumerate(src_leaves):
            column = [row[k] for row in rows]
            if size == 0 or column[0] is None:
                out.append(None if size else _empty_jacobian(t_shape, x, s_refs[k]))
                continue
            stacked = record.apply(jnp.stack, column)
            out.append(record.apply(jnp.reshape, stacked, t_shape + shape_of(x)))
        return out

    @_explains_reverse_mode_limits
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
        JVP along a random tangent of the whole batch, and warns (``gk.GradkitWarning``) if
        examples interact (BatchNorm in training mode, ``x - mean(x, axis=0)``), where the
        result, TensorFlow's, is no per-example Jacobian; use ``jacobian`` there, or
        ``check_independence=False`` to skip the check. With the check, the Jacobians are computed one example at a
        time (``vmap(jacrev(...))``, as hand-written JAX does) wherever the graph runs on a
        single example and the check confirms it, and otherwise with TensorFlow's
        whole-batch algorithm. The check is skipped where the graph's structure proves it
        unneeded for every value: examples do not interact (every step keeps example ``i``
        apart: elementwise ops, products and reductions over other axes, convolutions, ...)
        for the whole-batch algorithm, and, for the per-example one, the graph run on one
        example also computes the batch's rows (it reads neither other examples nor the
        batch's size); otherwise it runs at every call, in the same compiled program as the
        Jacobians. Inside ``jax.jit`` / ``gk.jit`` values are unknown while tracing: a graph
        proven per-example runs the per-example Jacobians; on a CPU, one proven only
        independent gets a program that makes the check at every call and runs the
        per-example Jacobians when it passes, the whole-batch algorithm (exact for
        independent examples) when not; elsewhere (and on a GPU, where that is faster) the
        whole-batch algorithm runs unchecked (run the step once eagerly to check it). A source
        the target does not depend on gives zeros whatever ``unconnected_gradients`` says, as
        TensorFlow's does. ``parallel_iterations`` and ``experimental_use_pfor`` are accepted
        for TensorFlow compatibility: the Jacobians are computed in one vectorised pass, not in
        chunks (unlike ``jacobian``'s), so peak memory grows with the batch.
        """
        mode = unconnected(unconnected_gradients)  # unconnected gives zeros either way, as in TensorFlow
        self._check_usable()
        _check_single_target(target, "batch_jacobian")
        if not isinstance(source, (Tensor, Variable, jax.Array, np.ndarray, jax.core.Tracer)) and not hasattr(
            source, "_read_value"
        ):
            raise _errors.GradkitTypeError(
                f"batch_jacobian takes one source tensor, but got {type(source).__name__}. For several "
                "sources, call batch_jacobian once per source on a persistent tape (GradientTape(persistent=True))."
            )
        t_shape = shape_of(target)
        s_shape = shape_of(source)
        for name, shape in (("target", t_shape), ("source", s_shape)):
            if len(shape) < 2:
                # TensorFlow raises ValueError too: a rank-1 tensor has no per-example part.
                raise _errors.GradkitValueError(
                    f"batch_jacobian needs a {name} of rank 2 or more, (batch, ...), but got shape {shape}. "
                    f"For a vector {name}, reshape it to (batch, 1) first (tf.reshape(x, [-1, 1])), or use "
                    "tape.jacobian for the full Jacobian."
                )
        if t_shape[0] != s_shape[0]:
            raise _errors.GradkitValueError(
                f"Need first dimension of target shape ({t_shape}) and source shape ({s_shape}) to match: "
                "batch_jacobian pairs example i of the target with example i of the source."
            )
        t_ref = self._target_ref(target)
        s_ref = self._source_ref(source)
        result = derivatives.run_batch_jacobian(self, t_ref, s_ref, check_independence)
        if result is None:
            # TensorFlow's zeros take the target's dtype, but the source's with UnconnectedGradients.ZERO.
            dtype = dtype_of(source) if mode is UnconnectedGradients.ZERO else dtype_of(target)
            result = Tensor.concrete(jnp.zeros(t_shape + s_shape[1:], dtype))
        self._release()
        return result

    def explain(self, target, source) -> str:
        """Why ``gradient(target, source)`` is what it is, in words (see ``gk.explain``)."""
        from .explain import explain

        return explain(self, target, source)


def _give_back_node(tensor, node, index) -> None:
    tensor._node, tensor._index = node, index
