"""A proof, read from a graph's program, that its examples do not interact.

``batch_jacobian`` is only meaningful when example ``i`` of the target depends on example
``i`` of the source alone. A random JVP of the whole batch can test that on the values at
hand (``replay.batch_jacobian_program``'s check); this module proves it for every value,
from the structure of the derivative: the JVP program of the graph (``jax.jvp`` of the
target in the source, custom derivative rules included) is walked once per graph
structure, following where the source's batch axis goes. Where every step keeps example
``i`` in slice ``i`` of one axis (elementwise arithmetic, contractions and reductions over
other axes, reshapes that keep the axis, transposes, ...), the target's row ``i`` reads the
source's row ``i`` alone, so the per-example Jacobians are exact without a check.

A step it does not know, or one that mixes examples (a sum over the batch, a slice or sort
along it, a matrix product contracting it), leaves the question open: the random check
decides as before. The walk can only say "proven" or "unknown", never a wrong "proven"
for the primitives it lists.

The per-example algorithm (the graph run on one example at a time) needs more: the values
the derivative reads must themselves be per-example, or the graph run on one example reads
other numbers than the batch's row (``x * sign(sum(x, axis=0))``: its derivative keeps
examples apart, the sign it multiplies by reads the whole batch). With ``primal`` the walk
also follows the source's value, not only its tangent.
"""

from __future__ import annotations

import math

import jax
from jax.extend.core import ClosedJaxpr, Literal

from . import replay

# Where a value's examples are: nowhere (None: it does not depend on the source's tangent),
# along one axis (an int: slice i of that axis depends on example i of the source alone), or
# mixed (MIXED: some slice reads several examples, or the walk cannot tell).
MIXED = "mixed"

