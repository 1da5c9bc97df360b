"""``tf.quantization``'s simulated quantization: fake quantization (``fake_quant_with_min_max_*``)
and ``quantize_and_dequantize_v2``, the ops quantization-aware training puts in a float model.

Each rounds its input to a grid of ``2**num_bits`` levels and back to floats, as TensorFlow's
kernels compute it, in the same float32 steps, so to the bit. The exception is an input whose
scaled value lies within rounding of half-way between two levels: gradkit takes the upper level,
and TensorFlow's compiled kernels take either (about 1 input in 20,000 on an 8-bit grid and 1 in
1,500 on a 16-bit one, in a comparison of random inputs). Rounding has derivative 0 almost
everywhere; the gradients are TensorFlow's straight-through ones instead: the upstream gradient
passes unchanged where the input lies inside the range and is 0 outside it, and the fake-quant
ops with tensor ``min``/``max`` give ``min`` the gradient of the inputs below the range and ``max``
those above it, so the range itself trains. They are defined as JVPs (linear in the tangents), so
forward mode, reverse mode and jax transforms all see the same rule.

>>> import gradkit.tf as tf
>>> x = tf.constant([-7.0, -1.0, 0.3, 2.0, 9.0])
>>> tf.quantization.fake_quant_with_min_max_args(x, min=-6.0, max=6.0, num_bits=4).numpy().tolist()
[-6.400000095367432, -0.800000011920929, 0.0, 2.4000000953674316, 5.599999904632568]
>>> with tf.GradientTape() as tape:
...     tape.watch(x)
...     y = tf.reduce_sum(tf.quantization.fake_quant_with_min_max_args(x, min=-6.0, max=6.0))
>>> tape.gradient(y, x).numpy().tolist()
[0.0, 1.0, 1.0, 1.0, 0.0]
"""

from __future__ import annotations

import collections
import functools

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from ._convert import call, convert, known_value

__all__ = [
    "fake_quant_with_min_max_args",
    "fake_quant_with_min_max_args_gradient",
    "fake_quant_with_min_max_vars",
    "fake_quant_with_min_max_vars_gradient",
    "fake_quant_with_min_max_vars_per_channel",
    "fake_quant_with_min_max_vars_per_channel_gradient",
    "quantize_and_dequantize",
    "quantize_and_dequantize_v2",
]

FakeQuantWithMinMaxVarsGradient = collections.namedtuple(
    "FakeQuantWithMinMaxVarsGradient", ["backprops_wrt_input", "backprop_wrt_min", "backprop_wrt_max"]
)
FakeQuantWithMinMaxVarsPerChannelGradient = collections.namedtuple(
    "FakeQuantWithMinMaxVarsPerChannelGradient", ["backprops_wrt_input", "backprop_wrt_min", "backprop_wrt_max"]
)


# ---------------------------------------------------------------------------------------------
# Fake quantization: an affine grid whose zero point is nudged so that 0.0 is exactly on it.


def _round_half_away(x):
    """C's ``round`` (half away from zero), exact where ``floor(x + 0.5)`` rounds ``x + 0.5`` up."""
    floor = jnp.floor(x)
    return jnp.where(x - floor >= 0.5, floor + 1, floor)


def _nudge(low, high, quant_min: int, quant_max: int):
    """TensorFlow's ``Nudge``: the range moved so that 0.0 falls on a grid point, in float32.

    Returns ``(nudged_min, nudged_max, scale, degenerate)``; ``degenerate`` marks ``min == max == 0``,
    which TensorFlow's kernels map to 0 with the gradient passing through.
    """
    qmin, qmax = np.float32(quant_min), np.float32(quant_max)
    # XLA rewrites divisions by a constant (into a product with its reciprocal) and of a quotient
    # (low / (a / b) into low * b / a), which round differently from the kernel's float32 steps;
    # behind barriers the divisor is no constant and the scale no quotient.
    steps, high = jax.lax.optimization_barrier((jnp.full(jnp.shape(high), qmax - qmin, jnp.float32), high))
    scale = jax.lax.optimization_barrier((high - low) / steps)
    zero_from_min = qmin - low / scale
    zero_point = jnp.where(
        zero_from_min < qmin, qmin, jnp.where(zero_from_min > qmax, qmax, _round_half_away(zero_from_min))
    )
    degenerate = (low == 0) & (high == 0)
    return (qmin - zero_point) * scale, (qmax - zero_point) * scale, scale, degenerate


