"""``tf.keras.layers``' numeric preprocessing layers: ``Identity``, ``Rescaling`` and
``Normalization`` (with ``adapt``), as Keras 3 writes them.

``Normalization`` computes ``(x - mean) / max(sqrt(variance), 1e-7)`` (``invert=True``: the
inverse) with the mean and variance given, or learned by ``adapt`` from an array, a tensor or
an iterable of batches (Keras' streaming update); adapted statistics live in non-trainable
weights ``mean``, ``variance`` and ``count``. The layers are differentiable with respect to
their input, as in Keras.

>>> import gradkit.tf as tf
>>> layer = tf.keras.layers.Normalization(axis=-1)
>>> layer.adapt(tf.constant([[0.0, 7.0, 4.0], [2.0, 9.0, 6.0], [0.0, 7.0, 4.0], [2.0, 9.0, 6.0]]))
>>> layer([[1.0, 8.0, 5.0]]).numpy().tolist()
[[0.0, 0.0, 0.0]]
>>> tf.keras.layers.Rescaling(1 / 255, offset=-1.0)(tf.constant([[255.0]])).numpy().tolist()
[[0.0]]
"""

from __future__ import annotations

import math

import jax
import numpy as np

from gradkit import _errors
from gradkit._core.variable import Variable
from gradkit._tape.tensor import Tensor

from .. import _array, _math
from .._convert import convert, wrap
from . import layer_config
from .base_layer import Layer
from .layer_names import KerasNamedLayer

_EPSILON = 1e-7  # keras.backend.epsilon()


class Identity(KerasNamedLayer, Layer):
    """``Identity()``: its input, unchanged."""

    def call(self, inputs):
        return inputs

    def compute_output_shape(self, input_shape):
        return input_shape


class Rescaling(KerasNamedLayer, Layer):
    """``Rescaling(scale, offset=0.0)``: ``inputs * scale + offset`` in the layer's dtype."""

    _keras_data_layer = True  # inputs in the compute dtype in a graph (base_layer.py)

    def __init__(self, scale, offset=0.0, **kwargs):
        super().__init__(**kwargs)
        self.scale = scale
        self.offset = offset

    def call(self, inputs):
        dtype = self.compute_dtype
        inputs = _array.cast(inputs, dtype)
        return inputs * self._aligned(self.scale, inputs) + self._aligned(self.offset, inputs)

    @staticmethod
    def _aligned(value, inputs):
        """``value`` cast and given the inputs' rank (its axes the last ones), as broadcasting would."""
        value = _array.cast(value, inputs.dtype)
        rank = len(value.shape)
        return _array.reshape(value, (1,) * (len(inputs.shape) - rank) + tuple(value.shape)) if rank else value

    def compute_output_shape(self, input_shape):
        return input_shape

    def _keras_config_values(self) -> dict:
        # Keras writes scale and offset with serialize_keras_object: an array as '__numpy__', a
        # NumPy scalar as a plain number, a tensor as '__tensor__' (JSON can hold none of them raw).
        return {"scale": _serialize_value(self.scale), "offset": _serialize_value(self.offset)}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        for key in ("scale", "offset"):
            if key in config:
                config[key] = _deserialize_value(config[key])
        return layer_config.from_config(cls, config)


