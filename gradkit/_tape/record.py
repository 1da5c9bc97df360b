"""Applying a function to recorded tensors: record it lazily, or run it eagerly.

``apply(fn, *args, **kwargs)`` is the one entry point: ``gk.numpy``, ``gk.lift``, the
``Tensor`` operators and the core's assignments all go through it.

- No tensor among the arguments: ``fn`` runs as plain JAX and returns plain arrays.
- Tensors, but none recorded in this thread's session: ``fn`` runs eagerly on their
  values and the result is wrapped in concrete tensors.
- Otherwise the call becomes a graph node: nothing runs now beyond a cached shape
  lookup. Python scalars, strings, slices and other non-array arguments are static:
  part of the graph's structure, never jit arguments. The exception is the operators'
  hot path: a Python float or complex operand of ``t * beta`` is a leaf, a runtime value.
"""

from __future__ import annotations

import functools
import operator
import weakref

import jax
import jax.numpy as jnp
import numpy as np

from .. import _errors
from .._core import captures, frames, runtime_checks
from .._core.custom import grad_fn_returned_none
from .._core.operators import outranks
from . import bounded, graph
from .bounded import BoundedDict
from .graph import Node, intern_op, make_leaf, make_node

_ARRAY_TYPES = (jax.Array, np.ndarray, np.generic)


class Tensor:
    """Placeholder, replaced by :class:`gradkit._tape.tensor.Tensor` at import (``install_tensor``)."""


_LEAF_TYPES: tuple = ()  # set by install_tensor
_DYNAMIC_TYPES: tuple = ()


def install_tensor(cls) -> None:
    global Tensor, _LEAF_TYPES, _DYNAMIC_TYPES
    Tensor = cls
    _LEAF_TYPES = (cls, *_ARRAY_TYPES)  # what a call passes through as one argument
    _DYNAMIC_TYPES = (cls, *_ARRAY_TYPES, jax.core.Tracer)  # what becomes an input of a recorded op


def _is_tensor(x) -> bool:
    return isinstance(x, Tensor)


_forward_cache: dict[int, object] = BoundedDict(bounded.PROGRAMS)


def _forward_program(node: Node):
    from .replay import Plan

    program = _forward_cache.get(node.sid)
    if program is None:
        plan = Plan(node.leaves, [(node, k) for k in range(len(node.avals))])

        def run(leaf_values):
            env = plan.forward(leaf_values)
            return [env[t] for t in plan.target_slots]

        program = _forward_cache[node.sid] = jax.jit(run)
    return program


def materialize(node: Node) -> list:
    """The node's output values, computing its whole history as one compiled call if needed."""
    values = node.values
    if values is None:
        leaf_values = [leaf.values[0] for leaf in node.leaves]
        program = _forward_program(node)
        if any_traced(leaf_values):
            values = program(leaf_values)
            if not keepable(node.session, leaf_values, values):
                return values
        else:
            # The first read may come inside a jax trace (a gk.jit step or tf.function that
            # reads a tensor recorded outside it): computed concretely, as the graph is, so
            # the node never keeps a tracer of a trace that ends.
            with jax.ensure_compile_time_eval():
                values = program(leaf_values)
        node.values = values
    return values


def any_traced(values) -> bool:
    return any(isinstance(v, jax.core.Tracer) for v in values)


def keepable(session, leaf_values, results) -> bool:
    """Whether ``results``, just computed from a graph's ``leaf_values``, may stay on its nodes.

    Not when they are tracers of a trace the graph was not recorded in, which ends sooner
    than the graph: a tf.cond branch or a while_loop body reading a tensor of the step around
    it, a gk.jit step reading one recorded outside it.
    """
    if any_traced(leaf_values):
        return session is not None and frames.trace_state() == session.trace
    return not any_traced(results)


def value_of(t) -> object:
    node = t._node
    if captures.active():
        if node.mask and node.session is not None:
            # A compiled function being traced closes over a tensor a tape records: it sees the
            # tracer of the program input standing for it, not its value as a constant.
            return captures.value(t, own_value, node.session.scope, capture=is_capturable(node))
        if node.session is None and node.values is not None and not any_traced(node.values):
            # A concrete tensor no tape records (a tf.constant closed over): a constant of the
            # trace, which the function captures instead once a tape watches it.
            return captures.value(t, own_value, None, capture=False)
    return own_value(t)