def _fake_quant_value(x, low, high, quant_min, quant_max):
    nudged_min, nudged_max, scale, degenerate = _nudge(low, high, quant_min, quant_max)
    clamped = jnp.maximum(jnp.minimum(x, nudged_max), nudged_min)
    # Levels counted from 0 (the nudged zero point is a whole number of steps), as TensorFlow's
    # compiled kernels round: an input exactly half-way between two levels goes up.
    out = jnp.floor(clamped * (np.float32(1) / scale) + np.float32(0.5)) * scale
    return jnp.where(degenerate, jnp.zeros_like(out), out)


def _fake_quant_masks(x, low, high, quant_min, quant_max):
    """Where the gradient goes: to the input inside the nudged range, to min below, to max above."""
    nudged_min, nudged_max, _, degenerate = _nudge(low, high, quant_min, quant_max)
    inside = ((x >= nudged_min) & (x <= nudged_max)) | degenerate
    below = (x < nudged_min) & ~degenerate
    above = (x > nudged_max) & ~degenerate
    return inside, below, above


@functools.partial(jax.custom_jvp, nondiff_argnums=(3, 4))
def _fake_quant(x, low, high, quant_min, quant_max):
    return _fake_quant_value(x, low, high, quant_min, quant_max)


@_fake_quant.defjvp
def _fake_quant_jvp(quant_min, quant_max, primals, tangents):
    x, low, high = primals
    dx, dlow, dhigh = tangents
    inside, below, above = _fake_quant_masks(x, low, high, quant_min, quant_max)
    zero = jnp.zeros_like(x)
    tangent = jnp.where(inside, dx, zero) + jnp.where(below, dlow, zero) + jnp.where(above, dhigh, zero)
    return _fake_quant(x, low, high, quant_min, quant_max), tangent


def _fake_quant_op(x, low, high, *, quant_min, quant_max):
    # One range per element (explicitly broadcast: a per-channel range has a lower rank).
    low, high = jnp.broadcast_to(low, x.shape), jnp.broadcast_to(high, x.shape)
    return _fake_quant(x, low, high, quant_min, quant_max)


def _fake_quant_backprops_op(gradients, x, low, high, *, quant_min, quant_max, reduce_axes):
    low, high = jnp.broadcast_to(low, x.shape), jnp.broadcast_to(high, x.shape)
    inside, below, above = _fake_quant_masks(x, low, high, quant_min, quant_max)
    zero = jnp.zeros_like(gradients)
    return (
        jnp.where(inside, gradients, zero),
        jnp.sum(jnp.where(below, gradients, zero), axis=reduce_axes),
        jnp.sum(jnp.where(above, gradients, zero), axis=reduce_axes),
    )


def _quant_range(num_bits, narrow_range, what: str) -> tuple[int, int]:
    if isinstance(num_bits, bool) or not isinstance(num_bits, (int, np.integer)) or not 2 <= num_bits <= 16:
        raise _errors.InvalidArgumentValueError(
            f"[gradkit] tf.quantization.{what} got num_bits={num_bits!r}: num_bits must be between 2 and 16, "
            "inclusive (TensorFlow's limit for fake quantization). For wider grids use "
            "tf.quantization.quantize_and_dequantize_v2."
        )
    return (1 if narrow_range else 0), (1 << int(num_bits)) - 1


def _float32_input(x, what: str, role: str = "inputs"):
    x = convert(x)
    if x.dtype != jnp.float32:
        raise _errors.InvalidArgumentValueError(
            f"[gradkit] tf.quantization.{what} got {role} of dtype {np.dtype(x.dtype).name}: TensorFlow's fake-quant kernels "
            "take float32 only. Cast first: tf.cast(x, tf.float32)."
        )
    return x


