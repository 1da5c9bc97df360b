"""``keras.ops``' core: conversions (``cast``, ``convert_to_tensor``, ``convert_to_numpy``), ``shape``
and ``dtype``, ``stop_gradient``, slices and scatters, and control flow (``cond``, ``while_loop``,
``fori_loop``, ``scan``, ``map``, ``switch``, ``vectorized_map``).

Control flow runs as ``gradkit.tf``'s does: eagerly, and inside ``tf.function`` while its condition
is known, as Python (so a tape records each step and gradients flow through every iteration);
``scan`` follows ``jax.lax.scan``'s contract, ``f(carry, x) -> (carry, y)``, as Keras does.

>>> import gradkit.tf as tf
>>> ops = tf.keras.ops
>>> carry, ys = ops.scan(lambda c, x: (c + x, c * x), 0.0, tf.constant([1.0, 2.0, 3.0]))
>>> float(carry), ys.numpy().tolist(), ops.fori_loop(0, 3, lambda i, v: v * 2.0, 1.0).numpy().item()
(6.0, [0.0, 2.0, 9.0], 8.0)
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors
from gradkit._core.custom import stop_gradient as _stop_gradient
from gradkit._core.variable import Variable
from gradkit._tape.tensor import Tensor

from ... import _array, _branching, _control, _custom, _indexing, _math, _saturate_cast, _scatter
from ..._control_compiled import compiled_pairs
from ..._convert import wrap
from .. import functional
from . import dispatch
from .dispatch import apply, keras_op, tensor
from .dtype_rules import dtype_name, standardize_dtype

NAMES = (
    "cast convert_to_tensor convert_to_numpy is_tensor shape dtype stop_gradient slice slice_update scatter "
    "scatter_update unstack saturate_cast cond while_loop fori_loop scan map switch vectorized_map"
)


@keras_op
def cast(x, dtype):
    """``keras.ops.cast(x, dtype)``: ``x`` in ``dtype`` (a complex number keeps its real part)."""
    return _array.identity(dispatch.cast(x, dtype))


@keras_op
def convert_to_tensor(x, dtype=None, sparse=None, ragged=None):
    """``keras.ops.convert_to_tensor(x, dtype=None, sparse=None, ragged=None)``: ``x`` as a tensor
    (Python ints int32, floats float32, Variables read), cast to ``dtype`` when given."""
    if sparse or ragged:
        raise _errors.GradkitNotImplementedError(
            "tf.keras.ops.convert_to_tensor got sparse=True or ragged=True: gradkit has dense tensors only. "
            "Leave them None."
        )
    return wrap(tensor(x, dtype))


def convert_to_numpy(x):
    """``keras.ops.convert_to_numpy(x)``: ``x``'s value as a NumPy array (not inside ``tf.function``,
    where it has none yet)."""
    if isinstance(x, functional.KerasTensor):
        raise functional._not_a_value(x)
    value = dispatch.convert(x)
    if isinstance(value, Tensor):
        value = value.__gradkit_value__()
    if isinstance(value, jax.core.Tracer):
        raise _errors.GradkitTypeError(
            "tf.keras.ops.convert_to_numpy got a tensor traced inside tf.function, which has no value yet. Call it "
            "outside the function, or keep computing with tensors (tf.keras.ops) inside it."
        )
    return np.array(value)


def is_tensor(x):
    """``keras.ops.is_tensor(x)``: whether ``x`` is a tensor (or a Variable, as TensorFlow counts it)."""
    return isinstance(x, (Tensor, Variable, jax.Array))


def shape(x):
    """``keras.ops.shape(x)``: ``x``'s shape as a tuple of ints (None for an unknown KerasTensor size)."""
    if isinstance(x, functional.KerasTensor):
        return x.shape
    if isinstance(x, Variable):
        return tuple(x.value.shape)
    return tuple(x.shape) if hasattr(x, "shape") else tuple(tensor(x).shape)