def capturable_now(obj) -> bool:
    """Whether ``obj``, a constant of an earlier trace, is a tensor a tape records now."""
    return isinstance(obj, Tensor) and is_capturable(obj._node)


def is_capturable(node: Node) -> bool:
    """Whether a recorded node's tensors become inputs of a compiled function that closes over
    them (see ``_core/captures.py``): some tape of a session still recording records it."""
    session = node.session
    return session is not None and session.frame is not None and bool(node.mask & session.alive)


def own_value(t) -> object:
    """The value of ``t`` itself, computed if needed, whatever trace is running."""
    node = t._node
    values = node.values
    if values is None:
        try:
            values = materialize(node)
        except runtime_checks.REPORTS as error:  # a tf.debugging assertion that failed when computed
            failed = runtime_checks.failed_check(error)
            if failed is None:
                raise
            raise failed from None
    return values[t._index]


def _input_node(x, session) -> tuple[Node, int]:
    """The (node, output) an argument feeds into a recorded op."""
    if isinstance(x, Tensor):
        node = x._node
        if node.session is session:
            return node, x._index
        return make_leaf(value_of(x), 0, session), 0
    if session.watched_arrays:
        hit = session.watched_arrays.get(id(x))
        if hit is not None and hit[0] is x:
            return hit[1], 0
    # One leaf per constant per session: a batch used by every op of a step is one input.
    # A NumPy array written to since (a buffer refilled in place) is a new constant.
    hit = session.constants.get(id(x))
    if hit is not None and hit[0] is x and (hit[2] is None or _unchanged(hit[2], x)):
        return hit[1], 0
    value = x.copy() if isinstance(x, np.ndarray) and _writable_memory(x) else x  # later writes must not leak in
    leaf = make_leaf(value, 0, session, keep_numpy=True)
    session.constants[id(x)] = (x, leaf, value if value is not x else None)
    if _numpy_exits or _numpy_scalar_exits:
        exit_ = numpy_exit(x)
        if exit_ is not None:
            leaf.origin = ("numpy", *exit_)
    return leaf, 0


def _writable_memory(x: np.ndarray) -> bool:
    """Whether the memory ``x`` reads can still be written, through ``x`` or through what it
    views: a read-only view (``np.broadcast_to``, ``sliding_window_view``) of a writeable
    buffer changes when the buffer does."""
    while isinstance(x, np.ndarray):
        if x.flags.writeable:
            return True
        x = x.base
    if x is None:
        return False  # a read-only array that owns its memory
    try:
        return not memoryview(x).readonly  # bytes, a JAX array's buffer: read-only
    except TypeError:
        return True  # an owner NumPy cannot tell about: assume it may change


def _unchanged(copy: np.ndarray, x: np.ndarray) -> bool:
    """Whether ``x`` still holds what ``copy`` was taken from (bit for bit: NaNs included)."""
    if x.nbytes <= 1 << 16:
        return copy.tobytes() == x.tobytes()  # a small batch, read every op: the cheapest compare
    return bool(np.array_equal(copy, x))


# Values that left a recording tape through .numpy(), for explain(): id -> (the array, or a weak
# reference to it, a weak reference to its node, site). Neither keeps a graph alive. A 0-d
# tensor's .numpy() is a NumPy scalar, which cannot be weakly referenced: the last few are
# held (small, bounded).
_numpy_exits: dict[int, tuple] = {}
_numpy_scalar_exits: dict[int, tuple] = BoundedDict(256)


def note_numpy_exit(array, node, site) -> None:
    key = id(array)
    if isinstance(array, np.generic):
        _numpy_scalar_exits[key] = (array, weakref.ref(node), site)
    else:
        _numpy_exits[key] = (weakref.ref(array, lambda _: _numpy_exits.pop(key, None)), weakref.ref(node), site)


def numpy_exit(x) -> tuple | None:
    """``(node, site)`` where ``x`` left a recording tape through ``.numpy()``, or None."""
    if isinstance(x, np.ndarray):
        hit = _numpy_exits.get(id(x))
        if hit is None or hit[0]() is not x:
            return None
    elif isinstance(x, np.generic):
        hit = _numpy_scalar_exits.get(id(x))
        if hit is None or hit[0] is not x:
            return None
    else:
        return None
    node = hit[1]()
    return None if node is None else (node, hit[2])


