"""Convolutions and pooling: ``tf.nn.conv2d``, ``conv1d``, ``max_pool2d``, ``avg_pool2d``.

On ``jax.lax.conv_general_dilated`` and ``jax.lax.reduce_window``, with TensorFlow's argument
forms: ``strides`` / ``dilations`` / ``ksize`` as an int or a list of 1, n or n + 2 entries
(the batch and channel entries then 1), ``padding`` as ``'SAME'``, ``'VALID'`` or explicit
pairs per axis of the input (zero for batch and channels). ``'SAME'`` pads as TensorFlow
does (the extra row at the end), and ``avg_pool2d`` averages only the entries inside the
input, as TensorFlow does.

>>> import gradkit.tf as tf
>>> x = tf.reshape(tf.range(16.0), [1, 4, 4, 1])
>>> tf.nn.max_pool2d(x, 2, 2, "VALID").numpy().ravel().tolist()
[5.0, 7.0, 13.0, 15.0]
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from ._convert import call, convert


def _layout(data_format, n, what):
    """``(channels_last, spatial axes)`` of an ``n``-d spatial data_format."""
    last = {1: "NWC", 2: "NHWC"}[n]
    first = {1: "NCW", 2: "NCHW"}[n]
    if data_format is None or data_format in (last, "NHWC"):
        return True
    if data_format in (first, "NCHW"):
        return False
    raise _errors.GradkitValueError(
        f"{what}: data_format={data_format!r} is not one gradkit.tf takes; use {last!r} (the default) or {first!r}."
    )


def _sequence(value, n, channels_last, name, what):
    """TensorFlow's ``_get_sequence``: an int or list of 1, n or n + 2 entries, as the n spatial ones."""
    if value is None:
        return (1,) * n
    values = [int(v) for v in (value if isinstance(value, (list, tuple)) else np.ravel(np.asarray(value)).tolist())]
    if len(values) == 1:
        return tuple(values) * n
    if len(values) == n:
        return tuple(values)
    if len(values) == n + 2:
        outer = (values[0], values[-1]) if channels_last else (values[0], values[1])
        if outer != (1, 1):
            raise _errors.GradkitValueError(
                f"{what}: {name}={values} moves along the batch or channel axis ({outer}); TensorFlow and "
                f"gradkit.tf take 1 there. Give the {n} spatial entries alone: {name}={values[1:-1] if channels_last else values[2:]}."
            )
        return tuple(values[1:-1] if channels_last else values[2:])
    raise _errors.GradkitValueError(
        f"{what}: {name}={values} has {len(values)} entries; TensorFlow takes an int or a list of 1, {n} or "
        f"{n + 2} entries."
    )


def _padding(padding, n, channels_last, what):
    """``'SAME'``, ``'VALID'`` or the spatial ``((lo, hi), ...)`` of an explicit padding."""
    if isinstance(padding, str):
        if padding.upper() in ("SAME", "VALID"):
            return padding.upper()
        raise _errors.GradkitValueError(
            f"{what}: padding={padding!r} is not a padding TensorFlow knows; use 'SAME', 'VALID' or an explicit "
            f"list of [before, after] pairs, one per axis of the input ({n + 2} pairs)."
        )
    pairs = [tuple(int(p) for p in pair) for pair in padding] if isinstance(padding, (list, tuple)) else None
    if pairs is None or len(pairs) != n + 2 or any(len(p) != 2 for p in pairs):
        raise _errors.GradkitValueError(
            f"{what}: padding={padding!r} must be 'SAME', 'VALID' or {n + 2} [before, after] pairs, one per "
            f"axis of the input, as TensorFlow requires."
        )
    outer = (pairs[0], pairs[-1]) if channels_last else (pairs[0], pairs[1])
    if outer != ((0, 0), (0, 0)):
        raise _errors.GradkitValueError(
            f"{what}: padding={padding!r} pads the batch or channel axis; TensorFlow allows only [0, 0] there."
        )
    return tuple(pairs[1:-1] if channels_last else pairs[2:])


def _check_rank(x, rank, what, layout, batched=False):
    if len(x.shape) != rank and not (batched and len(x.shape) > rank):
        raise _errors.GradkitValueError(
            f"{what} takes a rank-{rank}{' or higher' if batched else ''} input ({layout}), but got shape "
            f"{tuple(x.shape)}. Reshape it first, e.g. tf.reshape(x, [batch, ..., channels])."
        )


def _conv(x, w, strides, padding, dilations, channels_last, groups):
    n = w.ndim - 2
    batch = x.shape[: x.ndim - n - 1]  # TensorFlow's batch_shape: any leading axes
    x = x.reshape((-1, *x.shape[x.ndim - n - 1 :]))
    spatial = "HW"[-n:] if n <= 2 else None
    lhs = f"N{spatial}C" if channels_last else f"NC{spatial}"
    dims = jax.lax.conv_dimension_numbers(x.shape, w.shape, (lhs, f"{spatial}IO", lhs))
    y = jax.lax.conv_general_dilated(
        x,
        w,
        window_strides=strides,
        padding=padding,
        rhs_dilation=dilations,
        dimension_numbers=dims,
        feature_group_count=groups,
        precision=jax.lax.Precision.HIGHEST,
    )
    return y.reshape((*batch, *y.shape[1:]))