def dtype(x):
    """``keras.ops.dtype(x)``: ``x``'s dtype as Keras names it (``'float32'``)."""
    if isinstance(x, functional.KerasTensor):
        return x.dtype
    return dtype_name(tensor(x).dtype)


@keras_op
def stop_gradient(variable):
    """``keras.ops.stop_gradient(variable)``: the value, with no gradient flowing back through it."""
    return wrap(_stop_gradient(tensor(variable)))


@keras_op
def slice(inputs, start_indices, shape):  # noqa: A001
    """``keras.ops.slice(inputs, start_indices, shape)``: the block of ``shape`` at ``start_indices``."""
    return _indexing.slice(tensor(inputs), start_indices, shape)


def _update_slice(x, updates, *starts):
    # TensorFlow's dynamic_update_slice (Keras' on its backend) takes a negative start as 0; jax
    # would count it from the end.
    return jax.lax.dynamic_update_slice(x, updates, [jnp.maximum(s, 0) for s in starts])


@keras_op
def slice_update(inputs, start_indices, updates):
    """``keras.ops.slice_update(inputs, start_indices, updates)``: ``inputs`` with the block at
    ``start_indices`` replaced by ``updates`` (differentiable in both)."""
    x = tensor(inputs)
    updates = tensor(updates, x.dtype)
    starts = [tensor(s, "int32") for s in start_indices]
    return apply(_update_slice, x, updates, *starts)


@keras_op
def scatter(indices, values, shape):
    """``keras.ops.scatter(indices, values, shape)``: zeros of ``shape`` with ``values`` added at
    ``indices`` (``tf.scatter_nd``)."""
    return _scatter.scatter_nd(tensor(indices), tensor(values), [int(d) for d in shape])


@keras_op
def scatter_update(inputs, indices, updates, reduction=None):
    """``keras.ops.scatter_update(inputs, indices, updates, reduction=None)``: ``inputs`` with the
    entries at ``indices`` replaced by ``updates`` (``tf.tensor_scatter_nd_update``)."""
    x = tensor(inputs)
    if reduction is None:
        return _scatter.tensor_scatter_nd_update(x, tensor(indices), tensor(updates, x.dtype))
    how = _REDUCTIONS.get(reduction)
    if how is None:
        raise _errors.GradkitValueError(
            f"Unsupported reduction: {reduction!r} (Keras raises ValueError). tf.keras.ops.scatter_update takes "
            "reduction=None, 'add', 'max', 'min' or 'mul'."
        )
    # Each as Keras' TensorFlow backend: tensor_scatter_nd_add / _max / _min, and for 'mul' each
    # entry times every update at its index.
    return _scatter._scatter(x, tensor(indices), tensor(updates, x.dtype), how, "tf.keras.ops.scatter_update")


_REDUCTIONS = {"add": "add", "max": "max", "min": "min", "mul": "multiply"}


@keras_op
def unstack(x, num=None, axis=0):
    """``keras.ops.unstack(x, num=None, axis=0)``: the slices of ``x`` along ``axis``, as a list."""
    return _array.unstack(tensor(x), num=num, axis=int(axis))


@keras_op
def saturate_cast(x, dtype):
    """``keras.ops.saturate_cast(x, dtype)``: ``x`` clipped to ``dtype``'s range, then cast."""
    return _saturate_cast.saturate_cast(tensor(x), standardize_dtype(dtype))


def cond(pred, true_fn, false_fn):
    """``keras.ops.cond(pred, true_fn, false_fn)``: ``true_fn()`` if ``pred`` else ``false_fn()`` (a Python
    bool picks directly)."""
    if isinstance(pred, (bool, np.bool_)):
        return true_fn() if pred else false_fn()
    return _control.cond(tensor(pred), true_fn, false_fn)


