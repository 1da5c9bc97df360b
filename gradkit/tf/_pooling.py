"""Pooling: ``tf.nn.max_pool``, ``avg_pool``, their ``1d``/``2d``/``3d`` forms and ``tf.nn.pool``.

One implementation for 1, 2 and 3 spatial axes, on ``jax.lax.reduce_window``, with
TensorFlow's argument forms: ``ksize`` / ``strides`` as an int or a list of 1, n or n + 2
entries, ``padding`` as ``'SAME'`` or ``'VALID'`` (explicit ``[before, after]`` pairs for the
1-D and 2-D max pools, as TensorFlow allows), ``data_format`` channels-last (the default) or
channels-first. As in TensorFlow:

- average pooling divides by the number of entries inside the input, not the window's size
  (with ``'SAME'`` padding the padded entries do not count);
- the gradient of a 1-D or 2-D max pool goes to the first maximal entry of each window (in
  row-major order), as TensorFlow's ``MaxPoolGrad``; the gradient of a 3-D max pool goes to
  every entry within ``1e-5`` of the window's maximum, as TensorFlow's ``MaxPool3DGrad``.

One difference remains: TensorFlow's forward-mode derivative and second derivatives of a
3-D max pool (``MaxPool3DGradGrad``) take the first maximal entry instead, so on tied windows
they disagree with its own gradient; gradkit uses the 1e-5 rule for every order (JAX derives
them all from one rule). Without ties all orders agree with TensorFlow's.

>>> import gradkit.tf as tf
>>> x = tf.reshape(tf.range(16.0), [1, 4, 4, 1])
>>> tf.nn.max_pool2d(x, 2, 2, "VALID").numpy().ravel().tolist()
[5.0, 7.0, 13.0, 15.0]
>>> tf.nn.avg_pool1d(tf.reshape(tf.range(5.0), [1, 5, 1]), 2, 2, "SAME").numpy().ravel().tolist()
[0.5, 2.5, 4.0]
"""

from __future__ import annotations

import collections
import functools
import itertools

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors
from gradkit._op_errors import UnimplementedError

from ._conv import _layout, _padding, _sequence, check_output_size
from ._convert import call, convert

_FLOATS = ("float16", "bfloat16", "float32", "float64")
# TensorFlow's kernels: MaxPool takes these integers too; MaxPool3D has no float64 (nor integers).
_DTYPES = {
    ("max", 1): _FLOATS + ("int8", "int16", "int32", "int64", "uint8", "uint16"),
    ("max", 2): _FLOATS + ("int8", "int16", "int32", "int64", "uint8", "uint16"),
    ("max", 3): ("float16", "bfloat16", "float32"),
    ("avg", 1): _FLOATS,
    ("avg", 2): _FLOATS,
    ("avg", 3): _FLOATS,
}
_FORMATS = {1: (("NWC",), ("NCW",)), 2: (("NHWC",), ("NCHW",)), 3: (("NDHWC",), ("NCDHW",))}
# MaxPool3DGrad sends a window's gradient to every entry this close to its maximum.
_TIE_TOLERANCE_3D = 1e-5


def _full(values, channels_last, fill):
    return (fill, *values, fill) if channels_last else (fill, fill, *values)


def _geometry(x, ksize, strides, dilations, padding, channels_last):
    """Window, strides, dilation and ``(lo, hi)`` padding over every axis of ``x``."""
    dims, steps, dil = (_full(v, channels_last, 1) for v in (ksize, strides, dilations))
    if isinstance(padding, str):
        dilated = tuple((k - 1) * d + 1 for k, d in zip(dims, dil))
        pads = jax.lax.padtype_to_pads(x.shape, dilated, steps, padding)
    else:
        pads = _full(padding, channels_last, (0, 0))
    return dims, steps, dil, tuple(tuple(int(p) for p in pair) for pair in pads)


