"""More of ``keras.ops.numpy``: the bitwise ops and shifts, ``ldexp``, ``angle``, ``cross``, ``corrcoef``,
``correlate``, ``logspace``/``geomspace``, ``argpartition``, ``unique``, ``histogram`` and the windows
(``bartlett``, ``blackman``, ``hamming``, ``hanning``, ``kaiser``).

Dtypes are Keras' on its TensorFlow backend: the bitwise ops convert a Python number to int32 before
promoting (``bitwise_and(int8, 3)`` is int32), but a shift by a Python int keeps ``x``'s dtype;
``correlate`` computes integers in float32, ``argpartition`` compares ``x`` as int32 (as Keras casts
it), the windows are float32.

>>> import gradkit.tf as tf
>>> ops = tf.keras.ops
>>> ops.bitwise_xor(tf.constant([5, 3]), 6).numpy().tolist(), ops.left_shift(tf.constant([1, 2]), 2).numpy().tolist()
([3, 5], [4, 8])
>>> ops.cross(tf.constant([1.0, 0.0, 0.0]), tf.constant([0.0, 1.0, 0.0])).numpy().tolist()
[0.0, 0.0, 1.0]
>>> [round(v, 3) for v in ops.hanning(4).numpy().tolist()]
[0.0, 0.75, 0.75, 0.0]
"""

from __future__ import annotations

import builtins

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from ... import _arithmetic, _array, _bitwise, _math, _signal_windows
from .dispatch import apply, cast, keras_op, known, tensor, value_of
from .dtype_rules import FLOATX, float_of, result_type, standardize_dtype
from .numpy_creation import linspace

NAMES = (
    "bitwise_and bitwise_or bitwise_xor bitwise_not bitwise_invert bitwise_left_shift bitwise_right_shift "
    "left_shift right_shift ldexp angle cross corrcoef correlate logspace geomspace argpartition unique "
    "bartlett blackman hamming hanning kaiser histogram"
)


# -- bitwise ----------------------------------------------------------------------------------


def _tensors_promoted(*xs):
    # Keras converts every operand (a Python int too, as int32) before promoting.
    xs = [tensor(x) for x in xs]
    dtype = result_type(*(x.dtype for x in xs))
    return [cast(x, dtype) for x in xs]


def _bitwise_binary(name, tf_op):
    def op(x, y):
        return tf_op(*_tensors_promoted(x, y))

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"``keras.ops.{name}(x, y)``: the bitwise {name.split('_')[1].upper()} of integers ``x`` and ``y``."
    return keras_op(op)


bitwise_and = _bitwise_binary("bitwise_and", _bitwise.bitwise_and)
bitwise_or = _bitwise_binary("bitwise_or", _bitwise.bitwise_or)
bitwise_xor = _bitwise_binary("bitwise_xor", _bitwise.bitwise_xor)


def _invert(x):
    """``keras.ops.bitwise_invert(x)`` (also ``bitwise_not``): each integer's bits flipped (``~x``)."""
    return _bitwise.invert(tensor(x))


bitwise_invert = keras_op(_invert, "bitwise_invert")
bitwise_not = keras_op(_invert, "bitwise_not")


def _shift(name, tf_op):
    def op(x, y):
        if isinstance(y, builtins.int) and not isinstance(y, builtins.bool):
            # A Python int shift takes x's dtype (TensorFlow converts it beside x), as in Keras.
            x = tensor(x)
            return tf_op(x, tensor(y, x.dtype))
        return tf_op(*_tensors_promoted(x, y))

    op.__name__ = op.__qualname__ = name
    direction = "left" if "left" in name else "right"
    op.__doc__ = f"``keras.ops.{name}(x, y)``: the integers ``x`` with their bits shifted {direction} by ``y``."
    return keras_op(op)


bitwise_left_shift = _shift("bitwise_left_shift", _bitwise.left_shift)
left_shift = _shift("left_shift", _bitwise.left_shift)
bitwise_right_shift = _shift("bitwise_right_shift", _bitwise.right_shift)
right_shift = _shift("right_shift", _bitwise.right_shift)


# -- elementwise ------------------------------------------------------------------------------


