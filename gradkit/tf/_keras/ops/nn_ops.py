"""``keras.ops.nn``' other ops: ``one_hot``, ``multi_hot``, the cross-entropies, ``conv``,
``max_pool``/``average_pool``, ``moments``, ``batch_normalization`` and ``normalize``.

The cross-entropies are elementwise (one value per example, no reduction), computed as Keras'
TensorFlow backend computes them: probabilities clipped to ``[epsilon, 1 - epsilon]`` unless
``from_logits``. ``conv`` and the poolings take Keras' channels_last layout (channels_first is
transposed to it and back), 1 to 3 spatial axes, on ``tf.nn``'s kernels.

>>> import gradkit.tf as tf
>>> ops = tf.keras.ops
>>> ops.one_hot(tf.constant([0, 2]), 3).numpy().tolist()
[[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
>>> [round(float(v), 4) for v in ops.sparse_categorical_crossentropy(tf.constant([1]), tf.constant([[0.2, 0.8]]))]
[0.2231]
"""

from __future__ import annotations

import numpy as np

from gradkit import _errors

from ... import _array, _conv, _losses, _math, _nn, _pooling
from .. import keras_logits
from .dispatch import cast, keras_op, tensor
from .dtype_rules import EPSILON, standardize_dtype
from .linalg_ops import norm

NAMES = (
    "one_hot multi_hot binary_crossentropy categorical_crossentropy sparse_categorical_crossentropy conv "
    "max_pool average_pool moments batch_normalization normalize"
)


def _no_sparse(name, sparse):
    if sparse:
        raise _errors.GradkitNotImplementedError(
            f"tf.keras.ops.{name} got sparse=True: gradkit has dense tensors only. Leave sparse=False (the default)."
        )


@keras_op
def one_hot(x, num_classes, axis=-1, dtype=None, sparse=False):
    """``keras.ops.one_hot(x, num_classes, axis=-1, dtype=None, sparse=False)``: 1 at each index of ``x``
    along a new ``axis`` of size ``num_classes`` (float32 by default; an index out of range gives zeros)."""
    _no_sparse("one_hot", sparse)
    dtype = standardize_dtype(dtype)
    on, off = (True, False) if dtype == np.bool_ else (None, None)
    return _array.one_hot(cast(x, "int32"), int(num_classes), on_value=on, off_value=off, axis=int(axis), dtype=dtype)


@keras_op
def multi_hot(inputs, num_classes=None, axis=-1, dtype=None, sparse=False, **kwargs):
    """``keras.ops.multi_hot(inputs, num_classes, axis=-1, dtype=None, sparse=False)``: 1 at every index
    each row of ``inputs`` holds (a 1-D ``inputs``: one row)."""
    _no_sparse("multi_hot", sparse)
    num_classes = kwargs.pop("num_tokens", num_classes)
    if num_classes is None:
        raise _errors.GradkitValueError("tf.keras.ops.multi_hot needs num_classes (Keras raises ValueError).")
    x = tensor(inputs)
    dtype = standardize_dtype(dtype)
    # The max in the output dtype, as Keras takes it (no index gives -inf for floats, not int32's min).
    hot = cast(one_hot(cast(x, "int32"), num_classes, axis=axis, dtype="int32"), dtype)
    return _math.reduce_max(hot, axis=1 if x.ndim > 1 else 0)


def _same_shape(name, target, output):
    if target.ndim != output.ndim or tuple(target.shape) != tuple(output.shape):
        raise _errors.GradkitValueError(
            f"tf.keras.ops.{name}: target of shape {tuple(target.shape)} and output of shape {tuple(output.shape)} "
            "must have the same shape (Keras raises ValueError)."
        )


def _clipped(output):
    eps = tensor(EPSILON, output.dtype)
    return _math.clip_by_value(output, eps, _math.subtract(tensor(1.0, output.dtype), eps))


@keras_op
def binary_crossentropy(target, output, from_logits=False):
    """``keras.ops.binary_crossentropy(target, output, from_logits=False)``: ``-(t log p + (1 - t) log(1 - p))``
    per entry (from ``sigmoid(output)`` when ``from_logits``)."""
    output, from_logits = keras_logits.prediction(tensor(output), from_logits, "binary_crossentropy")
    target = tensor(target, output.dtype)
    _same_shape("binary_crossentropy", target, output)
    if from_logits:
        return _losses.sigmoid_cross_entropy_with_logits(labels=target, logits=output)
    p = _clipped(output)
    one = tensor(1.0, output.dtype)
    total = _math.add(
        _math.multiply(target, _math.log(p)),
        _math.multiply(_math.subtract(one, target), _math.log(_math.subtract(one, p))),
    )
    return _math.negative(total)