def _serialize_value(value):
    """``value`` as Keras' ``serialize_keras_object`` writes a number, array or tensor."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value  # Keras' plain types (np.float64, a float, included)
    if isinstance(value, (list, tuple)):
        items = [_serialize_value(v) for v in value]
        return tuple(items) if isinstance(value, tuple) else items
    if isinstance(value, np.ndarray) and value.ndim > 0:
        return {"class_name": "__numpy__", "config": {"value": value.tolist(), "dtype": value.dtype.name}}
    if isinstance(value, (np.generic, np.ndarray)):
        return value.item()  # Keras: a NumPy scalar (or 0-d array) as a plain Python number
    if isinstance(value, (Tensor, Variable, jax.Array)):
        array = np.asarray(value.numpy() if hasattr(value, "numpy") else value)
        return {"class_name": "__tensor__", "config": {"value": array.tolist(), "dtype": array.dtype.name}}
    return value


def _deserialize_value(value):
    """What ``_serialize_value`` (or Keras) wrote, back: an array for '__numpy__', a tensor for '__tensor__'."""
    if isinstance(value, list):
        return [_deserialize_value(v) for v in value]
    if isinstance(value, dict) and value.get("class_name") in ("__numpy__", "__tensor__"):
        inner = value.get("config") or {}
        array = np.array(inner.get("value"), dtype=inner.get("dtype"))
        return array if value["class_name"] == "__numpy__" else wrap(convert(array))
    return value


class Normalization(KerasNamedLayer, Layer):
    """``Normalization(axis=-1, mean=None, variance=None, invert=False)``: inputs shifted and scaled
    to mean 0 and variance 1 along the kept ``axis`` (``None``: one mean and variance for all)."""

    _keras_data_layer = True  # inputs in the compute dtype in a graph (base_layer.py)

    def __init__(self, axis=-1, mean=None, variance=None, invert=False, **kwargs):
        super().__init__(**kwargs)
        self.built = False
        self.axis = () if axis is None else (axis,) if isinstance(axis, int) else tuple(axis)
        self.input_mean, self.input_variance, self.invert = mean, variance, bool(invert)
        self.mean = self.variance = None
        self._build_input_shape = None
        if (mean is None) != (variance is None):
            raise _errors.GradkitValueError(
                "Normalization got only one of mean and variance: when setting values directly, both `mean` and "
                f"`variance` must be set, as in Keras. Received: mean={mean} and variance={variance}."
            )
        if mean is not None:
            if np.shape(mean) != np.shape(variance):
                raise _errors.GradkitValueError(
                    f"Normalization got mean of shape {np.shape(mean)} and variance of shape {np.shape(variance)}: "
                    "they must have the same shape, as in Keras."
                )
            if len(np.shape(mean)) > len(self.axis):
                raise _errors.GradkitValueError(
                    f"Normalization got mean of shape {np.shape(mean)} for axis {self.axis}: the rank of `mean` must "
                    f"be at most the number of axes ({len(self.axis)}), as in Keras."
                )

    def build(self, input_shape):
        ndim = len(input_shape)
        if any(a < -ndim or a >= ndim for a in self.axis):
            raise _errors.GradkitValueError(
                f"Normalization '{self.name}' got inputs of rank {ndim} for axis={self.axis}: every axis must be in "
                f"[-{ndim}, {ndim}), as in Keras."
            )
        self._build_input_shape = tuple(input_shape)
        self._keep_axis = tuple(sorted(d % ndim for d in self.axis))
        self._reduce_axis = tuple(d for d in range(ndim) if d not in self._keep_axis)
        self._broadcast_shape = [input_shape[d] if d in self._keep_axis else 1 for d in range(ndim)]
        self._mean_and_var_shape = tuple(input_shape[d] for d in self._keep_axis)
        if self.input_mean is None:
            shape = self._mean_and_var_shape
            self.adapt_mean = self.add_weight(name="mean", shape=shape, initializer="zeros", trainable=False)
            self.adapt_variance = self.add_weight(name="variance", shape=shape, initializer="ones", trainable=False)
            self.count = self.add_weight(name="count", shape=(), dtype="int32", initializer="zeros", trainable=False)
            self.built = True
            self.finalize_state()
            return
        mean, variance = (np.asarray(v, np.float64) for v in (self.input_mean, self.input_variance))
        if mean.ndim:
            # Kept axes are matched from the right, as Keras matches them.
            expanded = [1] * ndim
            for i in range(1, mean.ndim + 1):
                expanded[self._keep_axis[-i]] = mean.shape[-i]
            mean, variance = mean.reshape(expanded), variance.reshape(expanded)
        self.mean = _array.cast(np.broadcast_to(mean, self._broadcast_shape), self.compute_dtype)
        self.variance = _array.cast(np.broadcast_to(variance, self._broadcast_shape), self.compute_dtype)
        self.built = True

    def finalize_state(self):
        if self.input_mean is not None or not self.built:
            return
        self.mean = _array.cast(_array.reshape(self.adapt_mean, self._broadcast_shape), self.compute_dtype)
        self.variance = _array.cast(_array.reshape(self.adapt_variance, self._broadcast_shape), self.compute_dtype)

    def adapt(self, data):
        """Learn the mean and variance from ``data``: an array or tensor (one batch), or an iterable
        of batches, a list included (Keras' streaming update over them); of a batch that is a tuple
        (a dataset of ``(x, y)`` pairs yields them), only ``x`` counts, as in Keras."""
        if isinstance(data, (np.ndarray, Tensor, Variable)) or (
            hasattr(data, "__array__") and not isinstance(data, list)
        ):
            batches, whole = [np.asarray(data, np.float64)], True
        elif hasattr(data, "__iter__"):
            # Keras' _extract_batch: a batch that is a tuple ((x, y), (x, y, sample_weight), as a
            # dataset of pairs yields) gives its first item; the labels take no part.
            batches = [np.asarray(b[0] if isinstance(b, tuple) else b, np.float64) for b in data]
            whole = False
            if not batches:
                raise _errors.GradkitValueError(
                    "Normalization.adapt got an empty iterable (no batches): pass at least one batch, e.g. "
                    "layer.adapt([x]), as Keras requires."
                )
        else:
            raise _errors.GradkitTypeError(
                f"Normalization.adapt got {type(data).__name__}: it takes an array, a tensor or an iterable of "
                "batches (a batched tf.data.Dataset is one)."
            )
        shape = batches[0].shape
        if not self.built:
            self.build(shape)
        for batch in batches:
            if any(batch.shape[d] != self._build_input_shape[d] for d in self._keep_axis):
                raise _errors.GradkitValueError(
                    f"Normalization '{self.name}' was built with input_shape={self._build_input_shape}, but adapt() "
                    f"got data of an incompatible shape {batch.shape}, as Keras refuses."
                )
        if whole:
            mean = batches[0].mean(axis=self._reduce_axis)
            variance = batches[0].var(axis=self._reduce_axis)
        else:
            mean = np.zeros(self._mean_and_var_shape)
            variance = np.zeros(self._mean_and_var_shape)
            total = 0
            for batch in batches:
                batch_mean, batch_var = batch.mean(axis=self._reduce_axis), batch.var(axis=self._reduce_axis)
                count = math.prod(batch.shape[d] for d in self._reduce_axis) if self._reduce_axis else 1
                total += count
                weight = count / total
                new_mean = mean * (1 - weight) + batch_mean * weight
                variance = (variance + (mean - new_mean) ** 2) * (1 - weight) + (
                    batch_var + (batch_mean - new_mean) ** 2
                ) * weight
                mean = new_mean
        self.adapt_mean.assign(mean.astype(np.float32))
        self.adapt_variance.assign(variance.astype(np.float32))
        self.finalize_state()

    def call(self, inputs):
        inputs = _array.cast(convert(inputs), self.compute_dtype)
        if self.mean is None:
            raise _errors.GradkitValueError(
                f"Normalization '{self.name}' has no mean and variance yet: call adapt(data) or build(input_shape), "
                "or pass mean= and variance=, before using it, as Keras requires."
            )
        scale = _math.maximum(_math.sqrt(self.variance), _EPSILON)
        if self.invert:
            return self.mean + inputs * scale
        return (inputs - self.mean) / scale

    def __call__(self, inputs, *args, **kwargs):
        if not self.built:
            # A KerasTensor (a functional model's input) has a shape but no value to convert.
            self.build(tuple(inputs.shape) if hasattr(inputs, "shape") else tuple(convert(inputs).shape))
        return super().__call__(inputs, *args, **kwargs)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "axis": self.axis,
                "invert": self.invert,
                "mean": np.array(self.input_mean).tolist(),
                "variance": np.array(self.input_variance).tolist(),
            }
        )
        return config


layer_config.BUILTIN.update({"Rescaling": ("scale", "offset"), "Identity": ()})
