"""``tf.keras.activations``: Keras 3's activation functions, written as its TensorFlow backend
writes them (on gradkit.tf's ops), so values and gradients at the kinks are TensorFlow's.

Their names also reach the layers' ``activation=`` argument (Dense, Conv, Activation):
``register_names`` adds the ones gradkit.nn's table lacks.

>>> import gradkit.tf as tf
>>> tf.keras.activations.relu(tf.constant([-10.0, -5.0, 0.0, 5.0, 10.0]), max_value=5.0).numpy().tolist()
[0.0, 0.0, 0.0, 5.0, 5.0]
"""

from __future__ import annotations

from gradkit import _errors
from gradkit.nn import activations as _nn_activations

from .. import _array, _math, _nn, _ordering
from .._convert import TENSOR_LIKE, convert
from . import keras_logits


def relu(x, negative_slope=0.0, max_value=None, threshold=0.0):
    """Keras' ``relu(x, negative_slope=0.0, max_value=None, threshold=0.0)``: ``x`` above
    ``threshold`` (else 0), clipped at ``max_value``, minus ``negative_slope * relu(threshold - x)``."""
    x = convert(x)
    # A setting passed to a tf.function arrives traced: it takes the general path, as a nonzero
    # number does.
    slope, threshold_set = _nonzero(negative_slope), _nonzero(threshold)
    if slope:
        if max_value is None and not threshold_set:
            return _nn.leaky_relu(x, alpha=negative_slope)
        negative_part = _nn.relu(-x + threshold) if threshold_set else _nn.relu(-x)
    clip_max = max_value is not None
    if threshold_set:
        x = _array.where(_math.greater(x, _array.cast(threshold, x.dtype)), x, _array.zeros_like(x))
    elif not isinstance(max_value, TENSOR_LIKE) and max_value == 6:
        x = _nn.relu6(x)
        clip_max = False
    else:
        x = _nn.relu(x)
    if clip_max:
        x = _math.clip_by_value(x, _array.cast(0.0, x.dtype), _array.cast(max_value, x.dtype))
    if slope:
        x = x - negative_slope * negative_part
    return x


def _nonzero(setting) -> bool:
    return isinstance(setting, TENSOR_LIKE) or setting != 0


def leaky_relu(x, negative_slope=0.2):
    return _nn.leaky_relu(x, alpha=negative_slope)


def relu6(x):
    return _nn.relu6(x)


def elu(x, alpha=1.0):
    x = convert(x)
    res = _nn.elu(x)
    if not isinstance(alpha, TENSOR_LIKE) and alpha == 1:
        return res
    return _array.where(_math.greater(x, 0.0), res, alpha * res)  # a traced alpha (tf.function) too


def selu(x):
    return _nn.selu(x)


def gelu(x, approximate=False):
    """Exact (erf) GELU by default, as ``keras.activations.gelu``."""
    return _nn.gelu(x, approximate=approximate)


def silu(x):
    return _nn.silu(x)


def softsign(x):
    return _nn.softsign(x)


def hard_sigmoid(x):
    """Keras 3's ``relu6(x + 3) / 6`` (Keras 2's was ``clip(0.2 x + 0.5, 0, 1)``)."""
    x = convert(x)
    return _nn.relu6(x + _array.cast(3.0, x.dtype)) / _array.cast(6.0, x.dtype)


def hard_silu(x):
    x = convert(x)
    return x * hard_sigmoid(x)


def exponential(x):
    return _math.exp(x)


def mish(x):
    return x * _math.tanh(_math.softplus(x))


def _over_axes(x, axis):
    """``x - logsumexp(x)`` over ``axis``, an axis or (Keras takes one) a tuple of axes."""
    return _math.subtract(x, _math.reduce_logsumexp(x, axis=list(axis), keepdims=True))


def log_softmax(x, axis=-1):
    if isinstance(axis, (list, tuple)):
        return _over_axes(convert(x), axis)
    return _nn.log_softmax(x, axis=axis)