@keras_op
def categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """``keras.ops.categorical_crossentropy(target, output, from_logits=False, axis=-1)``:
    ``-sum(t * log(p), axis)`` with ``p`` renormalized along ``axis`` and clipped (``softmax(output)``
    when ``from_logits``)."""
    output, from_logits = keras_logits.prediction(tensor(output), from_logits, "categorical_crossentropy")
    target = tensor(target, output.dtype)
    if target.ndim < 1:
        raise _errors.GradkitValueError(
            "tf.keras.ops.categorical_crossentropy takes target and output of rank >= 1 (Keras raises ValueError)."
        )
    _same_shape("categorical_crossentropy", target, output)
    if from_logits:
        return _losses.softmax_cross_entropy_with_logits(labels=target, logits=output, axis=int(axis))
    p = _math.divide(output, _math.reduce_sum(output, axis=int(axis), keepdims=True))
    return _math.negative(_math.reduce_sum(_math.multiply(target, _math.log(_clipped(p))), axis=int(axis)))


@keras_op
def sparse_categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """``keras.ops.sparse_categorical_crossentropy(target, output, from_logits=False, axis=-1)``:
    ``-log(p[target])`` per example, ``target`` integer class indices (a trailing axis of size 1
    allowed); ``axis`` must be the last, as on Keras' TensorFlow backend."""
    output, from_logits = keras_logits.prediction(tensor(output), from_logits, "sparse_categorical_crossentropy")
    if axis != -1 and axis != output.ndim - 1:
        raise _errors.GradkitValueError(
            f"tf.keras.ops.sparse_categorical_crossentropy got axis={axis}: only the last axis (-1) is supported, as "
            "on Keras' TensorFlow backend. Move the class axis last (tf.keras.ops.moveaxis) first."
        )
    target = cast(target, "int32")
    if target.ndim == output.ndim and target.shape[-1] == 1:
        target = _array.squeeze(target, -1)
    if output.ndim < 1 or tuple(target.shape) != tuple(output.shape[:-1]):
        raise _errors.GradkitValueError(
            f"tf.keras.ops.sparse_categorical_crossentropy: target of shape {tuple(target.shape)} must have "
            f"output's shape {tuple(output.shape)} without its last axis (Keras raises ValueError)."
        )
    logits = output if from_logits else _math.log(_clipped(output))
    return _losses.sparse_softmax_cross_entropy_with_logits(labels=target, logits=logits)


def _data_format(data_format) -> str:
    data_format = "channels_last" if data_format is None else str(data_format).lower()
    if data_format not in ("channels_last", "channels_first"):
        raise _errors.GradkitValueError(
            f"got data_format={data_format!r}; Keras takes 'channels_last' or 'channels_first' (ValueError otherwise)."
        )
    return data_format


def _tuple(value, n):
    return (int(value),) * n if np.ndim(value) == 0 else tuple(int(v) for v in value)


def _layout(inputs, data_format):
    """``inputs`` channels_last, and a function that puts a result back in ``data_format``."""
    x = tensor(inputs)
    if _data_format(data_format) == "channels_last":
        return x, lambda y: y
    n = x.ndim
    x = _array.transpose(x, [0, *range(2, n), 1])
    return x, lambda y: _array.transpose(y, [0, n - 1, *range(1, n - 1)])


_FORMATS = {1: "NWC", 2: "NHWC", 3: "NDHWC"}


@keras_op
def conv(inputs, kernel, strides=1, padding="valid", data_format=None, dilation_rate=1):
    """``keras.ops.conv(inputs, kernel, strides=1, padding="valid", data_format=None, dilation_rate=1)``:
    an N-D convolution (1 to 3 spatial axes) with a ``(*spatial, in_channels, out_channels)`` kernel;
    ``in_channels`` dividing the input's channels makes it a grouped convolution."""
    x, back = _layout(inputs, data_format)
    kernel = tensor(kernel)
    n = x.ndim - 2
    if n not in _FORMATS:
        raise _errors.GradkitValueError(
            f"tf.keras.ops.conv takes inputs of rank 3 to 5 (batch, 1 to 3 spatial axes, channels), but got shape "
            f"{tuple(x.shape)}."
        )
    out = _conv.convolution(
        x,
        kernel,
        strides=list(_tuple(strides, n)),
        padding=str(padding).upper(),
        data_format=_FORMATS[n],
        dilations=list(_tuple(dilation_rate, n)),
    )
    if int(np.prod(out.shape)) == 0 and int(np.prod(x.shape)) != 0:
        raise _errors.GradkitValueError(
            f"tf.keras.ops.conv: the convolution of inputs of shape {tuple(x.shape)} with a kernel of shape "
            f"{tuple(kernel.shape)} is empty (output shape {tuple(out.shape)}; Keras raises ValueError). Use a "
            "smaller kernel, strides or dilation_rate, or padding='same'."
        )
    return back(out)