_ELEMENTWISE = frozenset(
    """
    abs acos acosh add add_any and asin asinh atan atan2 atanh cbrt ceil clamp complex conj
    convert_element_type copy copy_p cos cosh digamma div eq erf erf_inv erfc exp exp2 expm1
    floor ge gt igamma imag integer_pow is_finite le lgamma log log1p log2 logistic lt max min mul
    ne neg nextafter not one_minus_square or polynomial pow real reduce_precision rem round rsqrt select_n shift_left
    shift_right_arithmetic shift_right_logical sign sin sinh sqrt square stop_gradient sub tan
    tanh xor
    """.split()
)
_REDUCTIONS = frozenset(("reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "reduce_and", "reduce_or"))
_REDUCTIONS_ARG = frozenset(("argmax", "argmin"))
_CUMULATIVE = frozenset(("cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"))
_WINDOWED = frozenset(("reduce_window_sum", "reduce_window_max", "reduce_window_min", "select_and_gather_add"))
# Calls whose body computes their outputs' values. A custom-derivative call is one too: only
# values are followed (the JVP program already holds the derivative's own steps). Names that
# differ across jax versions are all listed: pjit (jax < 0.7) and jit, custom_vjp_call_jaxpr
# (jax 0.6.0) and custom_vjp_call, closed_call and eval_jaxpr (what jax 0.12 stages for it).
_CALLS = frozenset(
    (
        "jit",
        "pjit",
        "closed_call",
        "eval_jaxpr",
        "core_call",
        "remat2",
        "checkpoint",
        "custom_jvp_call",
        "custom_vjp_call",
        "custom_vjp_call_jaxpr",
    )
)
# Where each call keeps its body (custom_vjp_call_jaxpr: fun_jaxpr).
_BODY_PARAMS = ("jaxpr", "call_jaxpr", "fun_jaxpr")


def rows_independent(plan: replay.Plan, leaf_values) -> bool:
    """Whether the target's example ``i`` provably reads the source's example ``i`` alone.

    ``plan`` is a batch Jacobian's plan (one target of shape ``(b, ...)``, one source of shape
    ``(b, ...)``); ``leaf_values`` its leaves' values (only their shapes and dtypes are read).
    """
    return function_rows_independent(plan_target(plan), list(leaf_values), plan.source_avals[0])


def plan_target(plan: replay.Plan):
    """``target(leaf_values, x)``: the batch Jacobian ``plan``'s target as a function of its
    source. The values computed outside the differentiated part are the batch's in the graph
    run on one example as well, so they count as constants."""
    slot = plan.source_slots[0]

    def target(values, x):
        env = plan.forward(values)
        env[slot] = x
        return plan.inside(env, [None])[0]

    return target


def jvp_program(target, args, source, size: int | None = None):
    """The closed jaxpr of ``target(args, x)``'s JVP in ``x`` (inputs: ``args``' leaves, ``x``,
    its tangent), for ``x`` like ``source`` with ``size`` examples; None where none traces."""
    shape = source.shape if size is None else (size, *source.shape[1:])
    aval = jax.ShapeDtypeStruct(shape, source.dtype)

    def tangent_map(values, x, tangent):
        return replay._jvp(lambda x: target(values, x), (x,), (tangent,))[1]

    try:
        return jax.make_jaxpr(tangent_map)(args, aval, aval)
    except (TypeError, ValueError, IndexError):
        return None


def function_rows_independent(target, args, source, primal: bool = False) -> bool:
    """Whether the derivative of ``target(args, x)[i]`` provably reads ``x[i]``'s tangent
    alone, for ``x`` like ``source`` (an array or ShapeDtypeStruct of shape ``(b, ...)``) and
    every value of ``args``. With ``primal``, whether it also reads ``x[i]``'s value alone, so
    that ``target`` run on example ``i`` has the derivative of the batch's row ``i`` (unless it
    reads the batch's size: see ``batch_size_reads``)."""
    b = source.shape[0]
    if b == 1:
        return True
    closed = jvp_program(target, args, source)
    if closed is None:
        return False  # no JVP program to read (the random check decides)
    jaxpr = closed.jaxpr
    labels = [None] * (len(jaxpr.invars) - 2) + [0 if primal else None, 0]
    (out,) = walk(jaxpr, labels, b)
    return out is None or out == 0


def walk(jaxpr, in_labels, b: int, fresh: bool = False) -> list:
    """Each output's label (see ``MIXED``) given each input's, for a batch of ``b`` examples.

    With ``fresh``, an axis of the batch's size that a step creates from values without one
    (``ones_like(x)``: a broadcast) is labelled as if it carried the examples, since in the
    graph run on one example it has size one: a step that would mix examples along it (a sum
    over it) reads the batch's size. Any other step that creates such an axis (``iota``, a
    random draw) counts as mixed.
    """
    labels: dict = dict(zip(jaxpr.invars, in_labels))

    def of(v):
        return None if isinstance(v, Literal) else labels.get(v)

    for eqn in jaxpr.eqns:
        ins = [of(v) for v in eqn.invars]
        if all(label is None for label in ins):
            # Reads nothing of the source's tangent.
            outs = [_created_axis(eqn, v.aval, b) if fresh else None for v in eqn.outvars]
        elif MIXED in ins:
            outs = [MIXED] * len(eqn.outvars)
        else:
            outs = _step(eqn, ins, b, fresh)
        for v, label in zip(eqn.outvars, outs):
            # A label names an axis of the batch's size; anything else counts as mixed.
            if isinstance(label, int) and (label >= len(v.aval.shape) or v.aval.shape[label] != b):
                label = MIXED
            labels[v] = label
    return [of(v) for v in jaxpr.outvars]


def _created_axis(eqn, aval, b: int):
    """The label of an output of a step none of whose inputs carries the examples, under
    ``walk``'s ``fresh``: the one axis of size ``b`` it creates, None if it creates none."""
    shape = getattr(aval, "shape", ())
    if b not in shape:
        return None
    if eqn.primitive.name == "broadcast_in_dim":
        operand = eqn.invars[0].aval.shape
        dims = tuple(eqn.params["broadcast_dimensions"])
        created = [d for d in range(len(shape)) if shape[d] == b and (d not in dims or operand[dims.index(d)] != b)]
        if not created:
            return None
        return created[0] if len(created) == 1 else MIXED
    # Any other step: it creates such an axis where it has more of them than an input has.
    most = max((sum(n == b for n in getattr(v.aval, "shape", ())) for v in eqn.invars), default=0)
    return MIXED if sum(n == b for n in shape) > most else None


def _step(eqn, ins, b: int, fresh: bool = False) -> list:
    """Output labels of one equation some of whose inputs carry the examples (none MIXED)."""
    name, params, n_out = eqn.primitive.name, eqn.params, len(eqn.outvars)
    carried = {label for label in ins if label is not None}
    axis = carried.pop() if len(carried) == 1 else MIXED  # two different axes: mixed
    if axis is MIXED:
        return [MIXED] * n_out
    if name in _ELEMENTWISE:
        return [axis] * n_out
    if name in _CALLS:
        body = next((params[p] for p in _BODY_PARAMS if params.get(p) is not None), None)
        body = body.jaxpr if isinstance(body, ClosedJaxpr) else body
        if body is not None and len(body.invars) == len(ins) and len(body.outvars) == n_out:
            return walk(body, ins, b, fresh)
        return [MIXED] * n_out
    out = _layout_step(name, params, eqn, ins, axis)
    return [out] * n_out


def _layout_step(name, params, eqn, ins, axis):
    """The output label of a single-output step that moves, keeps or contracts axes."""
    if name in _REDUCTIONS or name in _REDUCTIONS_ARG:
        axes = tuple(params["axes"])
        return MIXED if axis in axes else axis - sum(a < axis for a in axes)
    if name in _CUMULATIVE:
        return MIXED if params["axis"] == axis else axis
    if name == "broadcast_in_dim":
        return params["broadcast_dimensions"][axis]
    if name == "transpose":
        return tuple(params["permutation"]).index(axis)
    if name == "squeeze":
        dims = tuple(params["dimensions"])
        return MIXED if axis in dims else axis - sum(d < axis for d in dims)
    if name == "reshape":
        return _reshaped(axis, eqn.invars[0].aval.shape, tuple(params["new_sizes"]), params.get("dimensions"))
    if name == "rev":
        return MIXED if axis in tuple(params["dimensions"]) else axis
    if name == "concatenate":
        return MIXED if params["dimension"] == axis else axis
    if name == "pad":
        if ins[1] is not None:
            return MIXED
        return axis if tuple(params["padding_config"][axis]) == (0, 0, 0) else MIXED
    if name == "slice":
        return _full_slice(axis, eqn.invars[0].aval.shape, params)
    if name == "dot_general":
        return _dot_general(ins, params["dimension_numbers"], eqn.invars)
    if name == "conv_general_dilated":
        return _conv(ins, params)
    if name in _WINDOWED:
        return _windowed(axis, params)
    if name == "sort":
        return MIXED if params["dimension"] == axis else axis
    if name == "split":
        return MIXED if params["axis"] == axis else axis
    if name == "gather":
        return _gather(ins, eqn.invars[0].aval.shape, eqn.invars[1].aval.shape, len(eqn.outvars[0].aval.shape), params)
    if name == "dynamic_slice" and ins[0] is not None:
        # Start indices are clamped: a slice as long as the axis starts at 0.
        return axis if params["slice_sizes"][axis] == eqn.invars[0].aval.shape[axis] else MIXED
    if name == "dynamic_update_slice":
        # An update as long as the axis covers it from 0: row i of the result is row i of one of them.
        return axis if eqn.invars[1].aval.shape[axis] == eqn.invars[0].aval.shape[axis] else MIXED
    return MIXED


def _reshaped(axis, old, new, dimensions):
    """Row-major reshape: the batch axis survives where the sizes before it multiply to the
    same number and it keeps its size; then element ``i`` of it is element ``i`` again."""
    if dimensions is not None:
        return MIXED
    before = math.prod(old[:axis])
    for j in range(len(new)):
        if math.prod(new[:j]) == before and new[j] == old[axis]:
            return j
    return MIXED


def _full_slice(axis, shape, params):
    strides = params.get("strides") or (1,) * len(shape)
    whole = params["start_indices"][axis] == 0 and params["limit_indices"][axis] == shape[axis] and strides[axis] == 1
    return axis if whole else MIXED


def _dot_general(ins, dimension_numbers, invars):
    (lc, rc), (lb, rb) = dimension_numbers
    lhs, rhs = ins
    n_batch = len(lb)
    lhs_free = [d for d in range(len(invars[0].aval.shape)) if d not in lc and d not in lb]
    rhs_free = [d for d in range(len(invars[1].aval.shape)) if d not in rc and d not in rb]
    if lhs is not None and rhs is not None:
        # Both read the examples: only a shared batch dimension pairs example i with example i.
        if lhs in lb and rhs in rb and lb.index(lhs) == rb.index(rhs):
            return lb.index(lhs)
        return MIXED
    if lhs is not None:
        if lhs in lc:
            return MIXED
        return lb.index(lhs) if lhs in lb else n_batch + lhs_free.index(lhs)
    if rhs in rc:
        return MIXED
    return rb.index(rhs) if rhs in rb else n_batch + len(lhs_free) + rhs_free.index(rhs)


def _gather(ins, shape, indices_shape, out_rank, params):
    """Where the operand's and the indices' examples land in the output: both must agree."""
    operand, indices = ins
    dn = params["dimension_numbers"]
    # Output dimensions that are not offsets follow the indices' dimensions in order (the
    # last one, the index vector, excepted).
    by_index = [d for d in range(out_rank) if d not in dn.offset_dims]
    out = set()
    if operand is not None:
        out.add(_gathered_operand_axis(operand, shape, by_index, params))
    if indices is not None:
        # Example i's indices choose which elements output slice i reads.
        out.add(MIXED if indices == len(indices_shape) - 1 else by_index[indices])
    return out.pop() if len(out) == 1 else MIXED


def _gathered_operand_axis(axis, shape, by_index, params):
    """The batch axis of a gather's operand is either one of its batching dimensions (paired
    with a dimension of the indices, so example i is read at index i) or taken whole."""
    dn = params["dimension_numbers"]
    batching = tuple(dn.operand_batching_dims)
    if axis in batching:
        return by_index[int(dn.start_indices_batching_dims[batching.index(axis)])]
    if axis in dn.collapsed_slice_dims or axis in dn.start_index_map or params["slice_sizes"][axis] != shape[axis]:
        return MIXED
    kept = [d for d in range(len(shape)) if d not in dn.collapsed_slice_dims and d not in batching]
    return dn.offset_dims[kept.index(axis)]


def _conv(ins, params):
    """A convolution of examples (the lhs's batch dimension) by a kernel that reads none."""
    lhs, rhs = ins
    dn = params["dimension_numbers"]
    if rhs is not None or lhs != dn.lhs_spec[0] or params["batch_group_count"] != 1:
        return MIXED
    return dn.out_spec[0]


def _windowed(axis, params):
    """Pooling: a window of size 1, stride 1 and no padding along the batch axis keeps it."""
    ones = [
        params["window_dimensions"][axis] == 1,
        params["window_strides"][axis] == 1,
        tuple(params["padding"][axis]) == (0, 0),
        (params.get("base_dilation") or (1,) * (axis + 1))[axis] == 1,
        (params.get("window_dilation") or (1,) * (axis + 1))[axis] == 1,
    ]
    return axis if all(ones) else MIXED
