"""``keras.ops.nn``'s ``adaptive_average_pool`` / ``adaptive_max_pool`` (pooling to a fixed output
size, PyTorch's windows: output ``i`` of ``out`` pools inputs ``floor(i n / out)`` to
``ceil((i + 1) n / out)``, as Keras computes them) and ``unfold`` / ``fold`` (im2col and col2im on
channels-first ``(N, C, H, W)`` images, as PyTorch's and Keras').

Each is one recorded op, differentiable in its input.

>>> import gradkit.tf as tf
>>> ops = tf.keras.ops
>>> ops.adaptive_average_pool(tf.reshape(tf.range(5.0), (1, 5, 1)), 2).numpy().ravel().tolist()
[1.0, 3.0]
>>> ops.unfold(tf.zeros((1, 2, 4, 4)), 2, stride=2).shape
(1, 8, 4)
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from ... import _pooling
from .dispatch import apply, keras_op, tensor
from .nn_ops import _layout, _tuple

NAMES = "adaptive_average_pool adaptive_max_pool fold unfold"


def _adaptive(x, *, sizes, kind):
    """Channels-last ``x`` pooled to ``sizes`` along its spatial axes, one axis at a time."""
    for axis, out in enumerate(sizes, start=1):
        n = x.shape[axis]
        bounds = [((i * n) // out, -((-(i + 1) * n) // out)) for i in range(out)]
        if kind == "max":
            x = _adaptive_max_axis(x, axis, bounds)
            continue
        windows = []
        for start, end in bounds:
            index = [slice(None)] * x.ndim
            index[axis] = slice(start, end)
            windows.append(jnp.mean(x[tuple(index)], axis=axis))
        x = jnp.stack(windows, axis=axis)
    return x


def _adaptive_max_axis(x, axis, bounds):
    """The max over each window ``[start, end)`` of ``axis``, as Keras' TensorFlow backend takes it:
    a stride-1 max pool for each window size, the windows picked from them. Its gradient is
    TensorFlow's: each window's first maximal entry (every entry within 1e-5 of the maximum for
    3-D inputs, MaxPool3DGrad's rule)."""
    spatial = x.ndim - 2
    tolerance = _pooling._TIE_TOLERANCE_3D if spatial == 3 else None
    pooled, offsets, total = [], {}, 0
    for size in sorted({end - start for start, end in bounds}):
        window = tuple(size if a == axis else 1 for a in range(1, spatial + 1))
        ones = (1,) * spatial
        pooled.append(_pooling._max_pool(x, window, ones, ones, "VALID", True, tolerance))
        offsets[size] = total
        total += pooled[-1].shape[axis]
    picks = np.array([offsets[end - start] + start for start, end in bounds], np.int32)
    return jnp.take(jnp.concatenate(pooled, axis=axis), picks, axis=axis)


def _adaptive_pool(name, kind):
    def op(inputs, output_size, data_format=None):
        x, back = _layout(inputs, data_format)
        n = x.ndim - 2
        if n not in (1, 2, 3):
            raise _errors.GradkitValueError(
                f"tf.keras.ops.{name} takes inputs of rank 3 to 5 (batch, 1 to 3 spatial axes, channels), but got "
                f"shape {tuple(tensor(inputs).shape)} (Keras raises ValueError)."
            )
        sizes = _tuple(output_size, n)
        if len(sizes) != n or min(sizes) < 1:
            raise _errors.GradkitValueError(
                f"tf.keras.ops.{name} got output_size={output_size!r} for {n} spatial axes: pass a positive int or "
                f"{n} positive ints."
            )
        if kind == "average" and np.dtype(x.dtype).kind not in "fc" and str(x.dtype) != "bfloat16":
            raise _errors.GradkitTypeError(
                f"tf.keras.ops.{name} got {x.dtype} inputs, which TensorFlow's average pooling refuses. Cast them to "
                "float32 first."
            )
        return back(apply(_adaptive, x, sizes=sizes, kind=kind))

    op.__name__ = op.__qualname__ = name
    op.__doc__ = (
        f"``keras.ops.{name}(inputs, output_size, data_format=None)``: the {kind} over adaptive windows that "
        "pool each spatial axis of ``inputs`` (1 to 3 of them) to ``output_size`` (an int or one per axis)."
    )
    return keras_op(op)


adaptive_average_pool = _adaptive_pool("adaptive_average_pool", "average")
adaptive_max_pool = _adaptive_pool("adaptive_max_pool", "max")


def _grid(size, k, d, p, s):
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


def _unfold(x, *, k, d, p, s):
    n, c, h, w = x.shape
    x = jnp.pad(x, ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])))
    nh, nw = _grid(h, k[0], d[0], p[0], s[0]), _grid(w, k[1], d[1], p[1], s[1])
    cols = [
        x[:, :, i * d[0] : i * d[0] + s[0] * (nh - 1) + 1 : s[0], j * d[1] : j * d[1] + s[1] * (nw - 1) + 1 : s[1]]
        for i in range(k[0])
        for j in range(k[1])
    ]
    return jnp.stack(cols, axis=2).reshape(n, c * k[0] * k[1], nh * nw)