def _wrap_outputs(node: Node, treedef, all_float: bool = True):
    if treedef is None:
        return Tensor._make(node, 0)
    n = len(node.avals)
    if all_float or not node.mask:
        return jax.tree_util.tree_unflatten(treedef, [Tensor._make(node, k) for k in range(n)])
    # Float and integer results together (top_k's values and indices, an optimizer's
    # moments and step count): the floats carry gradients; each integer result is cut on
    # its own, as an op with only integer results is.
    site = graph.user_site()
    outs = []
    for k, aval in enumerate(node.avals):
        if jnp.issubdtype(aval.dtype, jnp.inexact):
            outs.append(Tensor._make(node, k))
        else:
            cut = ("an integer or boolean result", site, node.mask)
            outs.append(Tensor._make(record_identity(node, k, 0, node.session, cut=cut), 0))
    return jax.tree_util.tree_unflatten(treedef, outs)


def _wrap_concrete(out):
    return jax.tree_util.tree_map(
        lambda v: Tensor.concrete(v) if isinstance(v, (jax.Array, jax.core.Tracer)) else v, out
    )


def _flat_args(args):
    """``args`` as leaves when each is a tensor, an array or a scalar (the common case).

    None when any needs pytree flattening (containers, States, other pytrees).
    """
    out = list(args)
    for i, x in enumerate(out):
        if type(x) in _SIMPLE or isinstance(x, _LEAF_TYPES):
            continue
        if _is_static_tuple(x):
            continue  # a shape or an axis tuple: one static argument
        if hasattr(x, "_read_value"):  # a Variable, or a slice of one: its current value
            value = x._read_value()
            if not isinstance(value, _DYNAMIC_TYPES):
                return None
            out[i] = value
            continue
        return None
    return out


_SIMPLE = frozenset((int, float, bool, complex, str, type(None), slice, type(Ellipsis)))
_CONTAINERS = (list, tuple, dict)
_arg_treedefs: dict = BoundedDict(bounded.INTERNED)


def _is_static_tuple(x) -> bool:
    """A tuple of Python scalars (a shape, axes): one static argument, never flattened."""
    return type(x) is tuple and all(type(e) in _SIMPLE for e in x)


def args_treedef(n: int, keys: tuple):
    """The treedef of ``(args, kwargs)`` whose leaves are the args, then the kwargs by key."""
    treedef = _arg_treedefs.get((n, keys))
    if treedef is None:
        treedef = _arg_treedefs[(n, keys)] = jax.tree_util.tree_structure((tuple(range(n)), dict.fromkeys(keys, 0)))
    return treedef


def _flat_call(args, kwargs):
    """``(leaves, treedef)`` of a call whose arguments need no pytree flattening, or None."""
    leaves = _flat_args(args)
    if leaves is None or not kwargs:
        return leaves and (leaves, args_treedef(len(args), ()))
    keys = tuple(sorted(kwargs))
    for k in keys:
        v = kwargs[k]
        if type(v) in _SIMPLE or _is_static_tuple(v):
            leaves.append(v)
        else:
            return None
    return leaves, args_treedef(len(args), keys)


