"""``keras.ops.nn``' activations: ``relu``, ``sigmoid``, ``gelu``, ``softmax``, ..., each
``gradkit.tf.nn``'s op as Keras' TensorFlow backend calls it (TensorFlow's gradients: ``elu`` and
``selu`` at 0 take the linear piece).

``softmax``/``log_softmax`` take ``axis=None`` (over every entry) or a tuple of axes, as Keras does.
Keras' TensorFlow ``sigmoid``/``softmax`` also remember their logits, which its cross-entropies
then use instead of the probabilities (``keras_logits.py``); so do these.

>>> import gradkit.tf as tf
>>> ops = tf.keras.ops
>>> ops.relu(tf.constant([-1.0, 2.0])).numpy().tolist(), ops.softmax(tf.constant([0.0, 0.0])).numpy().tolist()
([0.0, 2.0], [0.5, 0.5])
"""

from __future__ import annotations

import builtins

from gradkit import _errors

from ... import _array, _math, _nn
from ..._convert import check_python_value
from .. import keras_logits
from .dispatch import cast, keras_op, tensor

NAMES = (
    "relu relu6 sigmoid softplus softsign silu swish gelu elu selu leaky_relu log_sigmoid hard_sigmoid "
    "hard_silu hard_swish celu softmax log_softmax glu hard_shrink hard_tanh soft_shrink tanh_shrink threshold "
    "squareplus sparse_plus sparse_sigmoid"
)


def _float_tensor(x, name: str):
    """``x`` as a tensor, refused when it holds integers or booleans: these activations convert a
    float constant to the input's dtype, which Keras on TensorFlow refuses (TypeError), and gradkit
    would truncate it (a uint8 input's -1 bound wrapping round to 255)."""
    x = tensor(x)
    if x.dtype.kind not in "fc" and x.dtype.name != "bfloat16":
        raise _errors.GradkitTypeError(
            f"[gradkit] tf.keras.ops.{name} takes a float tensor, as Keras on TensorFlow does, but got {x.dtype.name}. "
            f"Cast it first: tf.keras.ops.{name}(tf.keras.ops.cast(x, 'float32'))."
        )
    return x


def _constant(value, dtype, name: str, what: str):
    """A Python number argument as a tensor of ``x``'s dtype, refused where that dtype cannot hold its
    kind (0.5 as an int), as Keras on TensorFlow converts it."""
    if isinstance(value, (builtins.int, builtins.float)) and not isinstance(value, builtins.bool):
        check_python_value(value, dtype, f"[gradkit] tf.keras.ops.{name}'s {what}")
    return tensor(value, dtype)  # an int outside the dtype's range wraps round, as in Keras


def _plain(name, tf_op, doc):
    def op(x):
        return tf_op(tensor(x))

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"``keras.ops.{name}(x)``: {doc}."
    return keras_op(op)


relu = _plain("relu", _nn.relu, "``max(x, 0)``")
relu6 = _plain("relu6", _nn.relu6, "``min(max(x, 0), 6)``")


@keras_op
def sigmoid(x):
    """``keras.ops.sigmoid(x)``: ``1 / (1 + exp(-x))``."""
    x = tensor(x)
    return keras_logits.remember(_math.sigmoid(x), x)


softplus = _plain("softplus", _math.softplus, "``log(1 + exp(x))``")
softsign = _plain("softsign", _nn.softsign, "``x / (1 + abs(x))``")
selu = _plain("selu", _nn.selu, "the scaled exponential linear unit")
log_sigmoid = _plain("log_sigmoid", _math.log_sigmoid, "``log(sigmoid(x))``, computed stably")
silu = _plain("silu", _nn.silu, "``x * sigmoid(x)``")
swish = _plain("swish", _nn.silu, "``x * sigmoid(x)`` (``silu``)")