def _check_args_range(low, high, what: str) -> tuple[float, float]:
    low, high = float(np.float32(low)), float(np.float32(high))
    if not low < high:
        raise _errors.InvalidArgumentValueError(
            f"[gradkit] tf.quantization.{what} got min={low} and max={high}: min has to be smaller than max. "
            "Give a range with min < max (0 must lie inside it for an exact zero)."
        )
    return low, high


def fake_quant_with_min_max_args(inputs, min=-6, max=6, num_bits=8, narrow_range=False, name=None):  # noqa: A002
    """``tf.quantization.fake_quant_with_min_max_args``: float32 ``inputs`` rounded to the grid of
    ``2**num_bits`` levels (``2**num_bits - 1`` with ``narrow_range``) over ``[min, max]``, the range
    nudged so that 0.0 is a level; values outside clamp to its ends.

    The gradient passes through inside the nudged range and is 0 outside, as TensorFlow's.
    """
    quant_min, quant_max = _quant_range(num_bits, narrow_range, "fake_quant_with_min_max_args")
    low, high = _check_args_range(min, max, "fake_quant_with_min_max_args")
    x = _float32_input(inputs, "fake_quant_with_min_max_args")
    return call(_fake_quant_op, x, np.float32(low), np.float32(high), quant_min=quant_min, quant_max=quant_max)


def fake_quant_with_min_max_args_gradient(
    gradients,
    inputs,
    min=-6,  # noqa: A002
    max=6,  # noqa: A002
    num_bits=8,
    narrow_range=False,
    name=None,
):
    """``tf.quantization.fake_quant_with_min_max_args_gradient``: ``gradients`` where ``inputs`` lies
    inside the nudged range of ``fake_quant_with_min_max_args(inputs, min, max, ...)``, 0 elsewhere."""
    what = "fake_quant_with_min_max_args_gradient"
    quant_min, quant_max = _quant_range(num_bits, narrow_range, what)
    low, high = _check_args_range(min, max, what)
    x = _float32_input(inputs, what)
    g = _float32_input(gradients, what, "gradients")
    _same_shape(g, x, what)
    inside, _, _ = call(
        _fake_quant_backprops_op,
        g,
        x,
        np.float32(low),
        np.float32(high),
        quant_min=quant_min,
        quant_max=quant_max,
        reduce_axes=None,
    )
    return inside


def _same_shape(gradients, x, what: str) -> None:
    if tuple(gradients.shape) != tuple(x.shape):
        raise _errors.InvalidArgumentValueError(
            f"[gradkit] tf.quantization.{what} got gradients of shape {tuple(gradients.shape)} and inputs of shape "
            f"{tuple(x.shape)}: gradient and input must be the same size (the upstream gradient of the op's output)."
        )


def _range_tensors(low, high, x, what: str, per_channel: bool):
    low = _float32_input(low, what, "min")
    high = _float32_input(high, what, "max")
    if per_channel:
        if x.ndim == 0:
            raise _errors.InvalidArgumentValueError(
                f"[gradkit] tf.quantization.{what} got a scalar input: it quantizes each channel of the last "
                "axis with its own range, so inputs need at least one axis. For one range use "
                "tf.quantization.fake_quant_with_min_max_vars."
            )
        depth = x.shape[-1]
        for role, value in (("min", low), ("max", high)):
            if value.ndim != 1 or value.shape[0] != depth:
                raise _errors.InvalidArgumentValueError(
                    f"[gradkit] tf.quantization.{what} got {role} of shape {tuple(value.shape)}: {role} has incorrect "
                    f"size, expected a vector of {depth} (the size of the inputs' last axis, one per channel)."
                )
    else:
        for role, value in (("min", low), ("max", high)):
            if value.ndim != 0:
                raise _errors.InvalidArgumentValueError(
                    f"[gradkit] tf.quantization.{what} got {role} of shape {tuple(value.shape)}: `{role}` must be "
                    "rank 0 (one range for the whole tensor). For one range per channel use "
                    "tf.quantization.fake_quant_with_min_max_vars_per_channel."
                )
    return low, high


