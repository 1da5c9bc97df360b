"""More of ``keras.ops``' core: ``associative_scan``, ``custom_gradient`` and ``rearrange`` (einops'
notation).

``associative_scan`` runs Blelloch's parallel prefix scan (as ``jax.lax.associative_scan`` and
Keras' TensorFlow backend do): ``f`` is called about ``2 log2(n)`` times, each on whole slices, so
it must work elementwise along ``axis`` and be associative. Each call is recorded by a tape, so
gradients flow through the scan.

>>> import gradkit.tf as tf
>>> ops = tf.keras.ops
>>> ops.associative_scan(lambda a, b: a + b, tf.constant([1, 2, 3, 4])).numpy().tolist()
[1, 3, 6, 10]
>>> ops.rearrange(tf.zeros((2, 3, 4)), "b h w -> w (b h)").shape
(4, 6)
"""

from __future__ import annotations

import builtins
import re

import jax

from gradkit import _errors
from gradkit._core.variable import Variable
from gradkit._tape.tensor import Tensor

from ... import _array, _custom, _ordering
from .. import functional
from . import dispatch
from .dispatch import keras_op, tensor

NAMES = "associative_scan custom_gradient rearrange"


def _is_leaf(v):
    return isinstance(v, (Tensor, Variable))


def _take(x, start, stop, step, axis):
    index = [builtins.slice(None)] * x.ndim
    index[axis] = builtins.slice(start, stop, step)
    return x[tuple(index)]


def _interleave(a, b, axis):
    """``[a0, b0, a1, b1, ...]`` along ``axis`` (``a`` as long as ``b`` or one longer)."""
    extra = a.shape[axis] - b.shape[axis]
    if extra:
        b = _array.concat([b, _take(a, -1, None, None, axis)], axis)
    shape = list(a.shape)
    shape[axis] *= 2
    out = _array.reshape(_array.stack([a, b], axis=axis + 1), shape)
    return _take(out, 0, -1, None, axis) if extra else out


def associative_scan(f, elems, reverse=False, axis=0):
    """``keras.ops.associative_scan(f, elems, reverse=False, axis=0)``: the inclusive scan of ``elems``
    (a tensor or a nest of tensors of one length along ``axis``) by the associative ``f(a, b)``:
    ``[e0, f(e0, e1), f(f(e0, e1), e2), ...]``; ``reverse`` scans from the end (results in
    ``elems``' order). On the functional API's KerasTensors it records a node, as Keras does."""
    if not callable(f):
        raise _errors.GradkitTypeError(
            f"tf.keras.ops.associative_scan takes a callable f(a, b), but got f={f!r} (Keras raises TypeError)."
        )
    if functional.is_symbolic(elems):
        # Not through keras_op: on tensors, an error raised by the user's f keeps its own message.
        return _symbolic_associative_scan(f, elems, reverse=reverse, axis=axis)
    return _associative_scan(f, elems, reverse, axis)


def _associative_scan(f, elems, reverse=False, axis=0):
    leaves, treedef = jax.tree_util.tree_flatten(elems, is_leaf=_is_leaf)
    leaves = [tensor(v) for v in leaves]
    if not leaves:
        raise _errors.GradkitValueError("tf.keras.ops.associative_scan got no tensors in elems. Pass at least one.")
    axis = int(axis) % leaves[0].ndim if leaves[0].ndim else int(axis)
    lengths = [v.shape[axis] if v.ndim > axis else None for v in leaves]
    if None in lengths or len(set(lengths)) != 1:
        raise _errors.GradkitValueError(
            f"tf.keras.ops.associative_scan takes elems of one length along axis={axis}, but got shapes "
            f"{[tuple(v.shape) for v in leaves]} (Keras raises ValueError)."
        )

    def combine(a, b):
        out = f(jax.tree_util.tree_unflatten(treedef, a), jax.tree_util.tree_unflatten(treedef, b))
        return [tensor(v) for v in jax.tree_util.tree_leaves(out, is_leaf=_is_leaf)]

    def scan(xs):
        n = xs[0].shape[axis]
        if n < 2:
            return xs
        odd = scan(combine([_take(x, 0, -1, 2, axis) for x in xs], [_take(x, 1, None, 2, axis) for x in xs]))
        rest = [_take(x, 2, None, 2, axis) for x in xs]
        even = combine([_take(o, 0, -1, None, axis) for o in odd] if n % 2 == 0 else odd, rest)
        even = [_array.concat([_take(x, 0, 1, None, axis), e], axis) for x, e in zip(xs, even)]
        return [_interleave(e, o, axis) for e, o in zip(even, odd)]

    if reverse:
        leaves = [_ordering.reverse(v, [axis]) for v in leaves]
    out = scan(leaves)
    if reverse:
        out = [_ordering.reverse(v, [axis]) for v in out]
    return jax.tree_util.tree_unflatten(treedef, out)