@keras_op
def gelu(x, approximate=True):
    """``keras.ops.gelu(x, approximate=True)``: the Gaussian error linear unit (the tanh approximation
    unless ``approximate`` is False)."""
    return _nn.gelu(tensor(x), approximate=approximate)


@keras_op
def elu(x, alpha=1.0):
    """``keras.ops.elu(x, alpha=1.0)``: ``x`` above 0, ``alpha * (exp(x) - 1)`` below."""
    x = tensor(x)
    out = _nn.elu(x)
    if alpha == 1:
        return out
    return _array.where(_math.greater(x, 0), out, _math.multiply(tensor(alpha, x.dtype), out))


@keras_op
def celu(x, alpha=1.0):
    """``keras.ops.celu(x, alpha=1.0)``: ``max(x, 0) + alpha * (exp(min(x, 0) / alpha) - 1)``."""
    x = _float_tensor(x, "celu")
    a, zero = tensor(alpha, x.dtype), tensor(0.0, x.dtype)
    negative = _math.multiply(a, _math.expm1(_math.divide(_math.minimum(x, zero), a)))
    return _math.add(_math.maximum(x, zero), negative)


@keras_op
def leaky_relu(x, negative_slope=0.2):
    """``keras.ops.leaky_relu(x, negative_slope=0.2)``: ``x`` above 0, ``negative_slope * x`` below."""
    return _nn.leaky_relu(tensor(x), alpha=negative_slope)


def _hard_sigmoid(x):
    x = tensor(x)
    return _math.divide(_nn.relu6(_math.add(x, tensor(3.0, x.dtype))), tensor(6.0, x.dtype))


@keras_op
def hard_sigmoid(x):
    """``keras.ops.hard_sigmoid(x)``: ``relu6(x + 3) / 6``."""
    return _hard_sigmoid(x)


def _hard_silu(x):
    """``keras.ops.hard_silu(x)`` (also ``hard_swish``): ``x * hard_sigmoid(x)``."""
    x = tensor(x)
    return _math.multiply(x, _hard_sigmoid(x))


hard_silu = keras_op(_hard_silu, "hard_silu")
hard_swish = keras_op(_hard_silu, "hard_swish")


def _over_axes(fn, x, axis):
    """``fn`` (a softmax along the last axis) over ``axis``: None (every entry) or a tuple of axes,
    moved last and flattened together, as Keras does."""
    x = tensor(x)
    if axis is None:
        return _array.reshape(fn(_array.reshape(x, [-1]), axis=-1), list(x.shape))
    if not isinstance(axis, tuple):
        return fn(x, axis=int(axis))
    chosen = [a % x.ndim for a in axis]
    kept = [a for a in builtins.range(x.ndim) if a not in chosen]
    moved = _array.transpose(x, kept + chosen)
    flat = _array.reshape(moved, [x.shape[a] for a in kept] + [-1])
    out = _array.reshape(fn(flat, axis=-1), list(moved.shape))
    order = kept + chosen
    return _array.transpose(out, sorted(builtins.range(len(order)), key=order.__getitem__))


@keras_op
def softmax(x, axis=-1):
    """``keras.ops.softmax(x, axis=-1)``: ``exp(x) / sum(exp(x))`` along ``axis`` (an int, a tuple, or
    None for every entry)."""
    x = tensor(x)
    return keras_logits.remember(_over_axes(_nn.softmax, x, axis), x)


@keras_op
def log_softmax(x, axis=-1):
    """``keras.ops.log_softmax(x, axis=-1)``: ``log(softmax(x))``, computed stably."""
    return _over_axes(_nn.log_softmax, x, axis)


@keras_op
def glu(x, axis=-1):
    """``keras.ops.glu(x, axis=-1)``: the gated linear unit, the first half of ``axis`` times the
    sigmoid of the second half."""
    x = tensor(x)
    if x.shape[axis] % 2 != 0:
        raise _errors.GradkitValueError(
            f"tf.keras.ops.glu got x of shape {tuple(x.shape)} with axis={axis}: the axis size must be divisible by "
            "2 (its halves are the values and the gates; Keras raises ValueError)."
        )
    values, gates = _array.split(x, 2, axis=axis)
    return _math.multiply(values, _math.sigmoid(gates))