def softmax(x, axis=-1):
    x = convert(x)
    if isinstance(axis, (list, tuple)):
        return _math.exp(_over_axes(x, axis))
    return keras_logits.remember(_nn.softmax(x, axis=axis), x)


def log_sigmoid(x):
    return _math.log_sigmoid(x)


def linear(x):
    return x


def sigmoid(x):
    x = convert(x)
    return keras_logits.remember(_math.sigmoid(x), x)


def tanh(x):
    return _math.tanh(x)


def softplus(x):
    return _math.softplus(x)


def celu(x, alpha=1.0):
    """``max(x, 0) + alpha * expm1(min(x, 0) / alpha)``."""
    x = convert(x)
    return _math.maximum(x, 0.0) + alpha * _math.expm1(_math.minimum(x, 0.0) / alpha)


def glu(x, axis=-1):
    """The gated linear unit: the first half of ``axis`` times the sigmoid of the second half."""
    x = convert(x)
    if x.shape[axis] % 2 != 0:
        raise _errors.GradkitValueError(
            f"tf.keras.activations.glu got x of shape {list(x.shape)} with axis={axis}: the axis size must be "
            "divisible by 2 (its halves are the values and the gates), as in Keras."
        )
    values, gates = _array.split(x, 2, axis=axis)
    return values * _math.sigmoid(gates)


def hard_tanh(x):
    return _math.clip_by_value(x, -1.0, 1.0)


def hard_shrink(x, threshold=0.5):
    """``x`` where ``|x| > threshold``, else 0."""
    x = convert(x)
    return _array.where(_math.greater(_math.abs(x), threshold), x, _array.zeros_like(x))


def soft_shrink(x, threshold=0.5):
    """``x`` moved ``threshold`` towards 0, and 0 within ``threshold`` of it."""
    x = convert(x)
    shrunk = _array.where(_math.less(x, -threshold), x + threshold, _array.zeros_like(x))
    return _array.where(_math.greater(x, threshold), x - threshold, shrunk)


def tanh_shrink(x):
    x = convert(x)
    return x - _math.tanh(x)


def threshold(x, threshold, default_value):  # noqa: A002 - Keras' argument name
    """``x`` where ``x > threshold``, else ``default_value``."""
    x = convert(x)
    return _array.where(_math.greater(x, threshold), x, _array.cast(default_value, x.dtype))


def sparse_plus(x):
    """0 up to -1, ``(x + 1)**2 / 4`` up to 1, then ``x``."""
    x = convert(x)
    inner = _array.where(_math.less(x, 1.0), (1 / 4) * _math.pow(x + 1.0, 2), x)
    return _array.where(_math.less_equal(x, -1.0), _array.zeros_like(x), inner)


def sparse_sigmoid(x):
    """0 up to -1, ``(x + 1) / 2`` up to 1, then 1."""
    x = convert(x)
    inner = _array.where(_math.greater_equal(x, 1.0), _array.cast(1.0, x.dtype), 0.5 * (x + 1.0))
    return _array.where(_math.less_equal(x, -1.0), _array.cast(0.0, x.dtype), inner)


def squareplus(x, b=4):
    """``(x + sqrt(x**2 + b)) / 2``."""
    x = convert(x)
    return (x + _math.sqrt(_math.square(x) + _array.cast(b, x.dtype))) / 2