def _pool(name, tf_op):
    def op(inputs, pool_size, strides=None, padding="valid", data_format=None):
        x, back = _layout(inputs, data_format)
        n = x.ndim - 2
        size = _tuple(pool_size, n)
        step = size if strides is None else _tuple(strides, n)
        return back(tf_op(x, list(size), list(step), str(padding).upper(), _FORMATS.get(n)))

    op.__name__ = op.__qualname__ = name
    op.__doc__ = (
        f"``keras.ops.{name}(inputs, pool_size, strides=None, padding='valid', data_format=None)``: the "
        f"{'maximum' if name == 'max_pool' else 'mean'} over each window (strides default to ``pool_size``)."
    )
    return keras_op(op)


max_pool = _pool("max_pool", _pooling.max_pool)
average_pool = _pool("average_pool", _pooling.avg_pool)


@keras_op
def moments(x, axes, keepdims=False, synchronized=False):
    """``keras.ops.moments(x, axes, keepdims=False, synchronized=False)``: ``(mean, variance)`` over
    ``axes`` (float16 computed in float32 and clipped to its range)."""
    x = tensor(x)
    dtype = np.dtype(x.dtype)
    low = dtype.name in ("float16", "bfloat16")
    if low:
        x = cast(x, "float32")
    mean, variance = _nn.moments(x, list(np.atleast_1d(axes)), keepdims=keepdims)
    if low:
        big = float(np.finfo(np.float16).max)
        mean, variance = (cast(_math.clip_by_value(v, -big, big), dtype) for v in (mean, variance))
    return mean, variance


@keras_op
def batch_normalization(x, mean, variance, axis, offset=None, scale=None, epsilon=1e-3):
    """``keras.ops.batch_normalization(x, mean, variance, axis, offset=None, scale=None, epsilon=1e-3)``:
    ``(x - mean) / sqrt(variance + epsilon) * scale + offset``, the 1-D statistics along ``axis``;
    with ``axis=-1`` the statistics broadcast against ``x`` as they are (a scalar, or a ``(3, 4)``
    mean of an ``(N, 3, 4)`` input), as in Keras."""
    x = tensor(x)
    mean, variance, offset, scale = (None if p is None else tensor(p) for p in (mean, variance, offset, scale))
    if axis != -1:
        shape = [1] * x.ndim
        shape[int(axis)] = mean.shape[0]
        mean, variance, offset, scale = (
            None if p is None else _array.reshape(p, shape) for p in (mean, variance, offset, scale)
        )
    return _nn.batch_normalization(x, mean, variance, offset, scale, epsilon)


@keras_op
def normalize(x, axis=-1, order=2, epsilon=None):
    """``keras.ops.normalize(x, axis=-1, order=2, epsilon=None)``: ``x`` divided by its ``order``-norm
    along ``axis`` (at least ``epsilon``, Keras' 1e-7 by default)."""
    if not isinstance(order, int) or isinstance(order, bool) or order < 1:
        raise _errors.GradkitValueError(
            f"tf.keras.ops.normalize got order={order!r}: it must be an int >= 1 (Keras raises ValueError)."
        )
    x = tensor(x)
    if x.ndim == 0:
        x = _array.expand_dims(x, 0)
    epsilon = EPSILON if epsilon is None else epsilon
    if order == 2:
        inverse = _math.rsqrt(_math.reduce_sum(_math.square(x), axis=axis, keepdims=True))
        inverse = _math.minimum(inverse, tensor(1.0 / epsilon, inverse.dtype))
        return _math.multiply(x, inverse)
    denominator = _math.maximum(norm(x, ord=order, axis=axis, keepdims=True), tensor(epsilon, x.dtype))
    return _math.divide(x, denominator)