def fake_quant_with_min_max_vars(inputs, min, max, num_bits=8, narrow_range=False, name=None):  # noqa: A002
    """``tf.quantization.fake_quant_with_min_max_vars``: ``fake_quant_with_min_max_args`` with the
    range given as float32 scalar tensors (Variables, typically), which get gradients: ``min`` the
    sum of the upstream gradients of the inputs below the nudged range, ``max`` of those above it.
    """
    what = "fake_quant_with_min_max_vars"
    quant_min, quant_max = _quant_range(num_bits, narrow_range, what)
    x = _float32_input(inputs, what)
    low, high = _range_tensors(min, max, x, what, per_channel=False)
    return call(_fake_quant_op, x, low, high, quant_min=quant_min, quant_max=quant_max)


def fake_quant_with_min_max_vars_per_channel(inputs, min, max, num_bits=8, narrow_range=False, name=None):  # noqa: A002
    """``tf.quantization.fake_quant_with_min_max_vars_per_channel``: ``fake_quant_with_min_max_vars``
    with one range per channel of the last axis (``min`` and ``max`` of shape ``[d]``)."""
    what = "fake_quant_with_min_max_vars_per_channel"
    quant_min, quant_max = _quant_range(num_bits, narrow_range, what)
    x = _float32_input(inputs, what)
    low, high = _range_tensors(min, max, x, what, per_channel=True)
    return call(_fake_quant_op, x, low, high, quant_min=quant_min, quant_max=quant_max)


def _vars_gradient(gradients, inputs, low, high, num_bits, narrow_range, what, per_channel):
    quant_min, quant_max = _quant_range(num_bits, narrow_range, what)
    x = _float32_input(inputs, what)
    g = _float32_input(gradients, what, "gradients")
    _same_shape(g, x, what)
    low, high = _range_tensors(low, high, x, what, per_channel=per_channel)
    reduce_axes = tuple(range(x.ndim - 1)) if per_channel else None
    return call(
        _fake_quant_backprops_op, g, x, low, high, quant_min=quant_min, quant_max=quant_max, reduce_axes=reduce_axes
    )


def fake_quant_with_min_max_vars_gradient(gradients, inputs, min, max, num_bits=8, narrow_range=False, name=None):  # noqa: A002
    """``tf.quantization.fake_quant_with_min_max_vars_gradient``: the three gradients of
    ``fake_quant_with_min_max_vars`` for upstream ``gradients``, as a named tuple
    ``(backprops_wrt_input, backprop_wrt_min, backprop_wrt_max)``."""
    parts = _vars_gradient(
        gradients, inputs, min, max, num_bits, narrow_range, "fake_quant_with_min_max_vars_gradient", False
    )
    return FakeQuantWithMinMaxVarsGradient(*parts)


def fake_quant_with_min_max_vars_per_channel_gradient(
    gradients,
    inputs,
    min,  # noqa: A002
    max,  # noqa: A002
    num_bits=8,
    narrow_range=False,
    name=None,
):
    """``tf.quantization.fake_quant_with_min_max_vars_per_channel_gradient``: the three gradients of
    ``fake_quant_with_min_max_vars_per_channel``; those of ``min`` and ``max`` have one entry per channel."""
    what = "fake_quant_with_min_max_vars_per_channel_gradient"
    parts = _vars_gradient(gradients, inputs, min, max, num_bits, narrow_range, what, True)
    return FakeQuantWithMinMaxVarsPerChannelGradient(*parts)


# ---------------------------------------------------------------------------------------------
# quantize_and_dequantize: a symmetric grid scaled so that the range's larger side fills it.