def _windows(x, dims, steps, dil, pads, out_shape, fill):
    """Every window of ``x`` (padded with ``fill``) as a last axis, in row-major window order."""
    x = jnp.pad(x, pads, constant_values=fill)
    slices = []
    for offsets in itertools.product(*(range(k) for k in dims)):
        start = tuple(o * d for o, d in zip(offsets, dil))
        # An empty output axis (n == 0) is an empty slice, not a negative limit.
        limit = tuple(s + max((n - 1) * st + 1, 0) for s, n, st in zip(start, out_shape, steps))
        slices.append(jax.lax.slice(x, start, limit, steps))
    return jnp.stack(slices, axis=-1)


def _lowest(dtype):
    return np.array(-np.inf if jnp.issubdtype(dtype, jnp.floating) else np.iinfo(dtype).min, dtype)


def _reduce_max(x, geometry):
    dims, steps, dil, pads, _ = geometry
    return jax.lax.reduce_window(x, _lowest(x.dtype), jax.lax.max, dims, steps, pads, window_dilation=dil)


def _first_hits(x, y, geometry):
    """For each window (a last axis), True at its first entry inside the input equal to the maximum ``y``."""
    dims, steps, dil, pads, _ = geometry
    entries = _windows(x, dims, steps, dil, pads, y.shape, _lowest(x.dtype))
    inside = _windows(jnp.ones(x.shape, bool), dims, steps, dil, pads, y.shape, False)
    hit = (entries == y[..., None]) & inside
    return hit & (jnp.cumsum(hit, axis=-1) == 1)


def _from_lowest(y):
    """TensorFlow's MaxPool kernels start each window from the dtype's lowest finite value: a
    window of -inf gives that, not -inf."""
    return jnp.maximum(y, np.array(jnp.finfo(y.dtype).min, y.dtype))


@functools.partial(jax.custom_jvp, nondiff_argnums=(1,))
def _max_window(x, geometry):
    return _from_lowest(_reduce_max(x, geometry))


@_max_window.defjvp
def _max_window_jvp(geometry, primals, tangents):
    # TensorFlow's gradients choose among tied entries (JAX's reduce_window leaves the choice
    # to XLA): MaxPoolGrad the first maximal entry of each window, MaxPool3DGrad every entry
    # within 1e-5 of the maximum. The tangent is the window's selected tangents, summed; its
    # transpose sends each window's cotangent to the same entries.
    (x,), (t,) = primals, tangents
    dims, steps, dil, pads, tolerance = geometry
    y = _reduce_max(x, geometry)
    if tolerance is None:
        hit = _first_hits(x, y, geometry)
    else:
        entries = _windows(x, dims, steps, dil, pads, y.shape, -np.inf)
        inside = _windows(jnp.ones(x.shape, bool), dims, steps, dil, pads, y.shape, False)
        hit = (jnp.abs(entries - y[..., None]) < np.array(tolerance, x.dtype)) & inside
    tangent = _windows(t, dims, steps, dil, pads, y.shape, 0)
    # A window of -inf still sends its gradient to its first entry, as MaxPoolGrad does.
    return _from_lowest(y), jnp.sum(jnp.where(hit, tangent, jnp.zeros((), t.dtype)), axis=-1)


def _max_pool(x, ksize, strides, dilations, padding, channels_last, tolerance):
    geometry = (*_geometry(x, ksize, strides, dilations, padding, channels_last), tolerance)
    if not jnp.issubdtype(x.dtype, jnp.floating):
        return _reduce_max(x, geometry)  # integers: no gradient to choose
    return _max_window(x, geometry)


def _max_pool_unclamped(x, ksize, strides, padding):
    """``max_pool2d`` with -inf for a window of -inf (TensorFlow's MaxPoolWithArgmax kernel keeps it)."""
    geometry = (*_geometry(x, ksize, strides, (1, 1), padding, True), None)
    y = _max_pool(x, ksize, strides, (1, 1), padding, True, None)
    if not jnp.issubdtype(x.dtype, jnp.floating):
        return y
    raw = jax.lax.stop_gradient(_reduce_max(x, geometry))
    # Added, not selected: the gradient still reaches the window's first entry, as TensorFlow's.
    return y + jnp.where(raw == -jnp.inf, raw, jnp.zeros((), y.dtype))