def while_loop(cond, body, loop_vars, maximum_iterations=None):
    """``keras.ops.while_loop(cond, body, loop_vars, maximum_iterations=None)``: ``loop_vars = body(*loop_vars)``
    while ``cond(*loop_vars)`` (a single loop variable may be given bare); at most ``maximum_iterations``."""
    is_tuple = isinstance(loop_vars, (tuple, list))
    state = tuple(loop_vars) if is_tuple else (loop_vars,)

    def step(*args):
        out = body(*args)
        return tuple(out) if is_tuple else (out,)

    out = _control.while_loop(cond, step, state, maximum_iterations=maximum_iterations)
    return tuple(out) if is_tuple else out[0]


def fori_loop(lower, upper, body_fun, init_val):
    """``keras.ops.fori_loop(lower, upper, body_fun, init_val)``: ``val = body_fun(i, val)`` for ``i`` from
    ``lower`` to ``upper - 1``."""
    return _control.while_loop(lambda i, val: i < upper, lambda i, val: (i + 1, body_fun(i, val)), (lower, init_val))[1]


def _leading(x):
    return [x[i] for i in range(x.shape[0])]


def scan(f, init, xs=None, length=None, reverse=False, unroll=1):
    """``keras.ops.scan(f, init, xs=None, length=None, reverse=False, unroll=1)``: ``jax.lax.scan``'s
    contract: ``carry, y = f(carry, x)`` for each ``x`` along ``xs``' first axis (``length`` steps
    of ``x = None`` without ``xs``), giving ``(carry, stacked ys)``; ``reverse`` scans from the end
    (the ys stay in ``xs``' order)."""
    if not callable(f):
        raise _errors.GradkitTypeError(f"tf.keras.ops.scan takes a callable f, but got {f!r} (Keras raises TypeError).")
    if not isinstance(unroll, bool) and (not isinstance(unroll, int) or unroll < 1):
        raise _errors.GradkitValueError(
            f"tf.keras.ops.scan got unroll={unroll!r}: it must be a positive int or a bool (Keras raises ValueError)."
        )
    if xs is None and length is None:
        raise _errors.GradkitValueError(
            "tf.keras.ops.scan got neither xs nor length: pass xs to scan over, or length= for that many steps."
        )
    leaves, treedef = jax.tree_util.tree_flatten(xs, is_leaf=lambda v: isinstance(v, (Tensor, Variable)))
    leaves = [tensor(v) for v in leaves]
    n = int(length) if length is not None else int(leaves[0].shape[0])
    if not _control.executing_eagerly() and n:  # inside tf.function: one jax.lax.scan where it can be
        compiled = compiled_pairs(f, init, xs, n, bool(reverse))
        if compiled is not None:
            return compiled
    rows = [_leading(v) for v in leaves]
    order = range(n - 1, -1, -1) if reverse else range(n)
    carry, ys = init, [None] * n
    for i in order:
        x = None if xs is None else jax.tree_util.tree_unflatten(treedef, [r[i] for r in rows])
        carry, ys[i] = f(carry, x)
    if not n or ys[0] is None:
        return carry, None
    flat = [jax.tree_util.tree_flatten(y, is_leaf=lambda v: isinstance(v, (Tensor, Variable)))[0] for y in ys]
    structure = jax.tree_util.tree_structure(ys[0], is_leaf=lambda v: isinstance(v, (Tensor, Variable)))
    stacked = [_array.stack([tensor(v) for v in column]) for column in zip(*flat)]
    return carry, jax.tree_util.tree_unflatten(structure, stacked)


def map(f, xs):  # noqa: A001
    """``keras.ops.map(f, xs)``: ``f`` of each slice along ``xs``' first axis, stacked."""
    return _control.map_fn(f, xs)


def switch(index, branches, *operands):
    """``keras.ops.switch(index, branches, *operands)``: ``branches[index](*operands)``, ``index`` clipped
    to the branches' range."""
    index = _math.clip_by_value(tensor(index, "int32"), 0, len(branches) - 1)
    return _branching.switch_case(index, [lambda b=b: b(*operands) for b in branches])


def vectorized_map(function, elements):
    """``keras.ops.vectorized_map(function, elements)``: ``function`` of each slice along the first axis,
    vectorized (one recorded op)."""
    return _custom.vectorized_map(function, elements)