def _qdq_value(x, low, high, *, signed, num_bits, range_given, half_up, narrow_range, axis):
    dtype = x.dtype
    if not range_given:
        reduce_axes = None if axis is None else tuple(a for a in range(x.ndim) if a != axis)
        low = jnp.min(x, axis=reduce_axes, keepdims=axis is not None)
        high = jnp.max(x, axis=reduce_axes, keepdims=axis is not None)
    if signed:
        quant_low = -(1 << (num_bits - 1)) + (1 if narrow_range else 0)
        quant_high = (1 << (num_bits - 1)) - 1
    else:
        quant_low, quant_high = 0, (1 << num_bits) - 1
    quant_low, quant_high = np.asarray(quant_low, dtype), np.asarray(quant_high, dtype)
    largest = np.asarray(jnp.finfo(dtype).max, dtype)
    # The scale that maps the range's side nearer to its end of the grid; 0 stays 0.
    from_low = jnp.where(quant_low * low > 0, quant_low / low, largest)
    from_high = jnp.where(quant_high * high > 0, quant_high / high, largest)
    use_low = from_low < from_high
    scale = jnp.where(use_low, from_low, from_high)
    inverse_scale = jnp.where(use_low, low / quant_low, high / quant_high)
    if range_given:
        low = jnp.where(use_low, low, quant_low * inverse_scale)
        high = jnp.where(use_low, quant_high * inverse_scale, high)
        x = jnp.maximum(jnp.minimum(x, high), low)
    scaled = x * scale
    rounded = jnp.floor(scaled + np.asarray(0.5, dtype)) if half_up else jnp.round(scaled)
    return rounded * inverse_scale


@functools.partial(jax.custom_jvp, nondiff_argnums=(3, 4, 5, 6, 7, 8, 9))
def _qdq(x, low, high, signed, num_bits, range_given, half_up, narrow_range, axis, pass_through):
    return _qdq_value(
        x,
        low,
        high,
        signed=signed,
        num_bits=num_bits,
        range_given=range_given,
        half_up=half_up,
        narrow_range=narrow_range,
        axis=axis,
    )


@_qdq.defjvp
def _qdq_jvp(signed, num_bits, range_given, half_up, narrow_range, axis, pass_through, primals, tangents):
    x, low, high = primals
    dx = tangents[0]
    out = _qdq(x, low, high, signed, num_bits, range_given, half_up, narrow_range, axis, pass_through)
    if pass_through:
        return out, dx
    # TensorFlow's gradient masks with the min and max given, even where the range was computed.
    inside = (x >= low) & (x <= high)
    return out, jnp.where(inside, dx, jnp.zeros_like(dx))


def _qdq_op(x, low, high, *, signed, num_bits, range_given, half_up, narrow_range, axis, pass_through):
    if axis is not None and low.ndim == 1:
        shape = [1] * x.ndim
        shape[axis] = -1
        low, high = low.reshape(shape), high.reshape(shape)
    return _qdq(x, low, high, signed, num_bits, range_given, half_up, narrow_range, axis, pass_through)


_ROUND_MODES = {"HALF_TO_EVEN": False, "HALF_UP": True}


