"""Convolutions: ``tf.nn.conv1d``, ``conv2d``, ``conv3d``, ``convolution`` and ``atrous_conv2d``.

On ``jax.lax.conv_general_dilated``, with TensorFlow's argument forms: ``strides`` /
``dilations`` as an int or a list of 1, n or n + 2 entries (the batch and channel entries
then 1; ``conv3d`` takes lists of 5 only, as TensorFlow's), ``padding`` as ``'SAME'``,
``'VALID'`` or explicit pairs per axis of the input (zero for batch and channels; not for
3-D convolutions). ``'SAME'`` pads as TensorFlow does (the extra row at the end). The
argument helpers here are shared with the transposed convolutions and the pools.

>>> import gradkit.tf as tf
>>> x, w = tf.ones([1, 4, 4, 1]), tf.ones([3, 3, 1, 2])
>>> tf.nn.convolution(x, w, padding="SAME").numpy()[0, :, 0, 0].tolist()
[4.0, 6.0, 6.0, 4.0]
"""

from __future__ import annotations

import jax
import numpy as np

from gradkit import _errors

from ._convert import call, convert

_CONV_FORMATS = {1: (("NWC", "NHWC"), ("NCW", "NCHW")), 2: (("NHWC",), ("NCHW",)), 3: (("NDHWC",), ("NCDHW",))}