_symbolic_associative_scan = keras_op(_associative_scan, "associative_scan")


def custom_gradient(f):
    """``keras.ops.custom_gradient(f)``: ``f(*args)`` returns ``(output, grad_fn)``, and the decorated
    function returns ``output`` with ``grad_fn(upstream)`` as its gradient (``tf.custom_gradient``,
    as on Keras' TensorFlow backend; Keras' backend-agnostic ``grad(*args, upstream=None)`` works)."""
    if not callable(f):
        raise _errors.GradkitTypeError(
            f"tf.keras.ops.custom_gradient decorates a function returning (output, grad_fn), but got {f!r}."
        )
    return _custom.custom_gradient(f)


_AXES = re.compile(r"\w+|\(.*?\)")


def _groups(axes):
    return [a[1:-1].split() if a.startswith("(") else [a] for a in axes]


@keras_op
def rearrange(tensor, pattern, **axes_lengths):  # noqa: A002  (Keras' argument name)
    """``keras.ops.rearrange(tensor, pattern, **axes_lengths)``: ``tensor``'s axes rearranged as
    einops' ``pattern`` says (``"b h w c -> b (c h w)"``): reordered, merged by ``(...)`` on the right,
    split by ``(...)`` on the left with the sizes in ``axes_lengths`` (one per group may be left out)."""
    x = dispatch.tensor(tensor)
    sides = re.split(r"\s*->\s*", str(pattern).strip())
    if len(sides) != 2:
        raise _errors.GradkitValueError(
            f"tf.keras.ops.rearrange got pattern={pattern!r}, which has no single '->'. Write it as einops does: "
            "'b h w c -> b c h w'."
        )
    inputs, outputs = (_groups(_AXES.findall(side)) for side in sides)
    if len(inputs) != x.ndim:
        raise _errors.GradkitValueError(
            f"tf.keras.ops.rearrange got pattern={pattern!r}, naming {len(inputs)} input axes, for a tensor of shape "
            f"{tuple(x.shape)}. Name one axis (or one (group)) per dimension."
        )
    sizes = dict(axes_lengths)
    for group, dim in zip(inputs, x.shape):
        unknown = [a for a in group if a not in sizes]
        if len(group) == 1 and unknown:
            sizes[group[0]] = dim
        elif len(unknown) == 1:
            known = 1
            for a in group:
                known *= sizes[a] if a in sizes else 1
            sizes[unknown[0]] = dim // known
        elif unknown:
            raise _errors.GradkitValueError(
                f"tf.keras.ops.rearrange cannot split an axis of size {dim} into {group}: the sizes of {unknown} are "
                "unknown. Pass all but one of them as keyword arguments (h1=2)."
            )
    flat_in = [a for group in inputs for a in group]
    flat_out = [a for group in outputs for a in group]
    if sorted(flat_in) != sorted(flat_out):
        raise _errors.GradkitValueError(
            f"tf.keras.ops.rearrange got pattern={pattern!r}, whose sides name different axes ({flat_in} and "
            f"{flat_out}). Name the same axes on both sides."
        )
    split = [sizes[a] for a in flat_in]
    if split != list(x.shape):
        x = _array.reshape(x, split)
    x = _array.transpose(x, [flat_in.index(a) for a in flat_out])
    merged = []
    for group in outputs:
        size = 1
        for a in group:
            size *= sizes[a]
        merged.append(size)
    return _array.reshape(x, merged)