def sparsemax(x, axis=-1):
    """The Euclidean projection of ``x`` onto the probability simplex along ``axis`` (sparse
    probabilities, Martins and Astudillo 2016): ``max(x - tau, 0)``, with ``tau`` such that they
    sum to 1.

    Keras 3's sparsemax (every backend) takes ``tau`` from the sum of the cumulative sums over the
    support instead of the sum of its entries, so where more than one entry is in the support its
    values are not sparsemax's (it gives zeros for ``[0.5, 0.5, 0.5]``, not a third each); gradkit
    computes the definition. Where one entry takes all the mass the two agree.
    """
    logits = convert(x)
    ranked = _ordering.sort(logits, direction="DESCENDING", axis=axis)
    cumulative = _ordering.cumsum(ranked, axis=axis)
    shape = [1] * len(logits.shape)
    shape[axis] = -1
    ranks = _array.reshape(_array.range(1, logits.shape[axis] + 1, dtype=logits.dtype), shape)
    support = _math.greater(ranked - (cumulative - 1) / ranks, 0)  # a prefix of the ranked entries
    size = _math.reduce_sum(_array.cast(support, logits.dtype), axis=axis, keepdims=True)
    kept = _array.where(support, ranked, _array.zeros_like(ranked))
    tau = (_math.reduce_sum(kept, axis=axis, keepdims=True) - 1) / size
    return _math.maximum(logits - tau, 0.0)


BY_NAME = {
    f.__name__: f
    for f in (
        relu,
        leaky_relu,
        relu6,
        elu,
        selu,
        gelu,
        silu,
        softsign,
        hard_sigmoid,
        hard_silu,
        exponential,
        mish,
        log_softmax,
        softmax,
        log_sigmoid,
        linear,
        sigmoid,
        tanh,
        softplus,
        celu,
        glu,
        hard_tanh,
        hard_shrink,
        soft_shrink,
        tanh_shrink,
        threshold,
        sparse_plus,
        sparse_sigmoid,
        squareplus,
        sparsemax,
    )
}
BY_NAME["swish"] = silu
BY_NAME["hard_swish"] = hard_silu


def get(identifier):
    """``keras.activations.get``: None -> linear; a name -> that activation; a callable -> itself."""
    if identifier is None:
        return linear
    if callable(identifier):
        return identifier
    if isinstance(identifier, str) and identifier in BY_NAME:
        return BY_NAME[identifier]
    raise _errors.GradkitValueError(
        f"tf.keras.activations.get got {identifier!r}, which is not a Keras activation gradkit.tf has; use one of "
        f"{sorted(BY_NAME)} or a callable."
    )


def for_layer(activation):
    """A Keras layer's ``activation=``: ``'softmax'`` and ``'sigmoid'`` as Keras' own functions,
    whose outputs remember their logits for a cross-entropy (``keras_logits.py``); anything
    else as given (gradkit.nn's table resolves the other names)."""
    if isinstance(activation, str) and activation in _KEEPS_LOGITS:
        return BY_NAME[activation]
    return activation


_KEEPS_LOGITS = ("softmax", "sigmoid")


def serialize(activation):
    """``keras.activations.serialize`` for the built-in activations: their name."""
    for name, fn in BY_NAME.items():
        if fn is activation and name not in ("swish", "hard_swish"):
            return name
    raise _errors.GradkitValueError(
        f"tf.keras.activations.serialize got {activation!r}; gradkit.tf serializes its built-in activations "
        "(tf.keras.activations.relu, ...) only, to their names."
    )


def deserialize(config, custom_objects=None):
    """``keras.activations.deserialize``: a name (or ``{"class_name": name}``) to the activation,
    looked up in ``custom_objects`` first."""
    name = config.get("class_name") if isinstance(config, dict) else config
    if custom_objects and name in custom_objects:
        return custom_objects[name]
    if isinstance(name, str) and name in BY_NAME:
        return BY_NAME[name]
    raise _errors.GradkitValueError(
        f"tf.keras.activations.deserialize got {config!r}, which names no Keras activation gradkit.tf has; use one "
        f"of {sorted(BY_NAME)}, or pass the function in custom_objects."
    )


def register_names() -> None:
    """Let ``activation='gelu'`` (and the other Keras names gradkit.nn lacks) reach the layers."""
    for name, fn in BY_NAME.items():
        _nn_activations.register(name, fn)
