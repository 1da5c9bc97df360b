"""``tf.keras.metrics``: Keras 3's streaming metrics, their state in non-trainable Variables.

Because the state is Variables, a metric updated inside a ``tf.function`` step is threaded
through the compiled program (one compilation for same-shaped steps) and ``result()`` after
the step reads the new value. A metric's updates are not recorded by the tapes (as under each
tape's ``stop_recording``): as in TensorFlow, where assigning a metric's Variable ends the tape's
path through it, a metric's result has no gradient (None), and updating a metric under a tape
changes none of the tape's gradients.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors
from gradkit.nn.layer import unique_name

from .._convert import call, convert
from .._graph_helpers import tapes_paused
from .._math import _divide_no_nan
from .._namespace import missing
from . import dtype_policies, masking, stateless
from . import losses as _losses
from .layer_names import keras_snake
from .layer_weight import KerasStateVariable
from .losses import same_rank

_unrecorded = tapes_paused  # a metric's update is bookkeeping: no tape records it


def _samplewise(values, sample_weight, reduce_fn):
    """Keras' ``reduce_to_samplewise_values``: the values (weighted, reduced to one per sample)
    and the weights as Keras counts them."""
    if sample_weight is not None:
        sample_weight = sample_weight.astype(values.dtype)
        values, sample_weight = same_rank(values, sample_weight)
        weight_ndim, values_ndim = sample_weight.ndim, values.ndim
        if values_ndim > weight_ndim:
            values = reduce_fn(values, axis=tuple(range(weight_ndim, values_ndim)))
        sample_weight = jnp.broadcast_to(sample_weight, values.shape)
        values = values * sample_weight
        if weight_ndim > 1:
            sample_weight = reduce_fn(sample_weight, axis=tuple(range(1, weight_ndim)))
    if values.ndim > 1:
        values = reduce_fn(values, axis=tuple(range(1, values.ndim)))
    return values, sample_weight


def _sum_increment(values, sample_weight, dtype):
    values, _ = _samplewise(values.astype(dtype), sample_weight, jnp.sum)
    return jax.lax.stop_gradient(jnp.sum(values))


def _mean_increments(values, sample_weight, dtype):
    values, sample_weight = _samplewise(values.astype(dtype), sample_weight, jnp.mean)
    if sample_weight is not None:
        count = jnp.sum(sample_weight)
    else:
        count = jnp.asarray(values.shape[0] if values.ndim else 1, dtype)
    return jax.lax.stop_gradient(jnp.sum(values)), jax.lax.stop_gradient(count)


class Metric:
    """Keras' ``Metric``: ``update_state``, ``result``, ``reset_state``, and calling the metric
    updates it and returns the result. Its state Variables (``variables``) are non-trainable."""

    def __init__(self, dtype=None, name=None):
        # Keras' auto_name: an unnamed metric takes the next free name of its class ('auc', 'auc_1').
        self.name = name or unique_name(keras_snake(type(self).__name__))
        self._dtype = dtype_policies.compute_dtype(dtype)
        self._variables = []

    @property
    def dtype(self):
        return self._dtype

    @property
    def variables(self):
        return list(self._variables)

    def add_variable(self, shape, initializer="zeros", dtype=None, aggregation="sum", name=None):
        """A non-trainable state Variable starting at ``initializer``'s values (a Keras initializer,
        its name, or None for zeros); ``reset_state`` sets it to zeros, as Keras' does. Without a
        ``dtype`` it is float32 (Keras' floatx), whatever the metric's own dtype, as in Keras: the
        counts of a float16 metric are kept in float32 (float16 stops counting at 2048)."""
        dtype = np.dtype(dtype or "float32")
        shape = tuple(int(d) for d in ((shape,) if np.ndim(shape) == 0 and not isinstance(shape, tuple) else shape))
        if initializer in ("zeros", None):
            start = np.zeros(shape, dtype)
        else:
            from . import initializers

            start = np.asarray(initializers.get(initializer)(shape, dtype=dtype)).astype(dtype)
        variable = KerasStateVariable(start, trainable=False, name=name)
        owner = getattr(self, "name", None)
        if owner:
            variable.__dict__["_keras_path"] = f"{owner}/{variable.path}"
        self._variables.append(variable)
        return variable

    def add_weight(self, shape=(), initializer=None, dtype=None, name=None):
        """Keras 3's ``Metric.add_weight(shape=(), initializer=None, dtype=None, name=None)``: ``add_variable``."""
        return self.add_variable(shape, initializer=initializer, dtype=dtype, name=name)

    def update_state(self, *args, **kwargs):
        raise NotImplementedError(f"[gradkit] {type(self).__name__} must define update_state.")

    def result(self):
        raise NotImplementedError(f"[gradkit] {type(self).__name__} must define result.")

    def reset_state(self):
        """Every state Variable back to zeros."""
        with _unrecorded():
            for v in self._variables:
                v.assign(np.zeros(v.shape, v.dtype))

    def stateless_update_state(self, metric_variables, *args, **kwargs):
        """Keras 3's: ``update_state`` on the state given as values (1:1 with ``variables``),
        returning the new values; the metric's Variables are left as they were."""
        return stateless.stateless_update_state(self, metric_variables, args, kwargs)

    def stateless_result(self, metric_variables):
        """Keras 3's: ``result()`` of the state given as values."""
        return stateless.stateless_result(self, metric_variables)

    def stateless_reset_state(self):
        """Keras 3's: the values ``reset_state`` gives the state, the metric left as it was."""
        return stateless.stateless_reset_state(self)

    def reset_states(self):
        """Keras 2's name for ``reset_state`` (Keras 3 has only ``reset_state``)."""
        self.reset_state()

    def __call__(self, *args, **kwargs):
        self.update_state(*args, **kwargs)
        return self.result()

    def get_config(self):
        return {"name": self.name, "dtype": self.dtype}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}>"