@keras_op
def ldexp(x1, x2):
    """``keras.ops.ldexp(x1, x2)``: ``x1 * 2 ** x2`` (``x2`` integers; float32 for integer ``x1``)."""
    x1, x2 = tensor(x1), tensor(x2)
    if np.dtype(x2.dtype).kind not in "iu":
        raise _errors.GradkitTypeError(
            f"tf.keras.ops.ldexp takes an integer exponent x2, but got {x2.dtype} (Keras raises TypeError). "
            "Cast it: tf.keras.ops.cast(x2, 'int32')."
        )
    dtype = result_type(x1.dtype, x2.dtype, float)
    x1 = cast(x1, dtype)
    scaled = _math.multiply(x1, _math.pow(tensor(2.0, dtype), cast(x2, dtype)))
    # Zeros and infinities pass unchanged (Keras' rule; 0 * inf would be NaN).
    keep = _math.logical_or(_arithmetic.is_inf(x1), _math.equal(x1, tensor(0.0, dtype)))
    return _array.where(keep, x1, scaled)


@keras_op
def angle(x):
    """``keras.ops.angle(x)``: the complex argument (a real ``x``: pi where negative, else 0, as
    TensorFlow's ``angle``); integers in float32."""
    x = tensor(x)
    return _math.angle(cast(x, float_of(x.dtype)))


def _cross(a, b, axisa, axisb, axisc):
    a, b = jnp.moveaxis(a, axisa, -1), jnp.moveaxis(b, axisb, -1)
    two = a.shape[-1] == 2 and b.shape[-1] == 2
    pad = [(0, 0)] * (a.ndim - 1) + [(0, 1)]
    a = jnp.pad(a, pad) if a.shape[-1] == 2 else a
    pad = [(0, 0)] * (b.ndim - 1) + [(0, 1)]
    b = jnp.pad(b, pad) if b.shape[-1] == 2 else b
    shape = jnp.broadcast_shapes(a.shape, b.shape)
    a, b = jnp.broadcast_to(a, shape), jnp.broadcast_to(b, shape)
    out = jnp.stack(
        [
            a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1],
            a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2],
            a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0],
        ],
        axis=-1,
    )
    return out[..., 2] if two else jnp.moveaxis(out, -1, axisc)


