"""Ops on batches of sequences of different lengths: ``tf.sequence_mask`` and
``tf.reverse_sequence``.

>>> import gradkit.tf as tf
>>> tf.sequence_mask([1, 3], 4).numpy().tolist()
[[True, False, False, False], [True, True, True, False]]
>>> tf.reverse_sequence([[1, 2, 3], [4, 5, 6]], [2, 3], seq_axis=1).numpy().tolist()
[[2, 1, 3], [6, 5, 4]]
"""

from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np

from gradkit import _errors
from gradkit._tape import record

from ._convert import call, convert
from ._shape_utils import static_value


def _sequence_mask(lengths, count, compare_dtype, dtype):
    # TensorFlow's recipe: range(maxlen) < cast(lengths, maxlen's dtype), so float lengths are
    # truncated when maxlen is an integer.
    row = jnp.arange(count, dtype=compare_dtype).reshape((1,) * lengths.ndim + (count,))
    mask = row < lengths.astype(compare_dtype)[..., None]
    return mask if dtype == np.dtype(bool) else mask.astype(dtype)


# A comparison: no gradient in TensorFlow, even for float lengths and a float dtype.
record.cut_by_design(_sequence_mask, "tf.sequence_mask (it has no gradient in TensorFlow)")


def sequence_mask(lengths, maxlen=None, dtype=np.bool_, name=None):
    """``tf.sequence_mask``: ``mask[..., j] = j < lengths[...]``, of shape ``lengths.shape + (maxlen,)``.

    ``maxlen`` defaults to ``max(lengths)`` (0 for no lengths); it sets the result's shape, so it
    (or, without it, ``lengths``) must be known inside ``tf.function``. As in TensorFlow, lengths
    are compared in ``maxlen``'s dtype (float lengths are truncated by an integer ``maxlen``), and
    the mask is cast to ``dtype`` (bool by default). No gradient.
    """
    lengths_arg, lengths = lengths, convert(lengths)
    if maxlen is None:
        value = static_value(lengths_arg)
        if value is None:
            raise _errors.GradkitTypeError(
                "tf.sequence_mask inside tf.function needs maxlen= (a number known when tracing) when the lengths "
                "are traced: the mask's size, max(lengths), sets the result's shape."
            )
        limit = max(value.max(), 0) if value.size else 0
        compare_dtype = np.dtype(lengths.dtype)
    else:
        limit_tensor = convert(maxlen)
        if limit_tensor.ndim != 0:
            raise _errors.GradkitValueError(
                f"tf.sequence_mask: maxlen must be a scalar, as in TensorFlow, but got shape {tuple(limit_tensor.shape)}."
            )
        value = static_value(maxlen)
        if value is None:
            raise _errors.GradkitTypeError(
                "tf.sequence_mask inside tf.function needs maxlen known when tracing (a Python number or a constant): "
                "it sets the result's shape."
            )
        limit, compare_dtype = value.item(), np.dtype(limit_tensor.dtype)
    if limit < 0:
        raise _errors.GradkitValueError(
            f"tf.sequence_mask: maxlen={limit} is negative; TensorFlow requires maxlen >= 0."
        )
    count = math.ceil(limit)  # TensorFlow's range(0, maxlen, 1), also for a float maxlen
    out_dtype = np.dtype(bool if dtype is None else dtype)
    return call(_sequence_mask, lengths, count=int(count), compare_dtype=compare_dtype, dtype=out_dtype)


def _reverse_sequence(x, lengths, seq_axis, batch_axis):
    y = jnp.moveaxis(x, (batch_axis, seq_axis), (0, 1))
    steps = jnp.arange(y.shape[1])[None, :]
    counts = lengths.astype(jnp.int32)[:, None]
    source = jnp.where(steps < counts, counts - 1 - steps, steps)  # (batch, time): where each entry comes from
    source = jnp.broadcast_to(source.reshape(source.shape + (1,) * (y.ndim - 2)), y.shape)
    return jnp.moveaxis(jnp.take_along_axis(y, source, axis=1), (0, 1), (batch_axis, seq_axis))


def reverse_sequence(input, seq_lengths, seq_axis=None, batch_axis=None, name=None):  # noqa: A002
    """``tf.reverse_sequence``: for each ``b`` along ``batch_axis`` (default 0), the first
    ``seq_lengths[b]`` entries along ``seq_axis`` reversed, the rest kept. The gradient is the
    same permutation applied back, as TensorFlow's."""
    x, lengths = convert(input), convert(seq_lengths)
    if seq_axis is None:
        raise _errors.GradkitTypeError(
            "tf.reverse_sequence needs seq_axis= (the axis to reverse), as TensorFlow does; batch_axis defaults to 0."
        )
    seq_axis, batch_axis = int(seq_axis), 0 if batch_axis is None else int(batch_axis)
    if not jnp.issubdtype(lengths.dtype, jnp.integer):
        raise _errors.GradkitTypeError(
            f"tf.reverse_sequence takes integer seq_lengths (int32 or int64), but got {np.dtype(lengths.dtype).name}."
        )
    # TensorFlow takes neither negative axes nor one axis for both.
    if not (0 <= seq_axis < x.ndim and 0 <= batch_axis < x.ndim) or seq_axis == batch_axis:
        raise _errors.GradkitValueError(
            f"tf.reverse_sequence: seq_axis={seq_axis} and batch_axis={batch_axis} must be two different axes in "
            f"[0, {x.ndim}) for an input of shape {tuple(x.shape)}, as TensorFlow requires (no negative axes)."
        )
    if lengths.shape != (x.shape[batch_axis],):
        raise _errors.GradkitValueError(
            f"tf.reverse_sequence: seq_lengths of shape {tuple(lengths.shape)} for a batch axis of size "
            f"{x.shape[batch_axis]}; TensorFlow requires one length per batch entry."
        )
    value = static_value(seq_lengths)
    if value is not None and ((value < 0) | (value > x.shape[seq_axis])).any():
        raise _errors.InvalidArgumentValueError(
            f"tf.reverse_sequence: seq_lengths {value.tolist()} must be in [0, {x.shape[seq_axis]}] (the size of "
            "seq_axis), as TensorFlow requires."
        )
    return call(_reverse_sequence, x, lengths, seq_axis=seq_axis, batch_axis=batch_axis)
