"""``tf.signal.frame`` and its adjoint ``tf.signal.overlap_and_add``.

``frame`` cuts ``frame_length``-sample windows every ``frame_step`` samples along ``axis``
(``1 + (n - frame_length) // frame_step`` of them, none if the signal is shorter; with
``pad_end``, ``ceil(n / frame_step)`` frames, the signal's end padded with ``pad_value``).
``overlap_and_add`` sums frames placed ``frame_step`` apart along the inner axis. Both are one
gather or scatter-add, so their gradients are exact, the gradient in a tensor ``pad_value``
included (TensorFlow's pad gives none there). The lengths and the axis set the result's shape,
so they must be known when ``tf.function`` traces.

>>> import gradkit.tf as tf
>>> tf.signal.frame(tf.range(5), 3, 2, pad_end=True, pad_value=-1).numpy().tolist()
[[0, 1, 2], [2, 3, 4], [4, -1, -1]]
>>> tf.signal.overlap_and_add(tf.ones([3, 4]), 2).numpy().tolist()
[1.0, 1.0, 2.0, 2.0, 2.0, 2.0, 1.0, 1.0]
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from ._convert import call, check_python_value, convert
from ._signal_args import static_int


def _starts(count, step, length):
    """``[count, length]`` sample positions: frame ``i`` covers ``i * step`` to ``i * step + length``."""
    return step * np.arange(count)[:, None] + np.arange(length)[None, :]


def _frame(x, *pad_value, length, step, axis, count, pad_samples):
    if pad_samples:
        shape = list(x.shape)
        shape[axis] = pad_samples
        x = jnp.concatenate([x, jnp.broadcast_to(pad_value[0].astype(x.dtype), shape)], axis=axis)
    if count == 0 or x.shape[axis] == 0:  # jnp.take drops the frame axis of an empty result
        return jnp.zeros((*x.shape[:axis], count, length, *x.shape[axis + 1 :]), x.dtype)
    return jnp.take(x, _starts(count, step, length), axis=axis, indices_are_sorted=True)


def frame(signal, frame_length, frame_step, pad_end=False, pad_value=0, axis=-1, name=None):
    """TensorFlow's ``tf.signal.frame``: ``signal``'s axis ``axis`` becomes two, frames and samples."""
    what = "tf.signal.frame"
    x = convert(signal)
    if x.ndim < 1:
        raise _errors.GradkitValueError(
            f"{what} takes a signal of rank 1 or more, but got a scalar. Frame a vector: tf.reshape(signal, [-1])."
        )
    # TensorFlow's kernels refuse these (a float, a negative length, a zero step) with InvalidArgumentError.
    length = static_int(
        frame_length, what, "frame_length", 0, _errors.InvalidArgumentTypeError, _errors.InvalidArgumentValueError
    )
    step = static_int(
        frame_step, what, "frame_step", 1, _errors.InvalidArgumentTypeError, _errors.InvalidArgumentValueError
    )
    axis = static_int(axis, what, "axis")
    if not -x.ndim <= axis < x.ndim:
        raise _errors.GradkitIndexError(
            f"{what} got axis={axis} for a signal of rank {x.ndim}; it must be in [{-x.ndim}, {x.ndim})."
        )
    axis %= x.ndim
    samples = x.shape[axis]
    if not pad_end:
        count = max(0, 1 + (samples - length) // step)
        return call(_frame, x, length=length, step=step, axis=axis, count=count, pad_samples=0)
    check_python_value(pad_value, x.dtype, what)
    # Python and NumPy values take the signal's dtype; a tensor must have it already.
    tensor = hasattr(pad_value, "dtype") and not isinstance(pad_value, (np.ndarray, np.generic))
    pad = convert(pad_value, None if tensor else x.dtype)
    if np.dtype(pad.dtype) != np.dtype(x.dtype):
        raise _errors.GradkitValueError(
            f"{what} got a pad_value of dtype {np.dtype(pad.dtype).name} for a signal of dtype "
            f"{np.dtype(x.dtype).name}; TensorFlow converts no tensor to another dtype. Cast it: "
            f"tf.cast(pad_value, tf.{np.dtype(x.dtype).name})."
        )
    if pad.ndim != 0:
        raise _errors.GradkitValueError(
            f"{what} takes a scalar pad_value, but got one of shape {tuple(pad.shape)}. Pass a single number."
        )
    count = -(-samples // step)
    pad_samples = max(0, length + step * (count - 1) - samples)
    pads = (pad,) if pad_samples else ()  # an unused pad_value gets no gradient (None), as in TensorFlow
    return call(_frame, x, *pads, length=length, step=step, axis=axis, count=count, pad_samples=pad_samples)


def _overlap_and_add(x, step):
    count, length = x.shape[-2:]
    out_length = max(0, length + step * (count - 1))
    out = jnp.zeros((*x.shape[:-2], out_length), x.dtype)
    return out.at[..., _starts(count, step, length)].add(x)


def overlap_and_add(signal, frame_step, name=None):
    """TensorFlow's ``tf.signal.overlap_and_add``: ``[..., frames, frame_length]`` to ``[..., frame_length
    + frame_step * (frames - 1)]``, frame ``i`` added from sample ``i * frame_step`` on."""
    what = "tf.signal.overlap_and_add"
    x = convert(signal)
    if x.ndim < 2:
        raise _errors.GradkitValueError(
            f"{what} takes frames of rank 2 or more ([..., frames, frame_length]), but got shape "
            f"{tuple(x.shape)}. Add a frames axis: tf.expand_dims(signal, -2)."
        )
    if isinstance(frame_step, (float, np.floating)) or (
        hasattr(frame_step, "dtype") and not jnp.issubdtype(frame_step.dtype, jnp.integer)
    ):
        raise _errors.GradkitValueError(
            f"{what} takes an integer frame_step, as TensorFlow, but got {frame_step!r:.60}. Pass an int."
        )
    step = static_int(frame_step, what, "frame_step", 1, least_error=_errors.InvalidArgumentValueError)
    return call(_overlap_and_add, x, step=step)