@keras_op
def hard_tanh(x):
    """``keras.ops.hard_tanh(x)``: ``x`` clipped to ``[-1, 1]``."""
    x = _float_tensor(x, "hard_tanh")
    return _math.clip_by_value(x, tensor(-1, x.dtype), tensor(1, x.dtype))


@keras_op
def hard_shrink(x, threshold=0.5):
    """``keras.ops.hard_shrink(x, threshold=0.5)``: ``x`` where ``abs(x) > threshold``, else 0."""
    x = tensor(x)
    limit = _constant(threshold, x.dtype, "hard_shrink", "threshold")
    return _array.where(_math.greater(_math.abs(x), limit), x, _array.zeros_like(x))


@keras_op
def soft_shrink(x, threshold=0.5):
    """``keras.ops.soft_shrink(x, threshold=0.5)``: ``x`` moved ``threshold`` toward 0, and 0 within
    ``threshold`` of it. Integers are shrunk in float32 and truncated back, as Keras on TensorFlow."""
    x = tensor(x)
    if x.dtype.kind in "iu":
        return cast(soft_shrink(cast(x, "float32"), threshold), x.dtype)
    t = tensor(threshold, x.dtype)
    inner = _array.where(_math.less(x, _math.negative(t)), _math.add(x, t), _array.zeros_like(x))
    return _array.where(_math.greater(x, t), _math.subtract(x, t), inner)


@keras_op
def tanh_shrink(x):
    """``keras.ops.tanh_shrink(x)``: ``x - tanh(x)``."""
    x = tensor(x)
    return _math.subtract(x, _math.tanh(x))


@keras_op
def threshold(x, threshold, default_value):  # noqa: A002 - Keras' argument name
    """``keras.ops.threshold(x, threshold, default_value)``: ``x`` where ``x > threshold``, else
    ``default_value``."""
    x = tensor(x)
    limit = _constant(threshold, x.dtype, "threshold", "threshold")
    default = _constant(default_value, x.dtype, "threshold", "default_value")
    return _array.where(_math.greater(x, limit), x, _array.fill(tuple(x.shape), default))


@keras_op
def squareplus(x, b=4):
    """``keras.ops.squareplus(x, b=4)``: ``(x + sqrt(x ** 2 + b)) / 2``, a smooth ``relu``."""
    x = tensor(x)
    y = _math.add(x, _math.sqrt(_math.add(_math.square(x), tensor(b, x.dtype))))
    return _math.divide(y, tensor(2, x.dtype))


@keras_op
def sparse_plus(x):
    """``keras.ops.sparse_plus(x)``: 0 up to -1, ``(x + 1) ** 2 / 4`` up to 1, then ``x``."""
    x = _float_tensor(x, "sparse_plus")
    one = tensor(1, x.dtype)
    quarter = _math.multiply(tensor(0.25, x.dtype), _math.square(_math.add(x, one)))
    inner = _array.where(_math.less(x, one), quarter, x)
    return _array.where(_math.less_equal(x, _math.negative(one)), _array.zeros_like(x), inner)


@keras_op
def sparse_sigmoid(x):
    """``keras.ops.sparse_sigmoid(x)``: 0 up to -1, ``(x + 1) / 2`` up to 1, then 1."""
    x = _float_tensor(x, "sparse_sigmoid")
    one = tensor(1, x.dtype)
    half = _math.multiply(tensor(0.5, x.dtype), _math.add(x, one))
    inner = _array.where(_math.greater_equal(x, one), _array.ones_like(x), half)
    return _array.where(_math.less_equal(x, _math.negative(one)), _array.zeros_like(x), inner)
