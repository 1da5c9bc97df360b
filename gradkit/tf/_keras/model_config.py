"""A whole model as Keras 3's ``serialize_keras_object`` writes it (the ``config.json`` of a
``.keras`` archive), and the model made back from it.

``{"module", "class_name", "config", "registered_name", "build_config", "compile_config"}``:
a Sequential is ``keras.Sequential``, a functional model ``keras.src.models.functional``'s
``Functional``, a subclassed model its own module and class, found again by its registered name
(``register_keras_serializable``) or in ``custom_objects``. ``build_config`` is the input shape
the model was built for; ``compile_config`` the arguments of ``compile`` (the optimizer
serialized), ``{}`` for a model never compiled.
"""

from __future__ import annotations

import types

from gradkit import _errors

from . import loss_registry, metrics_registry, optimizer_registry, serialization_registry
from .losses import Loss
from .metrics import Metric

_FUNCTIONAL_MODULE = "keras.src.models.functional"


def _model_classes():
    from .model import Functional
    from .sequential import Sequential

    return Functional, Sequential


def _build_config(model):
    Functional, Sequential = _model_classes()
    if isinstance(model, Functional):
        return {"input_shape": None}
    shape = model.__dict__.get("_keras_build_input_shape")
    if shape is None and not isinstance(model, Sequential):
        shape = model.__dict__.get("_keras_build_shape")  # a subclassed model: its first call's
    return None if shape is None else {"input_shape": tuple(shape)}


# -- compile config ------------------------------------------------------------------------------


def _serialize_function(fn, module: str):
    name = serialization_registry.get_registered_name(fn)
    if fn.__name__ == "<lambda>":
        raise _errors.GradkitNotImplementedError(
            "model.save: the model was compiled with a lambda as a loss or metric; Keras writes its bytecode (an "
            "unsafe format), which gradkit does not. Define it with def (and register_keras_serializable) instead."
        )
    built_in = fn.__module__.startswith("gradkit.")
    return {
        "module": module if built_in else fn.__module__,
        "class_name": "function",
        "config": name,
        "registered_name": name,
    }


def _serialize_compile_value(value, kind: str):
    """A loss or metric as Keras' compile config holds it (names stay names)."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, (list, tuple)):
        return [_serialize_compile_value(v, kind) for v in value]
    if isinstance(value, dict):
        return {k: _serialize_compile_value(v, kind) for k, v in value.items()}
    if isinstance(value, types.FunctionType):
        return _serialize_function(value, f"keras.{kind}")
    if isinstance(value, Loss):
        return _with_registered_name(loss_registry.serialize(value), value)
    if isinstance(value, Metric):
        return _with_registered_name(metrics_registry.serialize(value), value)
    raise _errors.GradkitTypeError(
        f"model.save cannot write the compile argument {value!r} (type {type(value).__name__}): Keras' compile "
        "config holds names, loss and metric objects and functions. Compile with one of those."
    )


def _with_registered_name(config: dict, obj) -> dict:
    if config.get("registered_name") is not None:
        config["registered_name"] = serialization_registry.get_registered_name(type(obj))
    return config


def get_compile_config(model) -> dict:
    """Keras' ``get_compile_config()``: ``compile``'s arguments, serialized (``{}`` if never compiled)."""
    state = model.__dict__.get("_keras_compile_state")
    if not model.compiled or state is None:
        return {}
    given = state.given
    jit_compile = given["jit_compile"]
    return {
        "optimizer": _with_registered_name(optimizer_registry.serialize(model.optimizer), model.optimizer),
        "loss": _serialize_compile_value(given["loss"], "losses"),
        "loss_weights": _serialize_compile_value(given["loss_weights"], "losses"),
        "metrics": _serialize_compile_value(given["metrics"], "metrics"),
        "weighted_metrics": _serialize_compile_value(given["weighted_metrics"], "metrics"),
        "run_eagerly": bool(given["run_eagerly"]),
        "steps_per_execution": given.get("steps_per_execution", 1),
        # Keras writes "auto" as it resolved it; on a CPU-only TensorFlow that is False.
        "jit_compile": jit_compile if isinstance(jit_compile, bool) else False,
    }


def _deserialize_compile_value(value, registry, custom_objects):
    if isinstance(value, list):
        return [_deserialize_compile_value(v, registry, custom_objects) for v in value]
    if not isinstance(value, dict):
        return value
    if "class_name" not in value:
        return {k: _deserialize_compile_value(v, registry, custom_objects) for k, v in value.items()}
    found = serialization_registry.find(value["class_name"], value.get("registered_name"), custom_objects)
    if value["class_name"] == "function":
        found = serialization_registry.find(value.get("config"), value.get("registered_name"), custom_objects)
        # Keras' own functions by name: compile looks names up as Keras does.
        return found if found is not None else value.get("config")
    if found is not None:
        return found.from_config(dict(value.get("config") or {}))
    made = registry.deserialize(value, custom_objects)
    if isinstance(made, str) and made == value["class_name"]:
        raise _errors.GradkitTypeError(
            f"Could not locate class {made!r} of the saved compile config (module {value.get('module')!r}). Pass it "
            f"in custom_objects={{{made!r}: cls}} or register it with tf.keras.saving.register_keras_serializable()."
        )
    return made


def _keras_optimizer_by_module(config: dict, name: str):
    """A Keras optimizer that ``get`` does not know by name (Lamb), found as Keras finds it: by its
    class name in the module the config names, ``keras.optimizers``."""
    from . import optimizers_more

    if config.get("module") == "keras.optimizers" and name == "Lamb":
        return optimizers_more.Lamb.from_config(dict(config.get("config") or {}))
    return name


def compile_from_config(model, config: dict, custom_objects=None) -> None:
    """Keras' ``compile_from_config``: ``compile`` with the saved arguments, then the optimizer's
    state made for the model's trainable weights."""
    optimizer = config.get("optimizer", "rmsprop")
    if isinstance(optimizer, dict):
        found = serialization_registry.find(
            optimizer.get("class_name"), optimizer.get("registered_name"), custom_objects
        )
        optimizer = (
            found.from_config(dict(optimizer.get("config") or {}))
            if found is not None
            else optimizer_registry.deserialize(optimizer, custom_objects)
        )
        if isinstance(optimizer, str):
            optimizer = _keras_optimizer_by_module(config["optimizer"], optimizer)
    model.compile(
        optimizer=optimizer,
        loss=_deserialize_compile_value(config.get("loss"), loss_registry, custom_objects),
        loss_weights=config.get("loss_weights"),
        metrics=_deserialize_compile_value(config.get("metrics"), metrics_registry, custom_objects),
        weighted_metrics=_deserialize_compile_value(config.get("weighted_metrics"), metrics_registry, custom_objects),
        run_eagerly=bool(config.get("run_eagerly", False)),
        jit_compile=config.get("jit_compile", "auto"),
    )
    if model.built:
        model.optimizer.build(model.trainable_variables)


