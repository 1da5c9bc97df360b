"""``tf.nn``'s elementwise losses and the distributed-training loss helpers:
``log_poisson_loss``, ``weighted_cross_entropy_with_logits``, ``compute_average_loss`` and
``scale_regularization_loss``.

The losses are written as TensorFlow writes them, so their gradients (in every argument,
including at TensorFlow's kinks) are TensorFlow's. gradkit runs on one replica, so the
helpers divide by the global batch size (the per-replica batch by default) and by 1.

>>> import gradkit.tf as tf
>>> float(tf.nn.compute_average_loss([1.0, 2.0, 3.0], global_batch_size=4))
1.5
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors
from gradkit._core.variable import Variable
from gradkit._tape.tensor import Tensor

from . import _distribute, _math, _shape_args
from ._assert_values import assert_non_negative
from ._convert import call, convert


def _same_shape(a, b, names, what):
    if tuple(a.shape) != tuple(b.shape):
        raise _errors.GradkitValueError(
            f"{what} needs {names[0]} and {names[1]} of the same shape, as TensorFlow does, but got shapes "
            f"{tuple(a.shape)} and {tuple(b.shape)}. Reshape one of them first."
        )


def _same_dtype(a, b, names, what):
    if np.dtype(a.dtype) != np.dtype(b.dtype):
        raise _errors.GradkitTypeError(
            f"{what}: {names[0]} is {np.dtype(a.dtype).name} but {names[1]} is {np.dtype(b.dtype).name}; "
            f"TensorFlow takes one dtype for both. Cast one: tf.cast({names[1]}, {names[0]}.dtype)."
        )


def _operand(value, dtype):
    """A Python or NumPy operand converted to ``dtype``, as TensorFlow's operators convert it; a
    tensor keeps its own dtype."""
    if isinstance(value, (Tensor, Variable, jax.Array)):
        return convert(value)
    return convert(np.asarray(value), dtype)


def _log_poisson(targets, log_input, full):
    result = jnp.exp(log_input) - log_input * targets
    if full:
        stirling = targets * jnp.log(targets) - targets + 0.5 * jnp.log(2 * math.pi * targets)
        small = (targets >= 0) & (targets <= 1)
        result = result + jnp.where(small, jnp.zeros_like(targets), stirling)
    return result


def log_poisson_loss(targets, log_input, compute_full_loss=False, name=None):
    """``tf.nn.log_poisson_loss``: ``exp(log_input) - log_input * targets``, plus Stirling's
    approximation of ``log(targets!)`` for targets above 1 with ``compute_full_loss=True``."""
    what = "tf.nn.log_poisson_loss"
    log_input, targets = convert(log_input), convert(targets)
    _same_shape(log_input, targets, ("log_input", "targets"), what)
    _same_dtype(log_input, targets, ("log_input", "targets"), what)
    return call(_log_poisson, targets, log_input, full=bool(compute_full_loss))


def _weighted_logistic(labels, logits, pos_weight):
    # TensorFlow's combined form: (1 - z) * x + (1 + (q - 1) * z) * (log1p(exp(-|x|)) + max(-x, 0)).
    # |x| as x * sign(x): TensorFlow's gradient of abs at 0 is sign(0) = 0 (jnp.abs gives 1).
    rank = max(labels.ndim, pos_weight.ndim)
    labels, logits, pos_weight = (_expand_to(a, rank) for a in (labels, logits, pos_weight))
    log_weight = 1 + (pos_weight - 1) * labels
    softplus_neg = jnp.log1p(jnp.exp(-(logits * jnp.sign(logits)))) + jax.nn.relu(-logits)
    return (1 - labels) * logits + log_weight * softplus_neg


def weighted_cross_entropy_with_logits(labels, logits, pos_weight, name=None):
    """``tf.nn.weighted_cross_entropy_with_logits``: ``sigmoid_cross_entropy_with_logits`` whose
    positive term is weighted by ``pos_weight`` (a number or a tensor broadcasting to the logits)."""
    what = "tf.nn.weighted_cross_entropy_with_logits"
    logits, labels = convert(logits), convert(labels)
    _same_shape(labels, logits, ("labels", "logits"), what)
    _same_dtype(logits, labels, ("logits", "labels"), what)
    pos_weight = _operand(pos_weight, labels.dtype)
    _same_dtype(labels, pos_weight, ("labels", "pos_weight"), what)
    _shape_args.check_broadcasts(pos_weight.shape, logits.shape, what, "pos_weight", "the logits")
    return call(_weighted_logistic, labels, logits, pos_weight)


def _expand_to(x, rank):
    """``x`` with leading axes of size 1 up to ``rank``: TensorFlow's broadcasting, spelled out."""
    return x.reshape((1,) * (rank - x.ndim) + x.shape)