def _convolve(input, filters, strides, padding, data_format, dilations, n, what):  # noqa: A002
    channels_last = _layout(data_format, n, what)
    x, w = convert(input), convert(filters)
    layout = ("NWC" if channels_last else "NCW") if n == 1 else ("NHWC" if channels_last else "NCHW")
    _check_rank(x, n + 2, what, layout, batched=channels_last)
    if len(w.shape) != n + 2:
        raise _errors.GradkitValueError(
            f"{what} takes rank-{n + 2} filters ({'[width' if n == 1 else '[height, width'}, in_channels, "
            f"out_channels]), but got shape {tuple(w.shape)}."
        )
    if np.dtype(x.dtype) != np.dtype(w.dtype):
        raise _errors.GradkitTypeError(
            f"{what}: input is {np.dtype(x.dtype).name} but filters are {np.dtype(w.dtype).name}; TensorFlow "
            "takes one dtype for both. Cast one of them: tf.cast(filters, input.dtype)."
        )
    channels = x.shape[-1] if channels_last else x.shape[1]
    if w.shape[-2] == 0 or channels % w.shape[-2]:
        raise _errors.GradkitValueError(
            f"{what}: the input has {channels} channels, which the filters' in_channels ({w.shape[-2]}) do not "
            "divide; TensorFlow requires filters.shape[-2] to be the input's channels (or divide them, "
            "for a grouped convolution)."
        )
    strides = _sequence(strides, n, channels_last, "strides", what)
    dilations = _sequence(dilations, n, channels_last, "dilations", what)
    if any(s > 1 for s in strides) and any(d > 1 for d in dilations):
        raise _errors.GradkitValueError(
            f"{what}: strides={list(strides)} with dilations={list(dilations)}; TensorFlow does not take "
            "strides and dilations both above 1."
        )
    return call(
        _conv,
        x,
        w,
        strides=strides,
        padding=_padding(padding, n, channels_last, what),
        dilations=dilations,
        channels_last=channels_last,
        groups=channels // w.shape[-2],
    )


def conv2d(input, filters, strides, padding, data_format="NHWC", dilations=None, name=None):  # noqa: A002
    """``tf.nn.conv2d``: a 2-D convolution of an NHWC input with ``[h, w, in, out]`` filters."""
    return _convolve(input, filters, strides, padding, data_format, dilations, 2, "tf.nn.conv2d")


def conv1d(input, filters, stride, padding, data_format="NWC", dilations=None, name=None):  # noqa: A002
    """``tf.nn.conv1d``: a 1-D convolution of an NWC input with ``[w, in, out]`` filters."""
    return _convolve(input, filters, stride, padding, data_format, dilations, 1, "tf.nn.conv1d")


def _window(x, ksize, strides, padding, channels_last):
    """Window, strides and padding over all axes of ``x`` (1 and no padding on batch and channels)."""
    if channels_last:
        dims, steps = (1, *ksize, 1), (1, *strides, 1)
    else:
        dims, steps = (1, 1, *ksize), (1, 1, *strides)
    if isinstance(padding, str):
        pads = jax.lax.padtype_to_pads(x.shape, dims, steps, padding)
    else:
        pads = ((0, 0), *padding, (0, 0)) if channels_last else ((0, 0), (0, 0), *padding)
    return dims, steps, tuple(tuple(p) for p in pads)


def _max_pool(x, ksize, strides, padding, channels_last):
    dims, steps, pads = _window(x, ksize, strides, padding, channels_last)
    return jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, dims, steps, pads)


def _avg_pool(x, ksize, strides, padding, channels_last):
    dims, steps, pads = _window(x, ksize, strides, padding, channels_last)
    zero = np.zeros((), x.dtype)  # concrete, so jax takes its differentiable window sum
    total = jax.lax.reduce_window(x, zero, jax.lax.add, dims, steps, pads)
    # TensorFlow divides by the entries inside the input, not the window's size.
    count = jax.lax.reduce_window(np.ones(x.shape, x.dtype), zero, jax.lax.add, dims, steps, pads)
    return total / count


def _pool(fn, input, ksize, strides, padding, data_format, what, explicit):  # noqa: A002
    channels_last = _layout(data_format, 2, what)
    x = convert(input)
    _check_rank(x, 4, what, "NHWC" if channels_last else "NCHW")
    if not jnp.issubdtype(x.dtype, jnp.floating):
        raise _errors.GradkitTypeError(
            f"{what} takes a floating-point input, but got dtype {np.dtype(x.dtype).name}. "
            f"Cast it first: {what}(tf.cast(x, tf.float32), ...)."
        )
    if not explicit and not isinstance(padding, str):
        raise _errors.GradkitTypeError(
            f"{what}: padding={padding!r}; TensorFlow takes 'SAME' or 'VALID' here. Pad first with tf.pad."
        )
    ksize = _sequence(ksize, 2, channels_last, "ksize", what)
    strides = _sequence(strides, 2, channels_last, "strides", what)
    padding = _padding(padding, 2, channels_last, what)
    if not isinstance(padding, str) and any(max(p) >= k for p, k in zip(padding, ksize)):
        raise _errors.GradkitValueError(
            f"{what}: explicit padding {list(padding)} is not smaller than the window {list(ksize)}, as "
            "TensorFlow requires."
        )
    return call(fn, x, ksize=ksize, strides=strides, padding=padding, channels_last=channels_last)


def max_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    """``tf.nn.max_pool2d``: the maximum over each window (a tie's gradient goes to one entry)."""
    return _pool(_max_pool, input, ksize, strides, padding, data_format, "tf.nn.max_pool2d", explicit=True)


def avg_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    """``tf.nn.avg_pool2d``: the mean over each window's entries inside the input."""
    return _pool(_avg_pool, input, ksize, strides, padding, data_format, "tf.nn.avg_pool2d", explicit=False)