# -- the model -----------------------------------------------------------------------------------


def serialize_model(model) -> dict:
    """Keras' ``serialize_keras_object(model)`` (a nested model is written the same way)."""
    Functional, Sequential = _model_classes()
    cls = type(model)
    if cls is Functional:
        module, class_name, registered = _FUNCTIONAL_MODULE, "Functional", "Functional"
    elif cls is Sequential:
        module, class_name, registered = "keras", "Sequential", None
    else:
        cls = getattr(cls, "_keras_functional_of", cls)  # a subclass made functional: its own class's names
        module, class_name = cls.__module__, cls.__name__
        registered = serialization_registry.get_registered_name(cls)
    out = {"module": module, "class_name": class_name, "config": model.get_config(), "registered_name": registered}
    build = _build_config(model)
    if build is not None:
        out["build_config"] = build
    out["compile_config"] = get_compile_config(model)
    return out


def find_model_class(config: dict, custom_objects=None):
    """The model class a serialized model names, or None."""
    Functional, Sequential = _model_classes()
    class_name, module = config.get("class_name"), str(config.get("module") or "")
    found = serialization_registry.find(class_name, config.get("registered_name"), custom_objects)
    if found is not None:
        return found
    if class_name == "Functional" and module.startswith("keras"):
        return Functional
    if class_name in ("Sequential", "Model") and module.startswith("keras"):
        return Sequential if class_name == "Sequential" else Functional
    return None


def deserialize_model(config: dict, custom_objects=None, compile: bool = True):
    """The model ``serialize_model``'s dict describes, built, compiled when ``compile`` and it
    was (fresh weights: the archive's are loaded afterwards)."""
    from . import functional_config

    Functional, _ = _model_classes()
    cls = find_model_class(config, custom_objects)
    if cls is None:
        name = config.get("class_name")
        raise _errors.GradkitTypeError(
            f"Could not locate class {name!r} (module {config.get('module')!r}). Make sure custom classes are "
            "decorated with `@tf.keras.saving.register_keras_serializable()`, or pass them in "
            f"custom_objects={{{name!r}: cls}}, as Keras asks."
        )
    inner = dict(config.get("config") or {})
    with serialization_registry.custom_object_scope(
        {**serialization_registry._scope.objects, **(custom_objects or {})}
    ):
        if issubclass(cls, Functional) and "layers" in inner and "input_layers" in inner:
            model = functional_config.from_config(cls, inner, custom_objects)
        elif "custom_objects" in _parameters(cls.from_config):
            model = cls.from_config(inner, custom_objects=custom_objects)
        else:
            model = cls.from_config(inner)
        build = config.get("build_config") or {}
        shape = build.get("input_shape")
        if not model.built and isinstance(shape, (list, tuple)) and shape:
            model.build(tuple(shape))
        compile_config = config.get("compile_config")
        if compile and compile_config:
            compile_from_config(model, compile_config, custom_objects)
    return model


def _parameters(fn):
    import inspect

    try:
        return inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return {}


def serialize_sequential_layer(layer, batch_size) -> dict:
    """A Sequential's layer as Keras' ``serialize_keras_object`` writes it in the Sequential's
    config: a nested model as a model, a layer with the ``build_config`` of its shapes."""
    from . import keras_call_facts, layer_config
    from .model import Model

    if isinstance(layer, Model):
        return serialize_model(layer)
    out = layer_config.serialize_layer(layer)
    build = keras_call_facts.sequential_build_config(layer, batch_size)
    if build is not None:
        out["build_config"] = build
    return out
