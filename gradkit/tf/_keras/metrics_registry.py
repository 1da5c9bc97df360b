"""``tf.keras.metrics.get``, ``serialize`` and ``deserialize``, as Keras 3 answers them: every
metric class by its name and its snake_case name (``"auc"``, ``"accuracy"``: the classes, made
with their defaults by ``get``), and ``"mse"``/``"mae"``/``"bce"``/... for the mean-error
classes; the dicts ``serialize`` writes; callables as they are."""

from __future__ import annotations

import inspect
import types

from . import metrics, metrics_confusion, metrics_fscore, metrics_iou, metrics_more, metrics_regression, object_registry

_MODULES = (metrics, metrics_more, metrics_confusion, metrics_fscore, metrics_iou, metrics_regression)
_CLASSES = tuple(
    dict.fromkeys(
        obj
        for module in _MODULES
        for obj in vars(module).values()
        if inspect.isclass(obj) and issubclass(obj, metrics.Metric) and not obj.__name__.startswith("_")
    )
)

# Keras' ALL_OBJECTS_DICT.
OBJECTS = {
    **object_registry.table(_CLASSES),
    "bce": metrics.BinaryCrossentropy,
    "BCE": metrics.BinaryCrossentropy,
    "mse": metrics.MeanSquaredError,
    "MSE": metrics.MeanSquaredError,
    "mae": metrics.MeanAbsoluteError,
    "MAE": metrics.MeanAbsoluteError,
    "mape": metrics_more.MeanAbsolutePercentageError,
    "MAPE": metrics_more.MeanAbsolutePercentageError,
    "msle": metrics_more.MeanSquaredLogarithmicError,
    "MSLE": metrics_more.MeanSquaredLogarithmicError,
}


# The metric functions by name (binary_accuracy, mse, ...): a serialized function comes back as
# itself (Keras 3 maps its name to the class of the same snake_case name, and then fails).
_FUNCTIONS = {
    name: obj
    for module in _MODULES
    for name, obj in vars(module).items()
    if isinstance(obj, types.FunctionType) and not name.startswith("_") and name != "require_2d"
}


def serialize(metric):
    """``tf.keras.metrics.serialize``, as Keras writes it."""
    return object_registry.serialize(metric, metrics.Metric, "keras.metrics", "metrics")


def deserialize(config, custom_objects=None):
    """``tf.keras.metrics.deserialize``: the metric a name or ``serialize``'s dict describes."""
    if isinstance(config, dict) and config.get("class_name") == "function" and config.get("module") == "builtins":
        name = config.get("config")
        if name in _FUNCTIONS and name not in (custom_objects or {}):
            return _FUNCTIONS[name]
    return object_registry.deserialize(config, OBJECTS, custom_objects, "metrics")


def get(identifier):
    """``tf.keras.metrics.get``: from a name, a ``serialize`` dict, or a callable."""
    return object_registry.get(identifier, OBJECTS, "metrics", "metric")


NAMES = "get serialize deserialize"