def apply(fn, *args, **kwargs):
    """Call ``fn``; record it if any argument is a tensor recorded in this session."""
    if args and type(args[0]) is not Tensor and hasattr(type(args[0]), "_read_value"):
        # A Variable (or a slice of one) first, as in gnp.tanh(w): read here, as _flat_args
        # would, so that its recorded value takes the fast paths below.
        value = args[0]._read_value()
        if isinstance(value, _DYNAMIC_TYPES):
            args = (value, *args[1:])
    if args and type(args[0]) is Tensor:
        session = graph.local.session
        if session is not None and args[0]._node.session is session:
            if len(args) == 1 and not kwargs:  # gnp.tanh(t): the common case
                return _record_unary(fn, args[0], session)
            if len(args) == 2 and not kwargs and id(fn) in _elementwise_ids:  # gnp.maximum(t, 0.0)
                b = args[1]
                if type(b) is Tensor or type(b) in _PY_SCALARS or isinstance(b, _ARRAY_TYPES):
                    # The op and node _record makes: an int or bool is static (but an int
                    # operand of arithmetic on floats is a runtime float), a float a leaf.
                    if type(b) is int:
                        b = _int_as_runtime_float(fn, args[0], b)
                    return _record_pair(_binary_op(fn, args[0], b, False), args[0], b, b, session)
            op = _static_call_op(fn, args, kwargs)  # gnp.sum(t, axis=-1, keepdims=True)
            if op is not None:
                return record_single(op, args[0], None, session)
    flat = _flat_call(args, kwargs)
    if flat is not None:
        leaves, treedef = flat
    else:
        leaves, treedef = jax.tree_util.tree_flatten((args, kwargs), is_leaf=_is_tensor)
    tensors = [i for i, x in enumerate(leaves) if isinstance(x, Tensor)]
    session = graph.local.session
    if not tensors:
        if session is not None and session.watched_arrays and any(id(x) in session.watched_arrays for x in leaves):
            return _record(fn, leaves, treedef, session)
        # Plain JAX; Variables were read into their values above.
        if id(fn) in _cut_ids:
            leaves = _cut_traced(leaves)
        a, k = jax.tree_util.tree_unflatten(treedef, leaves)
        out = fn(*a, **k)
        if isinstance(out, jax.core.Tracer):  # tf.reduce_prod(w.shape) in tf.function: a known size
            out = _known_counter(fn, leaves, out, a, k)
        return out
    recorded = session is not None and any(leaves[i]._node.session is session for i in tensors)
    if not recorded:
        values = [value_of(x) if isinstance(x, Tensor) else x for x in leaves]
        if id(fn) in _cut_ids:
            values = _cut_traced(values)
        a, k = jax.tree_util.tree_unflatten(treedef, values)
        out = fn(*a, **k)
        if isinstance(out, jax.core.Tracer):
            out = _known_counter(fn, values, out, a, k)
        return _wrap_concrete(out)
    return _record(fn, leaves, treedef, session)


_STATIC_ARG_TYPES = frozenset((int, bool, str, type(None)))
_static_call_ops: dict = BoundedDict(bounded.INTERNED)


def _static_call_op(fn, args, kwargs):
    """The op ``_record`` makes of ``fn(t, *rest, **kwargs)`` when everything but ``t`` is a
    Python int, bool, str or None, or a tuple of ints (a shape, axes): cached by the values and
    their types, so the hot path skips flattening the call. None for any other call (a float
    may be a runtime value; arrays and tensors are inputs)."""
    rest = args[1:]
    kinds = _static_kinds(rest)
    if kinds is None:
        return None
    if kwargs:
        keys = tuple(sorted(kwargs))
        values = tuple([kwargs[k] for k in keys])
        kw_kinds = _static_kinds(values)
        if kw_kinds is None:
            return None
    else:
        keys = values = kw_kinds = ()
    key = (fn, rest, kinds, keys, values, kw_kinds)
    try:
        if fn in _CUTS:
            return None
        op = _static_call_ops.get(key)
    except TypeError:  # an unhashable function: the general path
        return None
    if op is None:
        static = (None, *rest, *values)
        op = _static_call_ops[key] = intern_op(fn, args_treedef(len(args), keys), static, (0,))
    return op


def _static_kinds(values: tuple):
    """The types of ``values`` (for a tuple of ints, its items' types), or None unless each is
    a Python int, bool, str or None, or a tuple of ints."""
    kinds = tuple(map(type, values))
    if tuple not in kinds:
        return kinds if _STATIC_ARG_TYPES.issuperset(kinds) else None
    out = []
    for x, kind in zip(values, kinds):
        if kind is tuple:
            items = tuple(map(type, x))
            if not all(k is int for k in items):
                return None
            out.append(items)
        elif kind in _STATIC_ARG_TYPES:
            out.append(kind)
        else:
            return None
    return tuple(out)


# The most elements a known integer result may have and still be computed at trace time: a
# shape vector (``tf.shape(x)[1:3] * 2``), never a large array.
_KNOWN_INTEGERS_LIMIT = 64