def _average_loss(loss, weight, batch, weight_axis):
    dtype = loss.dtype
    if weight is not None:
        # TensorFlow scales in float32 (scale_losses_by_sample_weight), then casts back.
        weight = weight.astype(jnp.float32)
        if weight_axis == "squeeze":
            weight = jnp.squeeze(weight, -1)
        elif weight_axis == "expand":
            weight = weight[..., None]
        scaled = loss.astype(jnp.float32)
        rank = max(scaled.ndim, weight.ndim)
        scaled, weight = (_expand_to(a, rank) for a in (scaled, weight))
        loss = (scaled * weight).astype(dtype)
    total = jnp.sum(loss)
    batch = batch.astype(total.dtype)
    zero = batch == 0  # div_no_nan, with its zero gradient there
    return jnp.where(zero, jnp.zeros_like(total), total / jnp.where(zero, jnp.ones_like(batch), batch))


def compute_average_loss(per_example_loss, sample_weight=None, global_batch_size=None):
    """``tf.nn.compute_average_loss``: ``sum(per_example_loss * sample_weight) / global_batch_size``.

    ``global_batch_size`` defaults to the loss's first dimension (gradkit runs on one replica);
    a global batch size of 0 gives 0, as TensorFlow's ``div_no_nan``. ``sample_weight`` is
    squeezed or expanded by one trailing axis to the loss's rank, then broadcast, in float32.
    """
    what = "tf.nn.compute_average_loss"
    loss = convert(per_example_loss)
    if len(loss.shape) == 0:
        raise _errors.GradkitValueError(
            f"{what} takes per-example losses of rank 1 or more (one per example), but got a scalar. "
            "Pass the unreduced losses, e.g. a Keras loss built with reduction='none'."
        )
    weight, weight_axis = None, None
    if sample_weight is not None:
        weight = convert(sample_weight)
        w_rank, l_rank = len(weight.shape), len(loss.shape)
        if w_rank != 0:
            weight_axis = "squeeze" if w_rank - l_rank == 1 else "expand" if l_rank - w_rank == 1 else None
        shape = tuple(weight.shape)
        shape = shape[:-1] if weight_axis == "squeeze" else shape + (1,) if weight_axis == "expand" else shape
        try:
            jnp.broadcast_shapes(shape, tuple(loss.shape))
        except ValueError:
            raise _errors.GradkitValueError(
                f"{what}: sample_weight of shape {tuple(weight.shape)} does not broadcast to the losses' shape "
                f"{tuple(loss.shape)}; TensorFlow refuses it too."
            ) from None
    if global_batch_size is None:
        _require_replica_context("compute_average_loss")
        batch = convert(np.int32(loss.shape[0]))
    else:
        batch = convert(global_batch_size)
        if len(batch.shape) != 0:
            raise _errors.GradkitValueError(
                f"{what}: global_batch_size must be a scalar, as TensorFlow requires, but got shape "
                f"{tuple(batch.shape)}."
            )
        if not jnp.issubdtype(batch.dtype, jnp.integer):
            raise _errors.GradkitTypeError(
                f"{what}: global_batch_size must be an integer, as TensorFlow requires, but got dtype "
                f"{np.dtype(batch.dtype).name}. Pass an int: global_batch_size=int(n)."
            )
        # As TensorFlow: an InvalidArgumentError, checked when the value is known (inside
        # tf.function, when the compiled step runs).
        assert_non_negative(batch, message=f"{what}: global_batch_size must be non-negative.")
    return call(_average_loss, loss, weight, batch, weight_axis=weight_axis)


def scale_regularization_loss(regularization_loss):
    """``tf.nn.scale_regularization_loss``: the sum of ``regularization_loss`` (a tensor or a list
    of scalars) divided by the number of replicas, which is 1 in gradkit."""
    _require_replica_context("scale_regularization_loss")
    return _math.truediv(_math.reduce_sum(regularization_loss), 1)


def _require_replica_context(name: str) -> None:
    """TensorFlow's refusal of a per-replica loss computed under ``strategy.scope()`` but outside
    ``strategy.run``: what it would divide by is the replicas' batch, which is not known there."""
    if _distribute.has_strategy() and _distribute.in_cross_replica_context():
        also = ", or pass global_batch_size=" if name == "compute_average_loss" else ""
        raise _errors.GradkitRuntimeError(
            f"You are calling `{name}` in cross replica context, while it was expected to be called in replica "
            f"context (as TensorFlow refuses it). Call it inside the function given to strategy.run{also}."
        )