@keras_op
def cross(x1, x2, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """``keras.ops.cross(x1, x2, axisa=-1, axisb=-1, axisc=-1, axis=None)``: the cross product of the
    2- or 3-vectors along ``axisa``/``axisb`` (``axis`` sets all three); two 2-vectors give the z
    component only, as in NumPy."""
    x1, x2 = _tensors_promoted(x1, x2)
    if axis is not None:
        axisa = axisb = axisc = axis
    for x, a in ((x1, axisa), (x2, axisb)):
        if x.ndim == 0 or x.shape[builtins.int(a)] not in (2, 3):
            raise _errors.GradkitValueError(
                f"tf.keras.ops.cross takes vectors of 2 or 3 entries along the axis, but got shape "
                f"{tuple(x.shape)} with axis {a} (Keras raises ValueError)."
            )
    return apply(_cross, x1, x2, axisa=builtins.int(axisa), axisb=builtins.int(axisb), axisc=builtins.int(axisc))


def _corrcoef(x):
    centered = x - jnp.mean(x, axis=-1, keepdims=True)
    cov = centered @ jnp.conj(centered).T / (x.shape[-1] - 1)
    std = jnp.sqrt(jnp.real(jnp.diagonal(cov)))
    corr = cov / jnp.outer(std, std).astype(cov.dtype)
    if jnp.iscomplexobj(corr):
        return jax.lax.complex(jnp.clip(jnp.real(corr), -1.0, 1.0), jnp.clip(jnp.imag(corr), -1.0, 1.0))
    return jnp.clip(corr, -1.0, 1.0)


@keras_op
def corrcoef(x):
    """``keras.ops.corrcoef(x)``: the Pearson correlation coefficients of the rows of the 2-D ``x``
    (each row a variable), clipped to [-1, 1]; integers in float32."""
    x = tensor(x)
    x = cast(x, float_of(x.dtype))
    if x.ndim == 0:
        return tensor(np.nan, FLOATX)
    if x.ndim != 2:
        raise _errors.GradkitValueError(
            f"tf.keras.ops.corrcoef takes a 2-D x (one variable per row), but got shape {tuple(x.shape)} (Keras' "
            "TensorFlow backend fails on it). Pass x[None] for a single variable."
        )
    return apply(_corrcoef, x)


def _correlate_valid(a, v):
    n, m = a.shape[0], v.shape[0]
    windows = jnp.stack([a[k : k + m] for k in range(n - m + 1)]) if n >= m else jnp.zeros((0, m), a.dtype)
    return windows @ v


@keras_op
def correlate(x1, x2, mode="valid"):
    """``keras.ops.correlate(x1, x2, mode="valid")``: the cross-correlation ``sum_n x1[n + k] * x2[n]`` of
    two 1-D tensors, ``mode`` "valid", "same" or "full" as NumPy's; integers in float32."""
    if mode not in ("valid", "same", "full"):
        raise _errors.GradkitValueError(
            f"tf.keras.ops.correlate got mode={mode!r}; it takes 'full', 'same' or 'valid' (Keras raises ValueError)."
        )
    x1, x2 = tensor(x1), tensor(x2)
    dtype = result_type(x1.dtype, x2.dtype)
    if dtype.name == "int64":  # Keras': float64 for int64 (float32 where JAX has no 64-bit types)
        dtype = np.dtype(jax.dtypes.canonicalize_dtype(np.float64))
    elif dtype.name not in ("bfloat16", "float16", "float64"):
        dtype = np.dtype(FLOATX)
    x1, x2 = cast(x1, dtype), cast(x2, dtype)
    if x1.ndim != 1 or x2.ndim != 1:
        raise _errors.GradkitValueError(
            f"tf.keras.ops.correlate takes 1-D x1 and x2, but got shapes {tuple(x1.shape)} and {tuple(x2.shape)}."
        )
    n, m = x1.shape[0], x2.shape[0]
    if mode == "valid":
        if n < m:
            raise _errors.InvalidArgumentValueError(
                f"[gradkit] tf.keras.ops.correlate(mode='valid') got x1 of length {n}, shorter than x2 ({m}): the "
                "output size would be negative, and Keras on TensorFlow raises. Pass the longer array first, or use "
                "mode='full' or 'same'."
            )
        return apply(_correlate_valid, x1, x2)
    full = apply(_correlate_valid, apply(jnp.pad, x1, pad_width=((m - 1, m - 1),)), x2)
    if mode == "full":
        return full
    start = (n + m - 1 - builtins.max(n, m)) // 2
    return full[start : start + builtins.max(n, m)]


# -- creation ---------------------------------------------------------------------------------


@keras_op
def logspace(start, stop, num=50, endpoint=True, base=10, dtype=None, axis=0):
    """``keras.ops.logspace(start, stop, num=50, endpoint=True, base=10, dtype=None, axis=0)``:
    ``base ** linspace(start, stop, num)`` (float32 by default; an integer ``dtype`` floors the
    exponents, as Keras' ``linspace`` does)."""
    exponents = linspace(start, stop, num=num, endpoint=endpoint, dtype=dtype, axis=axis)
    return _math.pow(tensor(base, exponents.dtype), exponents)


@keras_op
def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """``keras.ops.geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0)``: ``num`` values
    evenly spaced on a log scale from ``start`` to ``stop`` (both of one sign), computed as Keras does:
    ``sign(start) * 10 ** linspace(log10|start|, log10|stop|)``."""
    dtype = standardize_dtype(dtype)
    start, stop = tensor(start), tensor(stop)
    log_start, log_stop = _math.log(_math.abs(cast(start, dtype))), _math.log(_math.abs(cast(stop, dtype)))
    log_base = _math.log(tensor(10.0, dtype))
    result = logspace(
        _math.divide(log_start, log_base),
        _math.divide(log_stop, log_base),
        num=num,
        endpoint=endpoint,
        dtype=dtype,
        axis=axis,
    )
    return _math.multiply(result, cast(_math.sign(cast(start, dtype)), result.dtype))


# -- ordering and counting --------------------------------------------------------------------


def _argpartition(x, kth):
    # The kth + 1 smallest in ascending order, then the rest in descending order (ties: the lower
    # index first), as Keras builds it from two top_k calls.
    n = x.shape[-1]
    bottom = jnp.argsort(x, axis=-1, stable=True)[..., : kth + 1]
    in_bottom = jnp.sum(jax.nn.one_hot(bottom, n, dtype=jnp.int32), axis=-2)
    # A stable sort by (in the bottom part, -x): the rest first, largest first, ties by index.
    rest = jnp.lexsort((-x, in_bottom), axis=-1)[..., : n - kth - 1]
    return jnp.concatenate([bottom, rest], axis=-1).astype(jnp.int32)


@keras_op
def argpartition(x, kth, axis=-1):
    """``keras.ops.argpartition(x, kth, axis=-1)``: int32 indices that partition ``x`` along ``axis``:
    the ``kth + 1`` smallest first (ascending), then the others (descending). Keras compares ``x`` as
    int32 (a float ``x`` is truncated first), and so does gradkit.

    Keras' TensorFlow backend masks the chosen entries with 0, so it can repeat an index where ``x``
    has zeros or negatives; gradkit gives the partition Keras means there."""
    x = cast(tensor(x), "int32")
    if axis is None:
        x, axis = _array.reshape(x, [-1]), 0
    axis = builtins.int(axis)
    n = x.shape[axis]
    kth = builtins.min(builtins.max(builtins.int(value_of(kth, "tf.keras.ops.argpartition's kth")), 0), n - 1)
    moved = apply(jnp.moveaxis, x, source=axis, destination=-1)
    return apply(jnp.moveaxis, apply(_argpartition, moved, kth=kth), source=-1, destination=axis)


def _rows(x, axis):
    """``x`` (known values) as one row per slice along ``axis``, for NumPy's lexicographic unique."""
    moved = np.moveaxis(x, axis, 0)
    return moved.reshape(moved.shape[0], -1)


@keras_op
def unique(
    x,
    sorted=True,  # noqa: A002
    return_index=False,
    return_inverse=False,
    return_counts=False,
    axis=None,
    size=None,
    fill_value=None,
):
    """``keras.ops.unique(x, sorted=True, return_index=False, return_inverse=False, return_counts=False,
    axis=None, size=None, fill_value=None)``: the distinct values of the flattened ``x`` (or slices along
    ``axis``), sorted or in order of first occurrence; with the int32 index of each one's first
    occurrence, the inverse indices (``x``'s shape when flattened) and the counts. ``size`` truncates
    or pads the results to that length (values with ``fill_value`` or 0, indices with 1, counts with 0),
    as Keras' TensorFlow backend does.

    The number of distinct values sets the result's shape, so ``x`` must be known (not traced inside
    ``tf.function``); the values are gathered from ``x``, so a gradient reaches it."""
    x = tensor(x)
    value = known(x)
    if value is None:
        raise _errors.TracedValueNeededError(
            "tf.keras.ops.unique got a tensor traced inside tf.function: the number of distinct values sets the "
            "result's shape, which must be known when tracing in gradkit (JAX). Call it eagerly."
        )
    flat = axis is None
    if flat:
        x, axis = _array.reshape(x, [-1]), 0
        rows = value.reshape(-1, 1)
    else:
        axis = builtins.int(axis) % builtins.max(x.ndim, 1)
        rows = _rows(value, axis)
    _, first, inverse, counts = np.unique(rows, return_index=True, return_inverse=True, return_counts=True, axis=0)
    inverse = inverse.reshape(-1)
    if not sorted:  # TensorFlow's order: first occurrence
        order = np.argsort(first, kind="stable")
        first, counts = first[order], counts[order]
        inverse = np.argsort(order)[inverse]
    first, inverse, counts = (a.astype(np.int32) for a in (first, inverse, counts))
    if size is not None:
        size = builtins.int(size)
        pad = builtins.max(size - len(first), 0)
        counts = np.pad(counts[:size], (0, pad))
        index = np.pad(first[:size], (0, pad), constant_values=1)
        gathered = _array.gather(x, first[:size], axis=axis)
        if pad:
            widths = [[0, 0]] * x.ndim
            widths[axis] = [0, pad]
            fill = 0 if fill_value is None else fill_value
            gathered = _array.pad(gathered, widths, constant_values=tensor(fill, gathered.dtype))
        first = index
    else:
        gathered = _array.gather(x, first, axis=axis)
    results = [gathered]
    if return_index:
        results.append(_array.constant(first))
    if return_inverse:
        results.append(_array.constant(inverse.reshape(value.shape) if flat else inverse))
    if return_counts:
        results.append(_array.constant(counts))
    return tuple(results) if len(results) > 1 else results[0]


# -- windows ----------------------------------------------------------------------------------


def _length(x, name):
    return builtins.int(value_of(x, f"tf.keras.ops.{name}'s length"))


def _bartlett(n):
    # A constant of the length: computed in NumPy's float32, as Keras' TensorFlow ops compute it.
    i = np.arange(n, dtype=np.float32)
    last = np.float32(n - 1)
    return np.where(i <= last / 2, np.float32(2) * i / last, np.float32(2) - np.float32(2) * i / last)


@keras_op
def bartlett(x):
    """``keras.ops.bartlett(x)``: the triangular (Bartlett) window of length ``x``, float32."""
    n = _length(x, "bartlett")
    if n <= 1:
        return _array.ones([n], FLOATX) if n == 1 else _array.zeros([0], FLOATX)
    return _array.constant(_bartlett(n).astype(np.float32))


def _blackman(n):
    i = np.arange(n, dtype=np.float32)
    m = np.float32(n - 1 if n > 1 else 1)
    two_pi, four_pi = np.float32(2 * np.pi), np.float32(4 * np.pi)
    window = np.float32(0.42) - np.float32(0.5) * np.cos(two_pi * i / m) + np.float32(0.08) * np.cos(four_pi * i / m)
    return np.ones_like(window) if n == 1 else window


@keras_op
def blackman(x):
    """``keras.ops.blackman(x)``: the Blackman window of length ``x``, float32."""
    return _array.constant(_blackman(builtins.max(_length(x, "blackman"), 0)).astype(np.float32))


@keras_op
def hamming(x):
    """``keras.ops.hamming(x)``: the (symmetric) Hamming window of length ``x``, float32."""
    return _signal_windows.hamming_window(_length(x, "hamming"), periodic=False)


@keras_op
def hanning(x):
    """``keras.ops.hanning(x)``: the (symmetric) Hann window of length ``x``, float32."""
    return _signal_windows.hann_window(_length(x, "hanning"), periodic=False)


@keras_op
def kaiser(x, beta):
    """``keras.ops.kaiser(x, beta)``: the Kaiser window of length ``x`` and shape ``beta``, float32."""
    return _signal_windows.kaiser_window(_length(x, "kaiser"), beta=beta)


# -- histogram --------------------------------------------------------------------------------


def _histogram(x, bins, bounds):
    # Keras' TensorFlow backend: edges from tf.linspace (start + i * step, the last one exactly the
    # upper bound) in x's dtype, then each value in [lo, hi] counted in the bin searchsorted finds.
    compute = x.dtype if jnp.issubdtype(x.dtype, jnp.floating) else jnp.float32
    lo, hi = (jnp.min(x), jnp.max(x)) if bounds is None else bounds
    lo, hi = jnp.asarray(lo).astype(compute), jnp.asarray(hi).astype(compute)
    step = (hi - lo) / builtins.max(bins, 1)
    edges = (lo + step * jnp.arange(bins + 1, dtype=compute)).at[-1].set(hi).astype(x.dtype)
    inside = (x.astype(compute) >= lo) & (x.astype(compute) <= hi)
    index = jnp.searchsorted(edges[1:-1], x, side="right")
    counts = jnp.zeros([bins], x.dtype).at[index].add(inside.astype(x.dtype), mode="drop")
    return counts, edges


@keras_op
def histogram(x, bins=10, range=None):  # noqa: A002  (Keras' argument name)
    """``keras.ops.histogram(x, bins=10, range=None)``: ``(counts, edges)`` of the 1-D ``x`` over ``bins``
    equal bins spanning ``range = (lo, hi)`` (by default ``x``'s min and max); values outside it are not
    counted, the last bin includes ``hi``. Both results have ``x``'s dtype."""
    if not isinstance(bins, builtins.int) or isinstance(bins, bool) or bins < 0:
        kind = _errors.GradkitValueError if isinstance(bins, builtins.int) else _errors.GradkitTypeError
        raise kind(
            f"tf.keras.ops.histogram takes bins as a non-negative Python int (the number of bins), but got "
            f"{bins!r:.60}. Pass e.g. bins=10."
        )
    bounds = None
    if range:
        if not isinstance(range, tuple) or len(range) != 2 or range[1] < range[0]:
            raise _errors.GradkitValueError(
                f"tf.keras.ops.histogram takes range as a tuple (lo, hi) with lo <= hi, but got {range!r:.80}. "
                "Pass e.g. range=(0.0, 1.0), or range=None for x's min and max."
            )
        bounds = tuple(builtins.float(b) for b in range)
    x = tensor(x)
    if x.ndim != 1:
        raise _errors.GradkitValueError(
            f"tf.keras.ops.histogram takes a 1-D x, but got shape {tuple(x.shape)} (Keras raises ValueError). "
            "Flatten it first: tf.keras.ops.reshape(x, [-1])."
        )
    return apply(_histogram, x, bins=bins, bounds=bounds)