def _avg_pool(x, ksize, strides, dilations, padding, channels_last, tolerance):
    dims, steps, dil, pads = _geometry(x, ksize, strides, dilations, padding, channels_last)
    zero = np.zeros((), x.dtype)  # concrete, so jax takes its differentiable window sum
    total = jax.lax.reduce_window(x, zero, jax.lax.add, dims, steps, pads, window_dilation=dil)
    # TensorFlow divides by the entries inside the input, not the window's size. The count
    # varies only along the axes a window moves on (size 1 elsewhere, broadcast).
    moving = tuple(k > 1 or s > 1 or p != (0, 0) for k, s, p in zip(dims, steps, pads))
    ones = jnp.ones(tuple(n if m else 1 for n, m in zip(x.shape, moving)), x.dtype)
    count = jax.lax.reduce_window(ones, zero, jax.lax.add, dims, steps, pads, window_dilation=dil)
    return total / count


class _UnimplementedValueError(_errors.GradkitValueError, UnimplementedError):
    """A window or stride along the batch axis (or a 3-D pool's channel axis), which TensorFlow's
    pooling kernels refuse with ``UnimplementedError``."""


def _check_positive(values, name, what, error=_errors.GradkitValueError):
    if any(v < 1 for v in values):
        raise error(f"{what}: {name}={list(values)} has an entry below 1; TensorFlow requires positive {name}.")


def _check_valid_max_window(ksize, strides, dilations, spatial, n, what):
    """TensorFlow's output size for 'VALID' max pooling, ``(size - window + stride) // stride``:
    refused where negative; where 0 the output is empty (its gradient zeros), except in 1-D,
    where TensorFlow aborts the process."""
    sizes = [s - ((k - 1) * d + 1) + st for k, d, st, s in zip(ksize, dilations, strides, spatial)]
    if any(size < 0 for size in sizes) or (n == 1 and any(size < st for size, st in zip(sizes, strides))):
        raise _errors.GradkitValueError(
            f"{what}: the window {list(ksize)} with strides {list(strides)} is larger than the input's spatial "
            f"shape {list(spatial)} with padding='VALID', so the output size would be negative (or, in 1-D, "
            "empty); TensorFlow refuses it (or aborts). Use padding='SAME' or a smaller window."
        )


def _pool(kind, input, ksize, strides, padding, data_format, n, what, explicit, dilations=None):  # noqa: A002
    """Validate TensorFlow's arguments for an ``n``-d pool and record it."""
    x, static = _pool_arguments(kind, input, ksize, strides, padding, data_format, n, what, explicit, dilations)
    return call(_max_pool if kind == "max" else _avg_pool, x, **static)


def _check_outer(value, n, channels_last, name, what):
    """TensorFlow's 2-D and 3-D pooling kernels refuse a batch entry of ``ksize`` / ``strides``
    other than 1 (and the 3-D ones a channel entry) with ``UnimplementedError``."""
    if n < 2 or not isinstance(value, (list, tuple)) or len(value) != n + 2:
        return
    values = [int(v) for v in value]
    axes = {"batch": 0}
    if n == 3:
        axes["channel"] = -1 if channels_last else 1
    for axis, index in axes.items():
        if values[index] != 1:
            raise _UnimplementedValueError(
                f"{what}: {name}={values} pools along the {axis} axis; TensorFlow's kernel does not implement "
                f"that (UnimplementedError). Give 1 there."
            )


