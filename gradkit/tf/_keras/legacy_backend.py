"""``tf.keras.backend``'s legacy functions (Keras 3 keeps them for TensorFlow programs written
for Keras 2): ``K.int_shape``, ``K.get_value``/``K.set_value`` (the learning-rate callbacks'
idiom), ``K.mean``/``K.sum``/``K.square``/``K.clip`` (old custom losses), each the TensorFlow op
it is in Keras' ``legacy/backend.py``, with its signature (``axis=None, keepdims=False``)."""

from __future__ import annotations

import math

import numpy as np

from gradkit import _errors

from . import backend_config


def _tf():
    import gradkit.tf as tf  # the ops, once gradkit.tf is loaded

    return tf


def int_shape(x):
    """The static shape as a tuple of ints (None where unknown)."""
    shape = x.shape
    return shape if isinstance(shape, tuple) else tuple(shape.as_list())


def get_value(x):
    """A tensor's or Variable's value as a NumPy array; anything else as it is."""
    return x.numpy() if hasattr(x, "numpy") else x


def set_value(x, value):
    """Assign ``value`` (converted to the Variable's dtype) to the Variable ``x``."""
    x.assign(np.asarray(value, dtype=np.dtype(x.dtype).name))


def batch_get_value(tensors):
    return [get_value(x) for x in tensors]


def batch_set_value(tuples):
    for x, value in tuples:
        set_value(x, value)


def count_params(x):
    """The number of entries of ``x``."""
    return math.prod(int_shape(x))


def cast_to_floatx(x):
    tf = _tf()
    if tf.is_tensor(x) or isinstance(x, tf.Variable):
        return tf.cast(x, backend_config.floatx())
    return np.asarray(x, dtype=backend_config.floatx())


def ndim(x):
    return len(int_shape(x))


def shape(x):
    return _tf().shape(x)


def dtype(x):
    return np.dtype(x.dtype).name


def eval(x):  # noqa: A001 (Keras' name)
    return get_value(x)


def variable(value, dtype=None, name=None, constraint=None):
    return _tf().Variable(value, dtype=dtype or backend_config.floatx(), name=name, constraint=constraint)


def constant(value, dtype=None, shape=None, name=None):
    return _tf().constant(value, dtype=dtype or backend_config.floatx(), shape=shape, name=name)


def cast(x, dtype):
    return _tf().cast(x, dtype)


def _floats_if_bool(x):
    tf = _tf()
    x = tf.convert_to_tensor(x)
    return tf.cast(x, backend_config.floatx()) if x.dtype == tf.bool else x


def mean(x, axis=None, keepdims=False):
    return _tf().reduce_mean(_floats_if_bool(x), axis, keepdims)


def std(x, axis=None, keepdims=False):
    return _tf().math.reduce_std(_floats_if_bool(x), axis=axis, keepdims=keepdims)


def var(x, axis=None, keepdims=False):
    return _tf().math.reduce_variance(_floats_if_bool(x), axis=axis, keepdims=keepdims)


def sum(x, axis=None, keepdims=False):  # noqa: A001
    return _tf().reduce_sum(x, axis, keepdims)


def max(x, axis=None, keepdims=False):  # noqa: A001
    return _tf().reduce_max(x, axis, keepdims)


def min(x, axis=None, keepdims=False):  # noqa: A001
    return _tf().reduce_min(x, axis, keepdims)


def prod(x, axis=None, keepdims=False):
    return _tf().reduce_prod(x, axis, keepdims)


def any(x, axis=None, keepdims=False):  # noqa: A001
    tf = _tf()
    return tf.reduce_any(tf.cast(x, tf.bool), axis, keepdims)


def all(x, axis=None, keepdims=False):  # noqa: A001
    tf = _tf()
    return tf.reduce_all(tf.cast(x, tf.bool), axis, keepdims)


def sqrt(x):
    """Keras' square root: negative entries count as 0."""
    tf = _tf()
    x = tf.convert_to_tensor(x)
    return tf.sqrt(tf.maximum(x, tf.zeros([], x.dtype)))


def clip(x, min_value, max_value):
    """``tf.clip_by_value``; a max below the min is the min, a None bound no bound (Keras' rules)."""
    if isinstance(min_value, (int, float)) and isinstance(max_value, (int, float)) and max_value < min_value:
        max_value = min_value
    min_value = -np.inf if min_value is None else min_value
    max_value = np.inf if max_value is None else max_value
    return _tf().clip_by_value(x, min_value, max_value)