def _known_counter(fn, values, out, args, kwargs=None):
    """``out``, or computed again with its value known where it is an integer or boolean
    scalar or short vector computed from known values inside a jax trace (``jax.jit``,
    ``tf.function``): a loop counter (``i = tf.constant(0)``, ``i + 1``, ``i < n``) then stays
    one Python can read, so the loop runs in Python and a tape can record it, and a size
    computed from ``tf.shape`` (``tf.image.resize(x, tf.shape(x)[1:3] * 2)``) stays a static
    size, as TensorFlow's graph would have them as constants."""
    if out.ndim > 1 or out.dtype.kind not in "biu" or any(isinstance(v, jax.core.Tracer) for v in values):
        return out
    if out.ndim == 1 and not (type(out.shape[0]) is int and out.shape[0] <= _KNOWN_INTEGERS_LIMIT):
        return out  # a long vector, or one of a symbolic size (jax.export's)
    with jax.ensure_compile_time_eval():
        return fn(*args, **(kwargs or {}))


def _record(fn, leaves, treedef, session, kind=None, op=None):
    static = []
    dynamic_at = []
    inputs = []
    mask = 0
    float_leaves = fn in _ELEMENTWISE
    for i, x in enumerate(leaves):
        if isinstance(x, _DYNAMIC_TYPES) or (float_leaves and type(x) in _RUNTIME_FLOATS):
            node, k = _input_node(x, session)
            inputs.append((node, k))
            mask |= node.mask
            dynamic_at.append(i)
            static.append(None)
        else:
            static.append(x)
    if op is None:
        op = intern_op(fn, treedef, tuple(static), tuple(dynamic_at), kind)
    inputs = tuple(inputs)
    shapes = graph.output_avals(op, tuple([n.avals[k] for n, k in inputs]))
    if fn in _CUTS:
        recorded_by, cut = 0, (_CUTS[fn], graph.user_site(), mask & session.active)
    else:
        recorded_by, cut = _recorded_by(mask, shapes[3], session)
    node, out_treedef, all_float = make_node(op, inputs, recorded_by, session, shapes)
    node.cut = cut
    if out_treedef is None:
        return Tensor._make(node, 0)
    return _wrap_outputs(node, out_treedef, all_float)


def _recorded_by(mask: int, any_float: bool, session) -> tuple[int, tuple | None]:
    """The tapes that record an op over inputs recorded by ``mask``, and where the others'
    paths are cut (for explain()): integer and boolean results carry no gradient (TensorFlow
    gives None past them; an op with float results too keeps those, see ``_wrap_outputs``);
    tapes paused by ``stop_recording`` do not see the op."""
    active = session.active
    if mask & active and not any_float:
        return 0, ("an integer or boolean result", graph.user_site(), mask & active)
    lost = mask & ~active & session.alive
    return mask & active, (("stop_recording", graph.user_site(), lost) if lost else None)


# Functions that cut every tape's path by design, and how explain() names them.
_CUTS = {
    jax.lax.stop_gradient: "stop_gradient",
    grad_fn_returned_none: "a custom_gradient whose grad_fn returned None for this input",
}


# By id, for the unrecorded paths of apply: there a cut op's traced inputs are held constant.
_cut_ids = {id(fn) for fn in _CUTS}


def _cut_traced(values: list) -> list:
    """A cut op's float inputs that are traced values held constant: a transform that differentiates
    the traced program (a tf.function or gk.jit call a tape records, gk.grad) gets no gradient
    through the op either, as a tape recording it eagerly gets None."""
    return [
        jax.lax.stop_gradient(x) if isinstance(x, jax.core.Tracer) and jnp.issubdtype(x.dtype, jnp.inexact) else x
        for x in values
    ]


def cut_by_design(fn, name: str) -> None:
    """Record ``fn`` as an op that cuts every tape's path, as ``stop_gradient`` does (a
    gradient through it is None, also where it runs traced); ``explain`` names the cut ``name``."""
    _CUTS[fn] = name
    _cut_ids.add(id(fn))
    _unary_ops.pop(id(fn), None)  # recorded uncut before: from now on, cut
    _elementwise_ids.discard(id(fn))  # its two-argument calls take _record's path, which cuts