def _pool_arguments(kind, input, ksize, strides, padding, data_format, n, what, explicit, dilations=None):  # noqa: A002
    """The input and the static arguments of an ``n``-d pool, checked as TensorFlow checks them: what
    its kernels refuse raises gradkit's classes deriving from InvalidArgumentError (or
    UnimplementedError), as TensorFlow does eagerly, and from ValueError or TypeError, as it does traced."""
    channels_last = _layout(data_format, n, what, _FORMATS[n])
    x = convert(input)
    layout = _FORMATS[n][0 if channels_last else 1][0]
    if len(x.shape) != n + 2:
        raise _errors.InvalidArgumentValueError(
            f"{what} takes a rank-{n + 2} input ({layout}), but got shape {tuple(x.shape)}. "
            f"Reshape it first, e.g. tf.reshape(x, [batch, ..., channels]), or call the pool for its rank."
        )
    dtype = np.dtype(x.dtype).name
    if dtype not in _DTYPES[kind, n]:
        raise _errors.InvalidArgumentTypeError(
            f"{what} takes an input of dtype {', '.join(_DTYPES[kind, n])}, as TensorFlow's kernel does, but got "
            f"{dtype}. Cast it first: {what}(tf.cast(x, tf.float32), ...)."
        )
    if not explicit and not isinstance(padding, str):
        raise _errors.GradkitTypeError(
            f"{what}: padding={padding!r}; TensorFlow takes 'SAME' or 'VALID' here. Pad first with tf.pad."
        )
    _check_outer(ksize, n, channels_last, "ksize", what)
    _check_outer(strides, n, channels_last, "strides", what)
    ksize = _sequence(ksize, n, channels_last, "ksize", what)
    strides = _sequence(strides, n, channels_last, "strides", what)
    dilations = (1,) * n if dilations is None else tuple(dilations)
    _check_positive(ksize, "ksize", what, _errors.InvalidArgumentValueError)
    _check_positive(strides, "strides", what, _errors.InvalidArgumentValueError)
    padding = _padding(padding, n, channels_last, what)
    spatial = x.shape[1:-1] if channels_last else x.shape[2:]
    if isinstance(padding, str):
        if padding == "VALID" and kind == "max":
            _check_valid_max_window(ksize, strides, dilations, spatial, n, what)
        else:  # average pooling's output is empty where its size is 0, refused where negative
            check_output_size(spatial, ksize, strides, dilations, padding, what)
    elif any(max(p) >= k or min(p) < 0 for p, k in zip(padding, ksize)):
        raise _errors.InvalidArgumentValueError(
            f"{what}: explicit padding {[list(p) for p in padding]} must be at least 0 and smaller than the window "
            f"{list(ksize)}, as TensorFlow requires."
        )
    return x, dict(
        ksize=ksize,
        strides=strides,
        dilations=dilations,
        padding=padding,
        channels_last=channels_last,
        tolerance=_TIE_TOLERANCE_3D if kind == "max" and n == 3 else None,
    )


def _rank(input, what):  # noqa: A002
    n = len(convert(input).shape) - 2
    if not 1 <= n <= 3:
        raise _errors.GradkitValueError(
            f"{what} takes an input of rank 3, 4 or 5 (batch, 1 to 3 spatial axes, channels), but got rank {n + 2}."
        )
    return n


def max_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):  # noqa: A002
    """``tf.nn.max_pool1d``: the maximum over each window of an NWC (or NCW) input."""
    return _pool("max", input, ksize, strides, padding, data_format, 1, "tf.nn.max_pool1d", explicit=True)


def max_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    """``tf.nn.max_pool2d``: the maximum over each window of an NHWC (or NCHW) input."""
    return _pool("max", input, ksize, strides, padding, data_format, 2, "tf.nn.max_pool2d", explicit=True)


def max_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None):  # noqa: A002
    """``tf.nn.max_pool3d``: the maximum over each window of an NDHWC (or NCDHW) input; the
    gradient goes to every entry within 1e-5 of the maximum, as TensorFlow's."""
    return _pool("max", input, ksize, strides, padding, data_format, 3, "tf.nn.max_pool3d", explicit=False)


def max_pool(input, ksize, strides, padding, data_format=None, name=None):  # noqa: A002
    """``tf.nn.max_pool``: ``max_pool1d``, ``max_pool2d`` or ``max_pool3d`` by the input's rank."""
    n = _rank(input, "tf.nn.max_pool")
    if n == 3 and not isinstance(padding, str):
        raise _errors.GradkitValueError(
            f"tf.nn.max_pool: explicit padding {padding!r} with a rank-5 input; TensorFlow takes it for rank 3 "
            "and 4 only. Pad first with tf.pad (with a very negative value), then pool with 'VALID'."
        )
    return _pool("max", input, ksize, strides, padding, data_format, n, "tf.nn.max_pool", explicit=True)