def require_2d(metric: str, true_shape, pred_shape) -> None:
    """Keras' check of a metric that takes ``(batch_size, output_dim)`` inputs only."""
    if len(pred_shape) != 2 or len(true_shape) != 2:
        raise _errors.GradkitValueError(
            f"{metric} expects 2D inputs with shape (batch_size, output_dim), as in Keras. Received input shapes: "
            f"y_pred.shape={tuple(pred_shape)} and y_true.shape={tuple(true_shape)}. Reshape them to (batch, outputs)."
        )


def _weights(sample_weight, dtype, values=None):
    """The sample weights in ``dtype``; given weights also weigh 0 where ``values`` carry a Keras mask
    (an Embedding's ``mask_zero``), as Keras' ``reduce_to_samplewise_values`` folds it in."""
    if sample_weight is None:
        return None
    sample_weight = convert(sample_weight, dtype)
    mask = None if values is None else masking.get_keras_mask(values)
    if mask is None:
        return sample_weight
    return call(_losses._mask_weights, mask, sample_weight, dtype, "sum")


class Sum(Metric):
    """The (weighted) sum of the values seen: ``Sum()([1, 3, 5, 7])`` is 16."""

    def __init__(self, name="sum", dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.total = self.add_variable((), dtype=self._dtype, name="total")

    def update_state(self, values, sample_weight=None):
        with _unrecorded():
            weights = _weights(sample_weight, self._dtype, values)
            increment = call(_sum_increment, convert(values), weights, dtype=self._dtype)
            self.total.assign_add(increment)

    def result(self):
        return self.total.read_value()


class Mean(Metric):
    """The (weighted) mean of the values seen: ``total / count``, 0 before any update."""

    def __init__(self, name="mean", dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.total = self.add_variable((), dtype=self._dtype, name="total")
        self.count = self.add_variable((), dtype=self._dtype, name="count")

    def update_state(self, values, sample_weight=None):
        with _unrecorded():
            total, count = call(
                _mean_increments, convert(values), _weights(sample_weight, self._dtype, values), dtype=self._dtype
            )
            self.total.assign_add(total)
            self.count.assign_add(count)

    def result(self):
        return call(_divide_no_nan, self.total.value, self.count.value)


class MeanMetricWrapper(Mean):
    """The mean of ``fn(y_true, y_pred, **kwargs)`` (a per-sample function) over all samples seen."""

    def __init__(self, fn, name=None, dtype=None, **kwargs):
        super().__init__(name=name, dtype=dtype)
        self._fn = fn
        self._fn_kwargs = kwargs

    def update_state(self, y_true, y_pred, sample_weight=None):
        mask = masking.get_keras_mask(y_pred)  # masked entries (mask_zero) weigh 0, as in Keras
        with _unrecorded():
            values = self._fn(y_true, y_pred, **self._fn_kwargs)
            if mask is not None:
                weights = None if sample_weight is None else convert(sample_weight, self._dtype)
                sample_weight = call(_losses._mask_weights, mask, weights, self._dtype, "sum")
        return super().update_state(values, sample_weight=sample_weight)

    def get_config(self):
        config = {**super().get_config(), **self._fn_kwargs}
        if type(self) is MeanMetricWrapper:  # Keras' subclasses know their function; the wrapper writes it
            from .keras_object_serialization import serialize_keras_object

            config["fn"] = serialize_keras_object(self._fn)
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        if isinstance(config.get("fn"), dict):
            from .keras_object_serialization import deserialize_keras_object

            config["fn"] = deserialize_keras_object(config["fn"])
        return cls(**config)


# ---- accuracy functions (tf.keras.metrics.*_accuracy) -----------------------------------------


def _accuracy(y_true, y_pred):
    y_true, y_pred = same_rank(y_true.astype(y_pred.dtype), y_pred)
    return (y_true == y_pred).astype(jnp.float32)


def _binary_accuracy(y_true, y_pred, threshold):
    y_true, y_pred = same_rank(y_true, y_pred)
    return (y_true == (y_pred > threshold).astype(y_true.dtype)).astype(jnp.float32)


def _categorical_accuracy(y_true, y_pred):
    y_true = jnp.argmax(y_true, axis=-1).astype(y_pred.dtype)
    original_shape = y_true.shape
    reshape = y_true.ndim == y_pred.ndim
    if reshape:
        y_true = jnp.squeeze(y_true, -1)
    matches = (y_true == jnp.argmax(y_pred, axis=-1).astype(y_true.dtype)).astype(jnp.float32)
    return matches.reshape(original_shape) if reshape else matches


def _sparse_categorical_accuracy(y_true, y_pred):
    y_true = y_true.astype(y_pred.dtype)
    original_shape = y_true.shape
    reshape = y_true.ndim == y_pred.ndim and y_true.shape[-1] == 1
    if reshape:
        y_true = jnp.squeeze(y_true, -1)
    matches = (y_true == jnp.argmax(y_pred, axis=-1).astype(y_true.dtype)).astype(jnp.float32)
    if reshape:
        matches = matches.reshape(original_shape)
    if matches.ndim > 1 and matches.shape[-1] == 1:
        matches = jnp.squeeze(matches, -1)
    return matches


def accuracy(y_true, y_pred):
    """1.0 where ``y_true == y_pred``, else 0.0."""
    y_pred = convert(y_pred)
    return call(_accuracy, convert(y_true), y_pred)


def binary_accuracy(y_true, y_pred, threshold=0.5):
    """1.0 where ``y_true`` equals ``y_pred > threshold``, else 0.0."""
    return call(_binary_accuracy, convert(y_true), convert(y_pred), threshold=float(threshold))


def categorical_accuracy(y_true, y_pred):
    """1.0 where ``argmax(y_true) == argmax(y_pred)`` over the last axis, else 0.0."""
    return call(_categorical_accuracy, convert(y_true), convert(y_pred))


def sparse_categorical_accuracy(y_true, y_pred):
    """1.0 where the integer label ``y_true`` is ``argmax(y_pred)`` over the last axis, else 0.0."""
    return call(_sparse_categorical_accuracy, convert(y_true), convert(y_pred))


def _wrapper_class(cls_name, fn, default_name, doc, **options):
    """A Keras ``MeanMetricWrapper`` class over ``fn``, taking ``name``, ``dtype`` and ``options``."""

    def __init__(self, name=default_name, dtype=None, **kwargs):
        values = dict(options)
        for key, value in kwargs.items():
            if key not in options:
                raise _errors.GradkitTypeError(
                    f"tf.keras.metrics.{cls_name} got the argument {key}={value!r}, which it does not take "
                    f"(Keras raises too). Its arguments are {('name', 'dtype', *options)}."
                )
            values[key] = value
        MeanMetricWrapper.__init__(self, fn, name=name, dtype=dtype, **values)
        for key, value in values.items():
            setattr(self, key, value)

    return type(cls_name, (MeanMetricWrapper,), {"__init__": __init__, "__doc__": doc, "__module__": __name__})


Accuracy = _wrapper_class("Accuracy", accuracy, "accuracy", "How often ``y_pred`` equals ``y_true``.")
BinaryAccuracy = _wrapper_class(
    "BinaryAccuracy",
    binary_accuracy,
    "binary_accuracy",
    "How often ``y_pred > threshold`` matches binary labels.",
    threshold=0.5,
)
CategoricalAccuracy = _wrapper_class(
    "CategoricalAccuracy", categorical_accuracy, "categorical_accuracy", "How often argmaxes match one-hot labels."
)
SparseCategoricalAccuracy = _wrapper_class(
    "SparseCategoricalAccuracy",
    sparse_categorical_accuracy,
    "sparse_categorical_accuracy",
    "How often ``argmax(y_pred)`` is the integer label.",
)
MeanSquaredError = _wrapper_class(
    "MeanSquaredError", _losses.mean_squared_error, "mean_squared_error", "Mean of the squared errors."
)
MeanAbsoluteError = _wrapper_class(
    "MeanAbsoluteError", _losses.mean_absolute_error, "mean_absolute_error", "Mean of the absolute errors."
)
KLDivergence = _wrapper_class("KLDivergence", _losses.kl_divergence, "kl_divergence", "Mean KL divergence.")
BinaryCrossentropy = _wrapper_class(
    "BinaryCrossentropy",
    _losses.binary_crossentropy,
    "binary_crossentropy",
    "Mean binary cross-entropy.",
    from_logits=False,
    label_smoothing=0,
)
CategoricalCrossentropy = _wrapper_class(
    "CategoricalCrossentropy",
    _losses.categorical_crossentropy,
    "categorical_crossentropy",
    "Mean categorical cross-entropy.",
    from_logits=False,
    label_smoothing=0,
    axis=-1,
)
SparseCategoricalCrossentropy = _wrapper_class(
    "SparseCategoricalCrossentropy",
    _losses.sparse_categorical_crossentropy,
    "sparse_categorical_crossentropy",
    "Mean sparse categorical cross-entropy.",
    from_logits=False,
    ignore_class=None,
    axis=-1,
)

# The loss functions Keras also exports as metrics.
mean_squared_error = mse = MSE = _losses.mean_squared_error
mean_absolute_error = mae = MAE = _losses.mean_absolute_error
binary_crossentropy = _losses.binary_crossentropy
categorical_crossentropy = _losses.categorical_crossentropy
sparse_categorical_crossentropy = _losses.sparse_categorical_crossentropy
kl_divergence = kld = KLD = _losses.kl_divergence


def __getattr__(name):
    raise AttributeError(missing("gradkit.tf.keras.metrics", name))
