"""``tf.scan``, ``tf.map_fn``, ``tf.foldl``, ``tf.foldr`` and ``keras.ops.scan`` inside
``tf.function``: one ``jax.lax.scan`` (``gk.scan``), as TensorFlow builds one loop op.

Their function is then traced once, not once per row, so a loop over a few hundred rows
compiles in about the time of one row (unrolled, XLA's compile time grows steeply with the
rows). The Variables it reads are read as the loop starts; under a tape recording inside the
``tf.function`` the loop is one recorded op over them and over the recorded tensors it closes
over, so their gradients flow. A ``tf.random`` draw folds in the row's index, so each row
draws anew. What one ``jax.lax.scan`` cannot run (a function assigning a Variable, creating
one from a computed value (a layer built at its first call), reading a row's value in Python,
or returning an accumulator of another dtype or shape than it was given) is refused by the
trace, and the caller then loops over the rows in Python, as it does eagerly.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors
from gradkit._core.scan import scan_without_traced_locals as _gk_scan
from gradkit._core.variable import Variable
from gradkit._tape import record
from gradkit._tape.tensor import Tensor

from . import _array, _ordering, _random
from . import _nest as nest
from ._convert import convert, wrap

# What a trace of the function raises where a Python loop over the rows would still run it.
_CANNOT_SCAN = (_errors.GradkitError, TypeError, ValueError, IndexError, jax.errors.JAXTypeError)


def _value(x):
    return x.__gradkit_value__() if isinstance(x, Tensor) else x


def refuse_unknown_length(size, what: str) -> None:
    """A loop over rows needs their count when it is traced: an export's unknown size (a
    ``TensorSpec`` dimension of None, saved by ``tf.saved_model.save``) is refused, saying so."""
    if size is None or isinstance(size, (int, np.integer)):
        return
    raise _errors.GradkitNotImplementedError(
        f"{what} over an axis of unknown size ({size}, a None dimension of the input_signature) cannot be saved: "
        "gradkit needs the number of rows when the function is traced. Give that "
        "dimension a fixed size in the input_signature (save one signature per size you serve), or write the "
        "computation with batched ops over the whole axis instead of a loop over rows."
    )


def compiled_loop(fn, elems, initializer, reverse: bool, kind: str):
    """``kind`` 'map' (``fn(row)`` stacked), 'scan' (each accumulator ``fn(acc, row)`` stacked,
    the first row the start without an initializer) or 'fold' (the last accumulator), over the
    rows of ``elems`` (from the last with ``reverse``) as one ``jax.lax.scan``; None where one
    scan cannot run it."""
    leaves = nest.flatten(elems)
    if not leaves or any(getattr(leaf, "_gradkit_tensor_array", False) for leaf in leaves):
        return None
    try:
        leaves = [convert(leaf) for leaf in leaves]
    except _CANNOT_SCAN:
        return None
    sizes = {leaf.shape[0] if leaf.ndim else None for leaf in leaves}
    for size in sizes:
        refuse_unknown_length(size, f"tf.{'map_fn' if kind == 'map' else kind}")
    if len(sizes) != 1 or None in sizes or not next(iter(sizes)):
        return None  # no rows, a scalar, rows of different counts: the Python loop says so
    n = next(iter(sizes))
    order = list(range(n))[::-1] if reverse else list(range(n))
    first = None
    if kind != "map" and initializer is None:  # the first row visited is the first accumulator
        first = [leaf[order[0]] for leaf in leaves]
        initializer = nest.pack_sequence_as(elems, first)
        order = order[1:]
        if not order:
            return None
    try:
        init = [] if kind == "map" else [convert(v) for v in nest.flatten(initializer)]
    except _CANNOT_SCAN:
        return None
    rows = leaves if order == list(range(n)) else [leaf[np.asarray(order)] for leaf in leaves]
    draws = _random.replaying(op_seeds=False)
    returned = {}

    def step(carry, inputs):
        index, row = inputs
        row = nest.pack_sequence_as(elems, list(wrap(list(row), traced=True)))
        with draws.at(index):
            if kind == "map":
                out = fn(row)
                returned["out"] = out
                return carry, [_array_of(v) for v in nest.flatten(out)]
            acc = fn(nest.pack_sequence_as(initializer, list(wrap(list(carry), traced=True))), row)
        nest.assert_same_structure(initializer, acc, check_types=False)
        # A Python number returned for an accumulator takes the accumulator's dtype, as TensorFlow converts it.
        new = [_array_of(v, like=c) for v, c in zip(nest.flatten(acc), carry)]
        return new, (new if kind == "scan" else None)

    try:
        final, ys = _gk_scan(step, _inputs(init), (np.asarray(order, np.uint32), _inputs(rows)))
    except _CANNOT_SCAN:
        return None
    if kind == "fold":
        return nest.pack_sequence_as(initializer, list(wrap(list(final))))
    ys = list(wrap(list(ys)))
    if first is not None:
        ys = [_array.concat([_array.expand_dims(f, 0), y], 0) for f, y in zip(first, ys)]
    if reverse:
        ys = [_ordering.reverse(y, [0]) for y in ys]
    return nest.pack_sequence_as(returned["out"] if kind == "map" else initializer, ys)


def _inputs(values: list) -> list:
    """The loop's inputs: a tensor a tape records as itself (the scan is then one recorded op over
    it), any other as its array."""
    return [v if isinstance(v, Tensor) and record.is_recorded(v) else _value(v) for v in values]


def _array_of(v, like=None):
    """A loop value as the array one ``jax.lax.scan`` carries (a Python number in ``like``'s dtype)."""
    if isinstance(v, Tensor):
        return v.__gradkit_value__()
    if like is not None and not hasattr(v, "dtype"):
        return jnp.asarray(v, jnp.asarray(like).dtype)
    return jnp.asarray(_value(convert(v)))


def _is_value(v) -> bool:
    return isinstance(v, (Tensor, Variable))


def compiled_pairs(f, init, xs, length: int, reverse: bool):
    """``keras.ops.scan``'s ``carry, y = f(carry, x)`` over ``length`` steps as one ``jax.lax.scan``
    (``(final carry, stacked ys)``, the ys in ``xs``' order also with ``reverse``, as
    ``jax.lax.scan``); None where one scan cannot run it."""
    init_leaves, init_tree = jax.tree_util.tree_flatten(init, is_leaf=_is_value)
    xs_leaves, xs_tree = jax.tree_util.tree_flatten(xs, is_leaf=_is_value)
    try:
        init_leaves = [convert(v) for v in init_leaves]
        xs_leaves = [convert(v) for v in xs_leaves]
    except _CANNOT_SCAN:
        return None
    draws = _random.replaying(op_seeds=False)
    returned = {}

    def step(carry, inputs):
        index, x = inputs
        carry = jax.tree_util.tree_unflatten(init_tree, list(wrap(list(carry), traced=True)))
        x = jax.tree_util.tree_unflatten(xs_tree, list(wrap(list(x), traced=True)))
        with draws.at(index):
            out = f(carry, x)
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise _errors.GradkitTypeError("keras.ops.scan's f must return (carry, y).")
        new, y = out
        leaves, tree = jax.tree_util.tree_flatten(new, is_leaf=_is_value)
        if tree != init_tree:
            raise _errors.GradkitTypeError("keras.ops.scan's f returned a carry of another structure.")
        returned["y"] = y
        ys = jax.tree_util.tree_leaves(y, is_leaf=_is_value)
        return [_array_of(v, like=c) for v, c in zip(leaves, init_leaves)], [_array_of(v) for v in ys]

    indices = np.arange(length, dtype=np.uint32)
    try:
        final, ys = _gk_scan(step, _inputs(init_leaves), (indices, _inputs(xs_leaves)), length=length, reverse=reverse)
    except _CANNOT_SCAN:
        return None
    carry = jax.tree_util.tree_unflatten(init_tree, list(wrap(list(final))))
    y = returned["y"]
    if y is None:
        return carry, None
    return carry, jax.tree_util.tree_unflatten(jax.tree_util.tree_structure(y, is_leaf=_is_value), list(wrap(list(ys))))