def avg_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):  # noqa: A002
    """``tf.nn.avg_pool1d``: the mean over each window's entries inside an NWC (or NCW) input."""
    return _pool("avg", input, ksize, strides, padding, data_format, 1, "tf.nn.avg_pool1d", explicit=False)


def avg_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    """``tf.nn.avg_pool2d``: the mean over each window's entries inside an NHWC (or NCHW) input."""
    return _pool("avg", input, ksize, strides, padding, data_format, 2, "tf.nn.avg_pool2d", explicit=False)


def avg_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None):  # noqa: A002
    """``tf.nn.avg_pool3d``: the mean over each window's entries inside an NDHWC (or NCDHW) input."""
    return _pool("avg", input, ksize, strides, padding, data_format, 3, "tf.nn.avg_pool3d", explicit=False)


def avg_pool(input, ksize, strides, padding, data_format=None, name=None):  # noqa: A002
    """``tf.nn.avg_pool``: ``avg_pool1d``, ``avg_pool2d`` or ``avg_pool3d`` by the input's rank."""
    n = _rank(input, "tf.nn.avg_pool")
    return _pool("avg", input, ksize, strides, padding, data_format, n, "tf.nn.avg_pool", explicit=False)


def _spatial_list(value, n, name, what):
    """``tf.nn.pool``'s strides / dilations: None or exactly ``n`` positive ints."""
    if value is None:
        return (1,) * n
    if not isinstance(value, (list, tuple, np.ndarray)) and not hasattr(value, "shape"):
        raise _errors.GradkitTypeError(
            f"{what}: {name}={value!r}; TensorFlow takes a list of {n} ints here (one per spatial axis), "
            f"e.g. {name}={[value] * n}."
        )
    values = tuple(int(v) for v in np.ravel(np.asarray(value)).tolist())
    if len(values) != n:
        raise _errors.GradkitValueError(
            f"{what}: {name}={list(values)} has {len(values)} entries; TensorFlow takes {n}, one per spatial axis."
        )
    _check_positive(values, name, what)
    return values


def pool(input, window_shape, pooling_type, strides=None, padding="VALID", data_format=None, dilations=None, name=None):  # noqa: A002
    """``tf.nn.pool``: ``'MAX'`` or ``'AVG'`` pooling over ``len(window_shape)`` spatial axes, with
    optional window ``dilations`` (``'VALID'`` padding and unit strides then, as TensorFlow requires).

    >>> import gradkit.tf as tf
    >>> x = tf.reshape(tf.range(6.0), [1, 6, 1])
    >>> tf.nn.pool(x, [2], "MAX", dilations=[2]).numpy().ravel().tolist()
    [2.0, 3.0, 4.0, 5.0]
    """
    what = "tf.nn.pool"
    if not isinstance(window_shape, (list, tuple, np.ndarray)) and not hasattr(window_shape, "shape"):
        raise _errors.GradkitTypeError(
            f"{what}: window_shape={window_shape!r}; TensorFlow takes a list of 1 to 3 ints (one per spatial axis), "
            f"e.g. window_shape=[{window_shape}, {window_shape}]."
        )
    window = tuple(int(v) for v in np.ravel(np.asarray(window_shape)).tolist())
    n = len(window)
    if not 1 <= n <= 3:
        raise _errors.GradkitValueError(f"{what}: window_shape={list(window)}; TensorFlow takes 1, 2 or 3 entries.")
    if pooling_type not in ("MAX", "AVG"):
        raise _errors.GradkitValueError(
            f"{what}: pooling_type={pooling_type!r}; TensorFlow takes 'MAX' or 'AVG' (upper case)."
        )
    rank = len(convert(input).shape)
    if rank != n + 2:
        raise _errors.GradkitValueError(
            f"{what}: window_shape={list(window)} pools {n} spatial axes, so the input must have rank {n + 2} "
            f"(batch, spatial axes, channels), but it has rank {rank}."
        )
    _check_positive(window, "window_shape", what)  # refused in TensorFlow's Python code: ValueError
    strides = _spatial_list(strides, n, "strides", what)
    dilations = _spatial_list(dilations, n, "dilations", what)
    if any(d > 1 for d in dilations):
        if any(s > 1 for s in strides):
            raise _errors.GradkitValueError(
                f"{what}: strides={list(strides)} with dilations={list(dilations)}; TensorFlow does not take "
                "strides and dilations both above 1."
            )
        if padding != "VALID":
            raise _errors.GradkitValueError(
                f"{what}: padding={padding!r} with dilations={list(dilations)}; TensorFlow pools a dilated "
                "window with padding='VALID' only."
            )
    if any(s > k for s, k in zip(strides, window)):
        raise _errors.GradkitValueError(
            f"{what}: strides={list(strides)} larger than window_shape={list(window)}; TensorFlow refuses it."
        )
    kind = "max" if pooling_type == "MAX" else "avg"
    explicit = kind == "max" and n < 3
    return _pool(kind, input, window, strides, padding, data_format, n, what, explicit, dilations)