# Elementwise functions whose every operand may be an array: a Python float or complex
# argument of one (``gnp.multiply(beta, kl)``, ``gnp.clip(t, lo, hi)``) is a runtime value of
# the program, as an operator's float operand is. Other functions' non-array arguments stay
# static: they may be shapes, axes or flags that must be concrete.
_ELEMENTWISE = {
    getattr(jnp, name)
    for name in (
        "add subtract multiply divide true_divide power float_power maximum minimum fmax fmin "
        "arctan2 hypot logaddexp logaddexp2 copysign fmod remainder mod heaviside where clip"
    ).split()
}
_RUNTIME_FLOATS = frozenset((float, complex))
# The operators and elementwise functions whose Python int operand, beside a float tensor, is
# taken as a runtime float (see _int_as_runtime_float); by id, for the hot path.
_INT_AS_FLOAT_FNS = (
    operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv, operator.mod,
    operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne,
    jnp.add, jnp.subtract, jnp.multiply, jnp.divide, jnp.true_divide, jnp.floor_divide, jnp.mod,
    jnp.remainder, jnp.maximum, jnp.minimum, jnp.fmax, jnp.fmin, jnp.greater, jnp.greater_equal,
    jnp.less, jnp.less_equal, jnp.equal, jnp.not_equal,
)  # fmt: skip
_INT_AS_FLOAT_OPS = frozenset(map(id, _INT_AS_FLOAT_FNS))
# By id, for the hot path (a jax.numpy ufunc's hash is computed in Python); the set above keeps them alive.
_elementwise_ids = {id(fn) for fn in _ELEMENTWISE}


def floats_are_runtime(fn) -> None:
    """Record ``fn``'s Python float and complex arguments as runtime values, as the elementwise
    ``gk.numpy`` functions' are (``t.clip(0, hi)``, ``t.at[i].set(v)``): a new value compiles nothing."""
    _ELEMENTWISE.add(fn)
    _elementwise_ids.add(id(fn))


_binary_ops: dict = BoundedDict(bounded.INTERNED)
_PY_SCALARS = frozenset((int, float, bool, complex))
# A Python int or bool operand is part of the op, as jax.jit treats a closed-over constant
# (``t ** 2`` stays an integer power). A float or complex operand is a runtime value of the
# program instead, as a jax.jit argument is: ``beta * kl`` with ``beta`` annealed, or
# ``lr * g`` with a schedule, runs one compiled program for every value.
_STATIC_SCALARS = frozenset((int, bool))


def _binary_op(fn, a, b, swapped):
    """The interned op of ``fn`` with an int or bool operand (cached: the hot path)."""
    scalar = b if type(b) in _STATIC_SCALARS else None
    # By id: the op the entry holds keeps fn alive, so the id names no other function while it is here.
    key = (id(fn), swapped, type(scalar), scalar)
    op = _binary_ops.get(key)
    if op is None:
        leaves = [b, a] if swapped else [a, b]
        static = tuple(None if (x is a or (x is b and scalar is None)) else x for x in leaves)
        dynamic_at = tuple(i for i, s in enumerate(static) if s is None)
        op = _binary_ops[key] = intern_op(fn, _BINARY_TREEDEF, static, dynamic_at)
    return op


def _operand(b):
    """The other operand of a Tensor operator, as something ``_record`` can take."""
    if isinstance(b, _ARRAY_TYPES):
        return b
    if hasattr(b, "_read_value"):  # a Variable, or a slice of one: its current value
        return b._read_value()
    if type(b) in _CONTAINERS:  # a nested list of numbers, as NumPy would take it
        return jnp.asarray(b)
    return b


def _wide_int_as_float(a, b):
    """``b``, or ``float(b)`` where it is a Python int beyond 32 bits and ``a`` holds floats:
    ``x / 2**32`` then divides as TensorFlow does, where JAX refuses the int (OverflowError)."""
    if type(b) is int and not -(2**31) <= b < 2**31 and a.dtype.kind in "fc":
        return float(b)
    return b


def _int_as_runtime_float(fn, a, b):
    """``float(b)`` where ``b`` is a Python int operand of an arithmetic or comparison op on a
    float tensor ``a`` (``loss / n``, ``w * step``): the same value and dtype as the int (jax
    converts a weak int to the tensor's float dtype), but a runtime value of the program, so a
    step counter compiles nothing new. A power (``t ** 2``) keeps its int: an integer power is
    exact for a negative base."""
    if id(fn) in _INT_AS_FLOAT_OPS and a._node.avals[a._index].dtype.kind in "fc":
        return _float_of(b)
    return b


@functools.lru_cache(maxsize=4096)
def _float_of(b: int) -> float:
    """One float object per int: a session records one leaf per constant object (``x * 2`` in
    every step of a loop adds one input to the program, not one per use)."""
    return float(b)