def _fold(x, *, o, k, d, p, s):
    n, ckk, _ = x.shape
    c = ckk // (k[0] * k[1])
    nh, nw = _grid(o[0], k[0], d[0], p[0], s[0]), _grid(o[1], k[1], d[1], p[1], s[1])
    x = x.reshape(n, c, k[0], k[1], nh, nw)
    out = jnp.zeros((n, c, o[0] + 2 * p[0], o[1] + 2 * p[1]), x.dtype)
    for i in range(k[0]):
        for j in range(k[1]):
            rows = slice(i * d[0], i * d[0] + s[0] * (nh - 1) + 1, s[0])
            cols = slice(j * d[1], j * d[1] + s[1] * (nw - 1) + 1, s[1])
            out = out.at[:, :, rows, cols].add(x[:, :, i, j])
    return out[:, :, p[0] : p[0] + o[0], p[1] : p[1] + o[1]]


def _pairs(name, **values):
    out = {}
    for key, value in values.items():
        pair = _tuple(value, 2)
        low = 0 if key == "padding" else 1
        if len(pair) != 2 or min(pair) < low:
            raise _errors.GradkitValueError(
                f"tf.keras.ops.{name} got {key}={value!r}: pass an int or two ints, each >= {low}."
            )
        out[key[0]] = pair
    return out


@keras_op
def unfold(x, kernel_size, dilation=1, padding=0, stride=1):
    """``keras.ops.unfold(x, kernel_size, dilation=1, padding=0, stride=1)``: the sliding
    ``kernel_size`` blocks of a channels-first ``(N, C, H, W)`` image as columns, shape
    ``(N, C * kH * kW, L)`` with ``L`` the number of blocks (im2col; PyTorch's ``unfold``)."""
    x = tensor(x)
    if x.ndim != 4:
        raise _errors.GradkitValueError(
            f"tf.keras.ops.unfold takes a 4-D channels-first image (N, C, H, W), but got shape {tuple(x.shape)} "
            "(Keras raises ValueError)."
        )
    args = _pairs("unfold", kernel_size=kernel_size, dilation=dilation, padding=padding, stride=stride)
    grid = [_grid(x.shape[2 + a], args["k"][a], args["d"][a], args["p"][a], args["s"][a]) for a in range(2)]
    if min(grid) < 1:
        raise _errors.GradkitValueError(
            f"tf.keras.ops.unfold: kernel_size={kernel_size!r} (dilation {dilation!r}) does not fit in the padded "
            f"image of shape {tuple(x.shape)}. Pass a smaller kernel or more padding."
        )
    return apply(_unfold, x, **args)


@keras_op
def fold(x, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """``keras.ops.fold(x, output_size, kernel_size, dilation=1, padding=0, stride=1)``: ``unfold``'s
    adjoint (col2im): columns ``(N, C * kH * kW, L)`` summed back into an image ``(N, C, *output_size)``,
    overlapping blocks added."""
    x = tensor(x)
    if x.ndim != 3:
        raise _errors.GradkitValueError(
            f"tf.keras.ops.fold takes columns of shape (N, C * kH * kW, L), but got shape {tuple(x.shape)} (Keras "
            "raises ValueError: the input must be 3-D)."
        )
    args = _pairs("fold", kernel_size=kernel_size, dilation=dilation, padding=padding, stride=stride)
    o = _pairs("fold", output_size=output_size)["o"]
    k = args["k"]
    grid = [_grid(o[a], k[a], args["d"][a], args["p"][a], args["s"][a]) for a in range(2)]
    if x.shape[1] % (k[0] * k[1]) or grid[0] * grid[1] != x.shape[2] or min(grid) < 1:
        raise _errors.GradkitValueError(
            f"tf.keras.ops.fold got columns of shape {tuple(x.shape)}, but output_size={output_size!r} with "
            f"kernel_size={kernel_size!r} makes {max(grid[0], 0)} x {max(grid[1], 0)} blocks of {k[0] * k[1]} "
            "entries per channel: the second axis must be a multiple of kH * kW and the third their number of "
            "blocks. Pass the arguments unfold was called with."
        )
    return apply(_fold, x, o=o, **args)