# ``(output, argmax)``, TensorFlow's ``MaxPoolWithArgmax`` result: a namedtuple, which jax (and so
# a tf.function returning it) takes as a structure of two tensors.
MaxPoolWithArgmax = collections.namedtuple("MaxPoolWithArgmax", ["output", "argmax"])


def _max_pool_argmax(x, ksize, strides, padding, include_batch, index_dtype):
    geometry = (*_geometry(x, ksize, strides, (1, 1), padding, True), None)
    y = _max_pool_unclamped(x, ksize, strides, padding)
    n, h, w, c = x.shape
    flat = jnp.arange(h * w * c, dtype=index_dtype).reshape(1, h, w, c)
    if include_batch:
        flat = flat + jnp.arange(n, dtype=index_dtype).reshape(n, 1, 1, 1) * (h * w * c)
    flat = jnp.broadcast_to(flat, x.shape)
    dims, steps, dil, pads, _ = geometry
    index = _windows(flat, dims, steps, dil, pads, y.shape, np.zeros((), index_dtype))
    hit = _first_hits(jax.lax.stop_gradient(x), jax.lax.stop_gradient(y), geometry)
    return y, jnp.sum(jnp.where(hit, index, jnp.zeros((), index_dtype)), axis=-1)


def max_pool_with_argmax(
    input, ksize, strides, padding, data_format="NHWC", output_dtype=np.int64, include_batch_in_index=False, name=None
):  # noqa: A002
    """``tf.nn.max_pool_with_argmax``: ``max_pool2d``'s output and, for each, the flat index
    ``(y * width + x) * channels + c`` of the first maximal entry of its window (plus
    ``b * height * width * channels`` with ``include_batch_in_index``), as TensorFlow's.

    The indices are int64 only with jax's x64 mode on (int32 otherwise), as everywhere in gradkit.tf.
    """
    what = "tf.nn.max_pool_with_argmax"
    if data_format != "NHWC":
        raise _errors.GradkitValueError(f"{what}: data_format={data_format!r}; TensorFlow takes 'NHWC' only.")
    if np.dtype(output_dtype) not in (np.int32, np.int64):
        raise _errors.GradkitTypeError(f"{what}: output_dtype={output_dtype!r}; TensorFlow takes int32 or int64.")
    x, static = _pool_arguments("max", input, ksize, strides, padding, "NHWC", 2, what, explicit=False)
    if 0 in x.shape:
        raise _errors.GradkitValueError(
            f"{what}: input of shape {tuple(x.shape)} is empty; TensorFlow's kernel refuses an empty input."
        )
    return MaxPoolWithArgmax(
        *call(
            _max_pool_argmax,
            x,
            ksize=static["ksize"],
            strides=static["strides"],
            padding=static["padding"],
            include_batch=bool(include_batch_in_index),
            index_dtype=jax.dtypes.canonicalize_dtype(np.dtype(output_dtype)),
        )
    )