def _layout(data_format, n, what, formats=None):
    """Whether an ``n``-d spatial data_format is channels-last (None is); ``formats`` is
    ``(channels-last names, channels-first names)``, the convolutions' by default."""
    last, first = formats or _CONV_FORMATS[n]
    if data_format is None or data_format in last:
        return True
    if data_format in first:
        return False
    raise _errors.GradkitValueError(
        f"{what}: data_format={data_format!r} is not one gradkit.tf takes; use {last[0]!r} (the default) or "
        f"{first[0]!r}."
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
        if padding in ("SAME", "VALID"):
            return padding
        # TensorFlow's kernels refuse the attr value: InvalidArgumentError eagerly (ValueError traced).
        raise _errors.InvalidArgumentValueError(
            f"{what}: padding={padding!r} is not a padding TensorFlow knows (it takes upper case only); use "
            f"'SAME', 'VALID' or an explicit list of [before, after] pairs, one per axis of the input ({n + 2} pairs)."
        )
    pairs = [tuple(int(p) for p in pair) for pair in padding] if isinstance(padding, (list, tuple)) else None
    if pairs is None or len(pairs) != n + 2 or any(len(p) != 2 for p in pairs):
        raise _errors.GradkitValueError(
            f"{what}: padding={padding!r} must be 'SAME', 'VALID' or {n + 2} [before, after] pairs, one per "
            f"axis of the input, as TensorFlow requires."
        )
    if any(p < 0 for pair in pairs for p in pair):
        raise _errors.InvalidArgumentValueError(
            f"{what}: padding={padding!r} has a negative entry; TensorFlow requires all explicit paddings to be "
            "nonnegative. Crop with a slice (x[:, 1:]) before the op instead."
        )
    outer = (pairs[0], pairs[-1]) if channels_last else (pairs[0], pairs[1])
    if outer != ((0, 0), (0, 0)):
        raise _errors.GradkitValueError(
            f"{what}: padding={padding!r} pads the batch or channel axis; TensorFlow allows only [0, 0] there."
        )
    return tuple(pairs[1:-1] if channels_last else pairs[2:])


def check_output_size(spatial, window, strides, dilations, padding, what) -> None:
    """TensorFlow's windowed output size, ``(size + padding - dilated window + stride) / stride``
    truncated toward zero: refused where negative (a window larger than the padded input); where 0
    the output is empty."""
    if padding == "SAME":
        return
    pads = [(0, 0)] * len(spatial) if padding == "VALID" else padding
    for size, k, stride, rate, (lo, hi) in zip(spatial, window, strides, dilations, pads):
        if size + lo + hi - ((k - 1) * rate + 1) + stride <= -stride:  # C++'s division truncates to 0
            raise _errors.InvalidArgumentValueError(
                f"{what}: the window {list(window)} (dilations {list(dilations)}) is larger than the input's "
                f"spatial shape {list(spatial)} with padding {padding!r}, so the output size would be negative; "
                "TensorFlow refuses it too. Use padding='SAME', a smaller window, or pad the input first."
            )


_SPATIAL = {1: ("width",), 2: ("height", "width"), 3: ("depth", "height", "width")}


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
    spatial = "DHW"[-n:]
    lhs = f"N{spatial}C" if channels_last else f"NC{spatial}"
    dims = jax.lax.conv_dimension_numbers(x.shape, w.shape, (lhs, f"{spatial}IO", lhs))
    if not isinstance(padding, str):
        # Explicit padding as a pad of the input and a VALID convolution: the same values, and
        # derivatives XLA computes right (its transposed convolution with strides and uneven
        # explicit padding aborts the process, and without strides gave wrong second derivatives).
        first = 1 if channels_last else 2
        config = [(0, 0, 0)] * x.ndim
        for axis, (lo, hi) in enumerate(padding):
            config[first + axis] = (lo, hi, 0)
        x = jax.lax.pad(x, np.zeros((), x.dtype), config)
        padding = "VALID"
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


def _convolve(input, filters, strides, padding, data_format, dilations, n, what, strided_dilation=True):  # noqa: A002
    """Check TensorFlow's arguments and record the convolution. The conv ops' kernels refuse bad
    filters, dtypes, strides and paddings with InvalidArgumentError eagerly (ValueError or TypeError
    when traced), so these raise gradkit's classes deriving from both. ``strided_dilation=False``
    refuses strides and dilations both above 1, as ``tf.nn.convolution`` does in Python (the
    conv ops compute them)."""
    channels_last = _layout(data_format, n, what)
    x, w = convert(input), convert(filters)
    layout = _CONV_FORMATS[n][0 if channels_last else 1][0]
    _check_rank(x, n + 2, what, layout, batched=channels_last)
    if len(w.shape) != n + 2:
        raise _errors.InvalidArgumentValueError(
            f"{what} takes rank-{n + 2} filters ([{', '.join(_SPATIAL[n])}, in_channels, out_channels]), but got "
            f"shape {tuple(w.shape)}."
        )
    if np.dtype(x.dtype) != np.dtype(w.dtype):
        raise _errors.InvalidArgumentTypeError(
            f"{what}: input is {np.dtype(x.dtype).name} but filters are {np.dtype(w.dtype).name}; TensorFlow "
            "takes one dtype for both. Cast one of them: tf.cast(filters, input.dtype)."
        )
    channels = x.shape[-1] if channels_last else x.shape[1]
    if w.shape[-2] == 0 or channels % w.shape[-2]:
        raise _errors.InvalidArgumentValueError(
            f"{what}: the input has {channels} channels, which the filters' in_channels ({w.shape[-2]}) do not "
            "divide; TensorFlow requires filters.shape[-2] to be the input's channels (or divide them, "
            "for a grouped convolution)."
        )
    strides = _sequence(strides, n, channels_last, "strides", what)
    dilations = _sequence(dilations, n, channels_last, "dilations", what)
    if any(v < 1 for v in strides + dilations):
        raise _errors.InvalidArgumentValueError(
            f"{what}: strides={list(strides)}, dilations={list(dilations)}; TensorFlow takes positive ints only."
        )
    if not strided_dilation and any(s > 1 for s in strides) and any(d > 1 for d in dilations):
        raise _errors.GradkitValueError(
            f"{what}: strides={list(strides)} with dilations={list(dilations)}; TensorFlow's {what} does not "
            "take strides and dilations both above 1 (tf.nn.conv1d, conv2d and conv3d do)."
        )
    padding = _padding(padding, n, channels_last, what)
    check_output_size(
        x.shape[-n - 1 : -1] if channels_last else x.shape[-n:], w.shape[:n], strides, dilations, padding, what
    )
    return call(
        _conv,
        x,
        w,
        strides=strides,
        padding=padding,
        dilations=dilations,
        channels_last=channels_last,
        groups=channels // w.shape[-2],
    )


def conv2d(input, filters, strides, padding, data_format="NHWC", dilations=None, name=None):  # noqa: A002
    """``tf.nn.conv2d``: a 2-D convolution of an NHWC input with ``[h, w, in, out]`` filters."""
    return _convolve(input, filters, strides, padding, data_format, dilations, 2, "tf.nn.conv2d")


def conv1d(input, filters, stride, padding, data_format="NWC", dilations=None, name=None):  # noqa: A002
    """``tf.nn.conv1d``: a 1-D convolution of an NWC input with ``[w, in, out]`` filters."""
    if not isinstance(padding, str):
        raise _errors.GradkitTypeError(
            f"tf.nn.conv1d: padding={padding!r}; TensorFlow's conv1d takes 'SAME' or 'VALID' only. Pad first "
            "with tf.pad, then convolve with 'VALID'."
        )
    return _convolve(input, filters, stride, padding, data_format, dilations, 1, "tf.nn.conv1d")


def _list_of(value, length, name, what):
    """``conv3d``'s strides / dilations: TensorFlow's op takes a list of ``length`` ints only."""
    if not isinstance(value, (list, tuple)):
        raise _errors.GradkitTypeError(
            f"{what}: {name}={value!r}; TensorFlow takes a list of {length} ints here, e.g. {name}={[1] * length}."
        )
    if len(value) != length:
        raise _errors.GradkitValueError(
            f"{what}: {name}={list(value)} has {len(value)} entries; TensorFlow takes {length} "
            "(batch, depth, height, width, channels; 1 for batch and channels)."
        )


def conv3d(input, filters, strides, padding, data_format="NDHWC", dilations=None, name=None):  # noqa: A002
    """``tf.nn.conv3d``: a 3-D convolution of an NDHWC input with ``[d, h, w, in, out]`` filters;
    ``strides`` (and ``dilations``) are lists of 5 ints and ``padding`` is 'SAME' or 'VALID', as TensorFlow's."""
    what = "tf.nn.conv3d"
    _list_of(strides, 5, "strides", what)
    if dilations is not None:
        _list_of(dilations, 5, "dilations", what)
    if not isinstance(padding, str):
        raise _errors.GradkitTypeError(
            f"{what}: padding={padding!r}; TensorFlow's 3-D convolution takes 'SAME' or 'VALID' only. "
            "Pad first with tf.pad, then convolve with 'VALID'."
        )
    return _convolve(input, filters, strides, padding, data_format, dilations, 3, what)


def convolution(input, filters, strides=None, padding="VALID", data_format=None, dilations=None, name=None):  # noqa: A002
    """``tf.nn.convolution``: ``conv1d``, ``conv2d`` or ``conv3d`` by the filters' rank (1 to 3 spatial axes)."""
    what = "tf.nn.convolution"
    n = len(convert(filters).shape) - 2
    if not 1 <= n <= 3:
        raise _errors.GradkitValueError(
            f"{what} takes filters of rank 3, 4 or 5 ([*spatial, in_channels, out_channels], 1 to 3 spatial axes), "
            f"but got rank {n + 2}."
        )
    if n != 2 and not isinstance(padding, str):
        raise _errors.GradkitTypeError(
            f"{what}: explicit padding {padding!r} for a {n}-D convolution; TensorFlow takes 'SAME' or 'VALID' there. "
            "Pad first with tf.pad, then convolve with 'VALID'."
        )
    return _convolve(input, filters, strides, padding, data_format, dilations, n, what, strided_dilation=False)


def atrous_conv2d(value, filters, rate, padding, name=None):
    """``tf.nn.atrous_conv2d``: a 2-D convolution of an NHWC input whose filters are dilated by ``rate``
    (an int, or one per spatial axis); ``padding`` is 'SAME' or 'VALID'."""
    what = "tf.nn.atrous_conv2d"
    if not isinstance(padding, str):
        raise _errors.GradkitTypeError(
            f"{what}: padding={padding!r}; TensorFlow takes 'SAME' or 'VALID' here. Call tf.nn.conv2d with "
            "dilations= for explicit padding."
        )
    if padding not in ("SAME", "VALID"):  # TensorFlow's Python code refuses these: ValueError
        raise _errors.GradkitValueError(f"{what}: padding={padding!r}; TensorFlow takes 'SAME' or 'VALID' here.")
    rates = [int(r) for r in np.broadcast_to(np.asarray(rate), (2,))]
    if any(r < 1 for r in rates):
        raise _errors.GradkitValueError(f"{what}: rate={rate!r}; TensorFlow takes positive rates only.")
    x, w = convert(value), convert(filters)
    if len(x.shape) == 4 and len(w.shape) == 4 and x.shape[-1] != w.shape[-2]:
        raise _errors.GradkitValueError(  # checked in TensorFlow's Python code: ValueError
            f"{what}: the input has {x.shape[-1]} channels but the filters' in_channels is {w.shape[-2]}; "
            "TensorFlow requires them equal."
        )
    return _convolve(x, w, 1, padding, "NHWC", rates, 2, what)
