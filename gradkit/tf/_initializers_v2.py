"""TensorFlow's top-level initializers (``tf.zeros_initializer``, ``tf.ones_initializer``,
``tf.constant_initializer``, ``tf.random_normal_initializer``, ``tf.random_uniform_initializer``):
TensorFlow 2's ``init_ops_v2`` classes, called as ``init(shape, dtype)``.

A random initializer made with a ``seed`` draws the same values at every call (a stateless draw
with seed ``[seed, 0]``, as TensorFlow's); without one, new values at each call from the global
random state. The values are JAX's random numbers, not TensorFlow's.

>>> import gradkit.tf as tf
>>> tf.Variable(tf.constant_initializer([1.0, 2.0, 3.0, 4.0])([2, 2])).numpy().tolist()
[[1.0, 2.0], [3.0, 4.0]]
>>> init = tf.random_normal_initializer(stddev=1.0, seed=3)
>>> bool((init([3]) == init([3])).numpy().all())
True
"""

from __future__ import annotations

import numpy as np

from gradkit import _errors

from . import _random, _random_stateless
from ._array import constant, ones, zeros
from ._dtypes import as_dtype, float32

_PARTITION_SHAPE = "partition_shape"
_PARTITION_OFFSET = "partition_offset"


class Initializer:
    """TensorFlow's ``Initializer`` base class: ``init(shape, dtype=None, **kwargs)`` gives a
    tensor; ``get_config``/``from_config`` rebuild one."""

    def __call__(self, shape, dtype=None, **kwargs):
        raise _errors.GradkitNotImplementedError(
            f"{type(self).__name__} does not define __call__: a subclass of Initializer gives its tensor in "
            "__call__(self, shape, dtype=None, **kwargs), as in TensorFlow."
        )

    def get_config(self) -> dict:
        return {}

    @classmethod
    def from_config(cls, config):
        config.pop("dtype", None)
        return cls(**config)

    def _shape(self, shape, kwargs, support_partition=True):
        """The shape to fill: ``partition_shape`` where one is given, as TensorFlow's (whose
        ``partition_offset`` changes nothing these initializers give)."""
        for kwarg in kwargs:
            if kwarg not in (_PARTITION_SHAPE, _PARTITION_OFFSET):
                raise _errors.GradkitTypeError(
                    f"Keyword argument should be one of {[_PARTITION_SHAPE, _PARTITION_OFFSET]}. Received: {kwarg} "
                    f"(calling {type(self).__name__}, as TensorFlow refuses it). Call init(shape, dtype)."
                )
            if not support_partition:
                raise _errors.GradkitValueError(
                    f"{type(self).__name__} initializer doesn't support partition-related arguments, as in "
                    "TensorFlow: make it with support_partition=True, or call init(shape, dtype)."
                )
        return kwargs.get(_PARTITION_SHAPE, shape)


def _floating(dtype, what: str):
    dtype = as_dtype(dtype)
    if not dtype.is_floating:
        raise _errors.GradkitValueError(
            f"Argument `dtype` is expected to be floating point. Received: {dtype} (in {what}, as TensorFlow "
            "refuses it). Pass a floating dtype such as tf.float32."
        )
    return dtype


class Zeros(Initializer):
    """``tf.zeros_initializer()``: tensors of zeros (of any numeric or boolean dtype)."""

    def __call__(self, shape, dtype=float32, **kwargs):
        shape = self._shape(shape, kwargs)
        return zeros(shape, as_dtype(dtype))  # as_dtype refuses strings and handles


class Ones(Initializer):
    """``tf.ones_initializer()``: tensors of ones (of any numeric or boolean dtype)."""

    def __call__(self, shape, dtype=float32, **kwargs):
        shape = self._shape(shape, kwargs)
        return ones(shape, as_dtype(dtype))


class Constant(Initializer):
    """``tf.constant_initializer(value=0, support_partition=False)``: ``value`` (a Python scalar,
    a list or tuple, or a NumPy array) as ``tf.constant(value, dtype, shape)`` gives it."""

    def __init__(self, value=0, support_partition=False):
        if not (np.isscalar(value) or isinstance(value, (list, tuple, np.ndarray))):
            raise _errors.GradkitTypeError(
                f"Invalid type for initial value: {type(value).__name__}. Expected Python scalar, list or tuple of "
                "values, or numpy.ndarray (as TensorFlow's constant_initializer). For a tensor, pass x.numpy()."
            )
        self.value = value
        self.support_partition = support_partition

    def __call__(self, shape, dtype=None, **kwargs):
        self._shape(shape, kwargs, support_partition=self.support_partition)
        dtype = None if dtype is None else as_dtype(dtype)
        size = int(np.prod(_random._shape(shape, "constant_initializer")))
        count = np.size(self.value)
        if count != 1 and count != size:
            raise _errors.GradkitTypeError(
                f"tf.constant_initializer's value has {count} elements, but the shape {list(shape)} has {size}, "
                "and TensorFlow refuses it too. Give one value, or as many values as the shape holds."
            )
        return constant(self.value, dtype=dtype, shape=shape)

    def get_config(self) -> dict:
        return {"value": self.value}


class RandomUniform(Initializer):
    """``tf.random_uniform_initializer(minval=-0.05, maxval=0.05, seed=None)``: uniform draws
    from ``[minval, maxval)``, of a floating or integer dtype."""

    def __init__(self, minval=-0.05, maxval=0.05, seed=None):
        self.minval = minval
        self.maxval = maxval
        self.seed = seed

    def __call__(self, shape, dtype=float32, **kwargs):
        shape = self._shape(shape, kwargs)
        dtype = as_dtype(dtype)
        if not dtype.is_floating and not dtype.is_integer:
            raise _errors.GradkitValueError(
                f"Argument `dtype` expected to be numeric or boolean. Received {dtype} (in "
                "tf.random_uniform_initializer, as TensorFlow refuses it). Pass a floating or integer dtype."
            )
        if self.seed is None:
            return _random.uniform(shape, self.minval, self.maxval, dtype)
        return _random_stateless.stateless_uniform(shape, [self.seed, 0], self.minval, self.maxval, dtype)

    def get_config(self) -> dict:
        return {"minval": self.minval, "maxval": self.maxval, "seed": self.seed}


class RandomNormal(Initializer):
    """``tf.random_normal_initializer(mean=0.0, stddev=0.05, seed=None)``: normal draws, of a
    floating dtype."""

    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        self.mean = mean
        self.stddev = stddev
        self.seed = seed

    def __call__(self, shape, dtype=float32, **kwargs):
        shape = self._shape(shape, kwargs)
        dtype = _floating(dtype, "tf.random_normal_initializer")
        if self.seed is None:
            return _random.normal(shape, self.mean, self.stddev, dtype)
        return _random_stateless.stateless_normal(shape, [self.seed, 0], self.mean, self.stddev, dtype)

    def get_config(self) -> dict:
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed}