def apply_binary(fn, a, b):
    """The fast path of ``Tensor`` operators: ``fn(a, b)`` with ``a`` a Tensor."""
    if type(b) is not Tensor and type(b) not in _PY_SCALARS:
        if outranks(b):
            return NotImplemented
        b = _operand(b)
    b = _wide_int_as_float(a, b)
    session = graph.local.session
    if session is not None and (a._node.session is session or (isinstance(b, Tensor) and b._node.session is session)):
        if type(b) is int:
            b = _int_as_runtime_float(fn, a, b)
        return _record_pair(_binary_op(fn, a, b, False), a, b, b, session)
    return _unrecorded_binary(fn, value_of(a), value_of(b) if isinstance(b, Tensor) else b)


def apply_binary_reflected(fn, a, b):
    """``fn(b, a)`` with ``a`` the Tensor whose reflected operator was called."""
    if type(b) is not Tensor and type(b) not in _PY_SCALARS:
        b = _operand(b)
    b = _wide_int_as_float(a, b)
    session = graph.local.session
    if session is not None and (a._node.session is session or (isinstance(b, Tensor) and b._node.session is session)):
        if type(b) is int:
            b = _int_as_runtime_float(fn, a, b)
        return _record_pair(_binary_op(fn, a, b, True), b, a, b, session)
    return _unrecorded_binary(fn, value_of(b) if isinstance(b, Tensor) else b, value_of(a))


def _unrecorded_binary(fn, x, y):
    out = fn(x, y)
    if isinstance(out, jax.core.Tracer):
        out = _known_counter(fn, (x, y), out, (x, y))
    return Tensor.concrete(out)


def _record_pair(op, x, y, other, session):
    """``_record`` of a binary operator on ``x`` and ``y`` (in call order), written out.

    Every operator on a recorded tensor comes here, so this is the tape's hot path. It
    makes the node ``_record`` would, except that ``other`` (the operand that is not the
    tensor whose operator was called) is static only when it is a Python int or bool; a
    Python float or complex is a leaf of the graph (see ``_STATIC_SCALARS``).
    """
    if type(other) in _STATIC_SCALARS:
        n1, k1 = _input_node(y if other is x else x, session)
        inputs = ((n1, k1),)
        mask = n1.mask
        key = (op.key, id(n1.avals[k1]))
        leaves, maps = n1.leaves, None
    else:
        n1, k1 = _input_node(x, session)
        n2, k2 = _input_node(y, session)
        inputs = ((n1, k1), (n2, k2))
        mask = n1.mask | n2.mask
        key = (op.key, id(n1.avals[k1]), id(n2.avals[k2]))
        leaves, maps = graph.merge_leaves((n1, n2))
    shapes = graph._aval_cache.get(key)
    if shapes is None:
        shapes = graph.output_avals(op, tuple(n.avals[k] for n, k in inputs))
    avals, treedef, all_float, any_float = shapes
    mask, cut = _recorded_by(mask, any_float, session)
    node = Node(op, inputs, avals, mask, session, graph.node_sid(op, mask, inputs, maps), leaves)
    node.cut = cut
    if treedef is None:
        return Tensor._make(node, 0)
    return _wrap_outputs(node, treedef, all_float)


def apply_unary(fn, a):
    session = graph.local.session
    if session is None or a._node.session is not session:
        return Tensor.concrete(fn(value_of(a)))
    return _record_unary(fn, a, session)


_unary_ops: dict = BoundedDict(bounded.INTERNED)


def _record_unary(fn, t, session):
    """``_record`` of ``fn(t)`` for one tensor of this session, written out (``gnp.tanh(t)``,
    ``-t``, ``t.sum()``: the hot path of functions); the same op and node ``_record`` makes."""
    op = _unary_ops.get(id(fn))  # by id, as _binary_op's keys
    if op is None:
        if fn in _CUTS:
            return _record(fn, [t], _UNARY_TREEDEF, session)
        op = _unary_ops[id(fn)] = intern_op(fn, _UNARY_TREEDEF, (None,), (0,))
    return record_single(op, t, None, session)