def _quantize_and_dequantize(
    input,
    input_min,
    input_max,
    signed_input,
    num_bits,
    range_given,
    round_mode,
    narrow_range,
    axis,
    what,
    pass_through,  # noqa: A002
):
    x = convert(input)
    if not jnp.issubdtype(x.dtype, jnp.floating):
        raise _errors.InvalidArgumentValueError(
            f"[gradkit] tf.quantization.{what} got input of dtype {np.dtype(x.dtype).name}: it takes bfloat16, float16, "
            "float32 or float64 (TensorFlow's list). Cast first: tf.cast(x, tf.float32)."
        )
    limit = 62 if signed_input else 63
    if isinstance(num_bits, bool) or not isinstance(num_bits, (int, np.integer)) or not 0 < num_bits < limit:
        raise _errors.InvalidArgumentValueError(
            f"[gradkit] tf.quantization.{what} got num_bits={num_bits!r}: num_bits is out of range with "
            f"signed_input={bool(signed_input)} (it must be between 1 and {limit - 1})."
        )
    if round_mode not in _ROUND_MODES:
        raise _errors.InvalidArgumentValueError(
            f"[gradkit] tf.quantization.{what} got round_mode={round_mode!r}: it is one of 'HALF_TO_EVEN' "
            "(ties to the even level, the default) or 'HALF_UP' (ties upward)."
        )
    if axis is not None:
        if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
            raise _errors.InvalidArgumentValueError(
                f"[gradkit] tf.quantization.{what} got axis={axis!r} for an input of rank {x.ndim}: the axis to "
                f"quantize per slice must lie in [-{x.ndim}, {x.ndim}). Use axis=None for one range."
            )
        axis = int(axis) % x.ndim
    low, high = convert(input_min, x.dtype), convert(input_max, x.dtype)
    depth = None if axis is None else x.shape[axis]
    for role, value in (("input_min", low), ("input_max", high)):
        per_slice = axis is not None and value.ndim == 1 and value.shape[0] == depth
        # Per slice, a computed range may come with one scalar min and max for the gradient's mask.
        fits = value.ndim == 0 if axis is None else per_slice or (value.ndim == 0 and not range_given)
        if not fits:
            wanted = "a scalar" if axis is None else f"a vector of {depth} (one per slice along axis {axis})"
            raise _errors.InvalidArgumentValueError(
                f"[gradkit] tf.quantization.{what} got {role} of shape {tuple(value.shape)}: it must be {wanted}."
            )
    if range_given:
        known_low, known_high = known_value(low), known_value(high)
        if known_low is not None and known_high is not None and np.any(known_low > known_high):
            raise _errors.InvalidArgumentValueError(
                f"[gradkit] tf.quantization.{what} got input_min {known_low.tolist()} > input_max "
                f"{known_high.tolist()} with range_given=True: invalid range. Give min <= max, or "
                "range_given=False to take the range from the input."
            )
    return call(
        _qdq_op,
        x,
        low,
        high,
        signed=bool(signed_input),
        num_bits=int(num_bits),
        range_given=bool(range_given),
        half_up=_ROUND_MODES[round_mode],
        narrow_range=bool(narrow_range),
        axis=axis,
        pass_through=pass_through,
    )


def quantize_and_dequantize_v2(
    input,  # noqa: A002
    input_min,
    input_max,
    signed_input=True,
    num_bits=8,
    range_given=False,
    round_mode="HALF_TO_EVEN",
    name=None,
    narrow_range=False,
    axis=None,
):
    """``tf.quantization.quantize_and_dequantize_v2``: ``input`` scaled onto a grid of ``num_bits``
    integers (signed, or from 0), rounded and scaled back.

    The range is ``[input_min, input_max]`` with ``range_given=True`` (the input clamped to it) or
    the input's own minimum and maximum (per slice along ``axis``, given); the side of the range
    that fills its end of the grid first sets the scale, and 0 stays 0. The gradient passes through
    where the input lies inside ``[input_min, input_max]`` (the values given, as TensorFlow's) and is 0
    elsewhere; ``input_min`` and ``input_max`` get 0.
    """
    return _quantize_and_dequantize(
        input,
        input_min,
        input_max,
        signed_input,
        num_bits,
        range_given,
        round_mode,
        narrow_range,
        axis,
        "quantize_and_dequantize_v2",
        pass_through=False,
    )


def quantize_and_dequantize(
    input,  # noqa: A002
    input_min,
    input_max,
    signed_input=True,
    num_bits=8,
    range_given=False,
    round_mode="HALF_TO_EVEN",
    name=None,
    narrow_range=False,
    axis=None,
):
    """``tf.quantization.quantize_and_dequantize``: ``quantize_and_dequantize_v2``'s values with
    TensorFlow's older gradient, the upstream gradient passed through everywhere (the input's
    range does not mask it)."""
    return _quantize_and_dequantize(
        input,
        input_min,
        input_max,
        signed_input,
        num_bits,
        range_given,
        round_mode,
        narrow_range,
        axis,
        "quantize_and_dequantize",
        pass_through=True,
    )
