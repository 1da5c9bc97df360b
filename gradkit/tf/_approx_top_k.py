"""``tf.approx_top_k`` and ``tf.math.approx_max_k`` / ``approx_min_k``: XLA's approximate top-k.

TensorFlow compiles these to XLA's ApproxTopK (under ``jit_compile``; its eager CPU kernel takes
only the largest entries along the last axis). gradkit runs ``jax.lax.approx_max_k`` /
``approx_min_k``, the same XLA operation: approximate on a TPU, the exact top-k on a CPU or GPU,
with the same arguments. The gradient scatters the upstream gradient back to the entries
chosen, as TensorFlow's does.

>>> import gradkit.tf as tf
>>> tf.approx_top_k([[1.0, 5.0, 3.0, 4.0]], 2).indices.numpy().tolist()
[[1, 3]]
"""

from __future__ import annotations

import collections

import jax

from gradkit import _errors

from ._convert import call, convert

__all__ = ["approx_max_k", "approx_min_k", "approx_top_k"]

ApproxTopK = collections.namedtuple("ApproxTopK", ["values", "indices"])
_DTYPES = ("float16", "bfloat16", "float32")


def _approx_k(x, *, k, reduction_dimension, recall_target, is_max_k, reduction_input_size_override, aggregate_to_topk):
    select = jax.lax.approx_max_k if is_max_k else jax.lax.approx_min_k
    return tuple(
        select(
            x,
            k,
            reduction_dimension=reduction_dimension,
            recall_target=recall_target,
            reduction_input_size_override=reduction_input_size_override,
            aggregate_to_topk=aggregate_to_topk,
        )
    )


def _empty(x, *, axis):
    shape = list(x.shape)
    shape[axis] = 0
    return jax.numpy.zeros(shape, x.dtype), jax.numpy.zeros(shape, jax.numpy.int32)


def approx_top_k(
    input,  # noqa: A002 - TensorFlow's name
    k,
    reduction_dimension=-1,
    recall_target=0.95,
    is_max_k=True,
    reduction_input_size_override=-1,
    aggregate_to_topk=True,
    name=None,
):
    """``tf.approx_top_k``: ``(values, indices)`` of the ``k`` largest (``is_max_k``) or smallest
    entries along ``reduction_dimension``, sorted."""
    x = convert(input)
    if str(x.dtype) not in _DTYPES:
        raise _errors.InvalidArgumentTypeError(
            f"[gradkit] tf.approx_top_k got a {x.dtype} input; TensorFlow's ApproxTopK takes float16, bfloat16 "
            "and float32. Cast it (tf.cast(x, tf.float32)), or use tf.math.top_k, which takes any real dtype."
        )
    if x.ndim < 1:
        raise _errors.InvalidArgumentValueError(
            f"[gradkit] tf.approx_top_k got an input of shape {list(x.shape)}: it must be >= 1-D, as in TensorFlow."
        )
    axis = int(reduction_dimension)
    if not -x.ndim <= axis < x.ndim:
        raise _errors.InvalidArgumentValueError(
            f"[gradkit] tf.approx_top_k got reduction_dimension={axis} for an input of rank {x.ndim}: it must "
            f"be in [{-x.ndim}, {x.ndim})."
        )
    axis %= x.ndim
    k = int(k)
    if not 0 <= k <= x.shape[axis]:
        raise _errors.InvalidArgumentValueError(
            f"[gradkit] tf.approx_top_k got k={k} for an axis of {x.shape[axis]} entries: input must have at "
            f"least k columns, and k may not be negative, as in TensorFlow."
        )
    if k == 0:
        return ApproxTopK(*call(_empty, x, axis=axis))
    values, indices = call(
        _approx_k,
        x,
        k=k,
        reduction_dimension=axis,
        recall_target=float(recall_target),
        is_max_k=bool(is_max_k),
        reduction_input_size_override=int(reduction_input_size_override),
        aggregate_to_topk=bool(aggregate_to_topk),
    )
    return ApproxTopK(values, indices)


def approx_max_k(
    operand,
    k,
    reduction_dimension=-1,
    recall_target=0.95,
    reduction_input_size_override=-1,
    aggregate_to_topk=True,
    name=None,
):
    """``tf.math.approx_max_k``: ``tf.approx_top_k`` of the largest entries."""
    return approx_top_k(
        operand, k, reduction_dimension, recall_target, True, reduction_input_size_override, aggregate_to_topk
    )


def approx_min_k(
    operand,
    k,
    reduction_dimension=-1,
    recall_target=0.95,
    reduction_input_size_override=-1,
    aggregate_to_topk=True,
    name=None,
):
    """``tf.math.approx_min_k``: ``tf.approx_top_k`` of the smallest entries."""
    return approx_top_k(
        operand, k, reduction_dimension, recall_target, False, reduction_input_size_override, aggregate_to_topk
    )
