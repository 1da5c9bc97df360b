"""``tf.keras.saving.serialize_keras_object`` / ``deserialize_keras_object`` (and
``tf.keras.layers.serialize`` / ``deserialize``): any Keras object as Keras writes it in a config,
and back. A custom layer holding another layer writes it so in ``get_config`` and makes it again
in ``from_config``, as Keras' serialization guide does.

Each kind of object goes to its own serializer (layers and models, initializers, regularizers,
constraints, losses, metrics, optimizers, activations, Python functions by name); Python values,
lists and dicts of them are kept as they are. Reading, the ``module`` a dict names picks the kind.

>>> import gradkit.tf as tf
>>> config = tf.keras.saving.serialize_keras_object(tf.keras.layers.Dense(3, name="d"))
>>> config["class_name"], config["config"]["units"]
('Dense', 3)
>>> tf.keras.saving.deserialize_keras_object(config).units
3
"""

from __future__ import annotations

from gradkit import _errors


def serialize_keras_object(obj):
    """``obj`` as Keras writes it in a config (``{"module", "class_name", "config", ...}``)."""
    from . import (
        activations,
        constraints,
        initializers,
        layer_config,
        loss_registry,
        losses,
        metrics,
        metrics_registry,
        optimizer_registry,
        optimizers,
        regularizers,
    )
    from .base_layer import Layer
    from .serialization_registry import function_entry

    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, (list, tuple)):
        return [serialize_keras_object(x) for x in obj]
    if isinstance(obj, dict):
        return {k: serialize_keras_object(v) for k, v in obj.items()}
    if isinstance(obj, Layer):
        from .model import Model

        if isinstance(obj, Model):
            from . import model_config

            return model_config.serialize_model(obj)
        config = layer_config.serialize_layer(obj)
        build = obj.get_build_config()
        if build is not None:  # Keras writes it, so that the layer made again is built (set_weights works)
            config["build_config"] = build
        return config
    from .optimizer_config import serialize_schedule
    from .schedules import LearningRateSchedule

    if isinstance(obj, LearningRateSchedule):
        return serialize_schedule(obj)
    for base, serializer in (
        (initializers.Initializer, initializers.serialize),
        (regularizers.Regularizer, regularizers.serialize),
        (constraints.Constraint, constraints.serialize),
        (losses.Loss, loss_registry.serialize),
        (metrics.Metric, metrics_registry.serialize),
        (optimizers.Optimizer, optimizer_registry.serialize),
    ):
        if isinstance(obj, base):
            return serializer(obj)
    if callable(obj):
        if obj in activations.BY_NAME.values():
            return activations.serialize(obj)
        return function_entry(obj)
    raise _errors.GradkitTypeError(
        f"tf.keras.saving.serialize_keras_object got {type(obj).__name__} {obj!r}, which is no Keras object "
        "gradkit.tf writes in a config (layers, models, initializers, regularizers, constraints, losses, metrics, "
        "optimizers, functions, Python values)."
    )


def deserialize_keras_object(config, custom_objects=None, **kwargs):
    """The object ``serialize_keras_object`` wrote as ``config`` (classes and functions of your own
    from ``custom_objects`` or the registry)."""
    from . import (
        constraints,
        initializers,
        layer_config,
        loss_registry,
        metrics_registry,
        optimizer_config,
        optimizer_registry,
        regularizers,
    )
    from .serialization_registry import functions_found

    if config is None or isinstance(config, (bool, int, float, str)):
        return config
    if isinstance(config, (list, tuple)):
        return [deserialize_keras_object(x, custom_objects) for x in config]
    if not isinstance(config, dict) or "class_name" not in config:
        if isinstance(config, dict):
            return {k: deserialize_keras_object(v, custom_objects) for k, v in config.items()}
        raise _errors.GradkitTypeError(
            f"tf.keras.saving.deserialize_keras_object got {type(config).__name__} {config!r}; it takes what "
            "serialize_keras_object wrote (a dict with 'class_name' and 'config', or a Python value)."
        )
    if config.get("class_name") == "function":
        return functions_found(config, custom_objects)
    module = str(config.get("module") or "")
    readers = {
        "keras.initializers": initializers.deserialize,
        "keras.regularizers": regularizers.deserialize,
        "keras.constraints": constraints.deserialize,
        "keras.losses": loss_registry.deserialize,
        "keras.metrics": metrics_registry.deserialize,
        "keras.optimizers": optimizer_registry.deserialize,
    }
    if _is_schedule(config, custom_objects):
        return optimizer_config.deserialize_schedule(config, custom_objects)
    for prefix, reader in readers.items():
        if module.startswith(prefix):
            return reader(config, custom_objects)
    if "compile_config" in config:  # a model, as serialize_keras_object writes one: built and compiled again
        from . import model_config

        return model_config.deserialize_model(config, custom_objects)
    layer = layer_config.deserialize_layer(config, custom_objects)
    build = config.get("build_config")
    if build and not layer.built:
        layer.build_from_config(build)
    return layer


def _is_schedule(config: dict, custom_objects) -> bool:
    """Whether ``config`` describes a learning-rate schedule (Keras' or a registered one of yours)."""
    from .schedules import LearningRateSchedule
    from .serialization_registry import get_registered_object

    if str(config.get("module") or "").startswith("keras.optimizers.schedules"):
        return True
    name = config.get("registered_name") or config.get("class_name")
    cls = (custom_objects or {}).get(config.get("class_name")) or get_registered_object(name, custom_objects)
    return isinstance(cls, type) and issubclass(cls, LearningRateSchedule)