def stop_gradient(variables):
    tf = _tf()
    if isinstance(variables, (list, tuple)):
        return [tf.stop_gradient(v) for v in variables]
    return tf.stop_gradient(variables)


def concatenate(tensors, axis=-1):
    return _tf().concat(list(tensors), axis)


def flatten(x):
    return _tf().reshape(x, [-1])


def batch_flatten(x):
    shape = int_shape(x)
    return _tf().reshape(x, [-1, math.prod(shape[1:])])


def softmax(x, axis=-1):
    if ndim(x) <= 1:
        raise _errors.GradkitValueError(
            f"Cannot apply softmax to a tensor that is 1D (Keras' error). Received input of shape {int_shape(x)}."
        )
    return _tf().nn.softmax(x, axis=axis)


def relu(x, alpha=0.0, max_value=None, threshold=0.0):
    from . import activations

    return activations.relu(x, negative_slope=alpha, max_value=max_value, threshold=threshold)


def l2_normalize(x, axis=None):
    return _tf().linalg.l2_normalize(x, axis=axis)


def one_hot(indices, num_classes):
    return _tf().one_hot(indices, depth=num_classes, axis=-1)


def tile(x, n):
    return _tf().tile(x, [n] if isinstance(n, int) else n)


def permute_dimensions(x, pattern):
    return _tf().transpose(x, perm=pattern)


def squeeze(x, axis):
    return _tf().squeeze(x, [axis])


def repeat_elements(x, rep, axis):
    return _tf().repeat(x, rep, axis=axis)


def _op(name, path):
    def op(*args, **kwargs):
        fn = _tf()
        for part in path.split("."):
            fn = getattr(fn, part)
        return fn(*args, **kwargs)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"``tf.keras.backend.{name}``: ``tf.{path}``."
    return op


# The legacy functions that are one TensorFlow op with the same arguments.
_SAME = {
    "square": "square",
    "abs": "abs",
    "exp": "exp",
    "log": "math.log",
    "sign": "sign",
    "round": "round",
    "pow": "pow",
    "maximum": "maximum",
    "minimum": "minimum",
    "equal": "equal",
    "not_equal": "not_equal",
    "greater": "greater",
    "greater_equal": "greater_equal",
    "less": "less",
    "less_equal": "less_equal",
    "sigmoid": "sigmoid",
    "tanh": "tanh",
    "softplus": "math.softplus",
    "softsign": "math.softsign",
    "elu": "nn.elu",
    "sin": "sin",
    "cos": "cos",
    "reshape": "reshape",
    "transpose": "transpose",
    "stack": "stack",
    "gather": "gather",
    "cumsum": "cumsum",
    "cumprod": "math.cumprod",
    "ones_like": "ones_like",
    "zeros_like": "zeros_like",
}
for _name, _path in _SAME.items():
    globals()[_name] = _op(_name, _path)


def argmax(x, axis=-1):
    return _tf().argmax(x, axis)


def argmin(x, axis=-1):
    return _tf().argmin(x, axis)


def expand_dims(x, axis=-1):
    return _tf().expand_dims(x, axis)


def ones(shape, dtype=None, name=None):
    return _tf().ones(shape, dtype=dtype or backend_config.floatx())


def zeros(shape, dtype=None, name=None):
    return _tf().zeros(shape, dtype=dtype or backend_config.floatx())


def eye(size, dtype=None, name=None):
    return _tf().eye(size, dtype=dtype or backend_config.floatx())


def dot(x, y):
    """``K.dot``: the last axis of ``x`` with the second-to-last of ``y`` (the last for a vector)."""
    tf = _tf()
    if ndim(y) == 1:
        return tf.tensordot(x, y, [[ndim(x) - 1], [0]])
    return tf.tensordot(x, y, [[ndim(x) - 1], [ndim(y) - 2]]) if ndim(x) > 2 or ndim(y) > 2 else tf.matmul(x, y)


def is_keras_tensor(x):
    """Whether ``x`` is a symbolic Keras tensor (``tf.keras.Input`` and what layers make of it)."""
    from .functional import KerasTensor

    return isinstance(x, KerasTensor)


NAMES = " ".join(
    [
        "int_shape get_value set_value batch_get_value batch_set_value count_params cast_to_floatx ndim shape",
        "dtype eval variable constant cast mean std var sum max min prod any all sqrt clip stop_gradient",
        "concatenate flatten batch_flatten softmax relu l2_normalize one_hot tile permute_dimensions squeeze",
        "repeat_elements argmax argmin expand_dims ones zeros eye dot is_keras_tensor",
        *_SAME,
    ]
)