def record_single(op, t, shapes, session):
    """The node of ``op`` (whose one dynamic input is ``t``, a tensor of this session), with
    ``shapes`` its ``output_avals`` on ``t`` when the caller has them."""
    n1, k1 = t._node, t._index
    if shapes is None:
        aval = n1.avals[k1]
        shapes = graph._aval_cache.get((op.key, id(aval)))
        if shapes is None:
            shapes = graph.output_avals(op, (aval,))
    avals, treedef, all_float, any_float = shapes
    mask, cut = _recorded_by(n1.mask, any_float, session)
    inputs = ((n1, k1),)
    node = Node(op, inputs, avals, mask, session, graph.node_sid(op, mask, inputs, None), n1.leaves)
    node.cut = cut
    if treedef is None:
        return Tensor._make(node, 0)
    return _wrap_outputs(node, treedef, all_float)


_BINARY_TREEDEF = jax.tree_util.tree_structure(((0, 0), {}))
_UNARY_TREEDEF = jax.tree_util.tree_structure(((0,), {}))


def is_recorded(t) -> bool:
    """Whether ``t`` is part of the graph of the tapes recording in this thread."""
    session = graph.local.session
    return session is not None and t._node.session is session and (t._node.mask != 0 or t._node.op is not None)


def check_not_recorded(t, what: str):
    """Raise the clear error for a recorded tensor reaching plain JAX/NumPy code."""
    if is_recorded(t):
        raise _errors.RecordingError(
            f"{what} received a tensor that a GradientTape is recording (shape {t.shape}, dtype {t.dtype}); "
            "plain jax/jnp calls cannot record it, so its gradient would be lost. Use gk.numpy "
            "(import gradkit as gk; gnp = gk.numpy; gnp.sin(x)) or wrap your JAX function with gk.lift(fn), "
            "which records it as one op. To leave the tape on purpose, use gk.stop_gradient(x) or x.numpy()."
        )


def _identity(x):
    return x


def record_identity(node: Node, index: int, mask: int, session, cut=None, source=False) -> Node:
    """A new node equal to ``node``'s output ``index``, recorded by the tapes in ``mask``.

    Gives a Variable a node of its own where a tape first sees it (``source``), and hides
    the path through an assignment from TensorFlow-parity tapes.
    """
    op = _unary_ops.get((_identity, "identity"))
    if op is None:
        op = _unary_ops[(_identity, "identity")] = intern_op(_identity, _UNARY_TREEDEF, (None,), (0,), "identity")
    out = make_node(op, ((node, index),), mask, session)[0]
    out.cut = cut
    if source:
        graph.tag_source(out, session)
    return out


# The kind of a parity read's term: replay differentiates it only along the plan's deltas.
PARITY_TERM = "parity_term"


def _parity_term(source):
    return source - jax.lax.stop_gradient(source)  # zero, with the source's gradient path


def _plus(a, b):
    return a + b


def record_parity_read(current: tuple[Node, int], sources: list[tuple[Node, int]], session) -> tuple[Node, int]:
    """A read of a Variable for TensorFlow-parity tapes: its current value, plus, for each
    ``(source, bits)``, a zero term through the source that only the tapes in ``bits`` record.

    TensorFlow's rule is that a Variable source collects the gradient of every read of it;
    the term gives a parity tape that path without changing the value, and, recorded by
    that tape alone, without adding a path for any other tape that shares the source.
    """
    term_op = intern_op(_parity_term, _UNARY_TREEDEF, (None,), (0,), PARITY_TERM)
    plus_op = intern_op(_plus, args_treedef(2, ()), (None, None), (0, 1), "parity_read")
    for source, bits in sources:
        term = make_node(term_op, ((source, 0),), source.mask & bits & session.active, session)[0]
        node = make_node(plus_op, (current, (term, 0)), (current[0].mask | term.mask) & session.active, session)[0]
        current = (node, 0)
    return current


_call_ops: dict = BoundedDict(bounded.PROGRAMS)


def record_call(fn, input_nodes: list[tuple[Node, int]], session, kind, mask=None) -> Node:
    """Record ``fn(*values)`` over existing nodes (a gradient computed while a tape records),
    for the tapes recording now (or those in ``mask``)."""
    n = len(input_nodes)
    op = _call_ops.get((fn, n, kind))
    if op is None:
        op = _call_ops[(fn, n, kind)] = intern_op(fn, args_treedef(n, ()), (None,) * n, tuple(range(n)), kind)
    if mask is None:
        mask = 0
        for node, _ in input_nodes:
            mask |= node.mask if node.session is session else 0
        mask &= session.active
    return make_node(op, tuple(input_nodes), mask, session)[0]
