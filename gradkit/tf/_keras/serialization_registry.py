"""Keras' registry of custom objects: ``register_keras_serializable``, ``get_registered_name``,
``get_registered_object``, ``custom_object_scope`` (``CustomObjectScope``), ``get_custom_objects``,
as ``tf.keras.saving`` and ``tf.keras.utils`` export them.

A class registered as ``package>name`` (``"Custom>MyLayer"`` by default) is found by gradkit's
deserialization (``from_config`` of a Sequential or functional model, ``tf.keras.*.deserialize``)
by that name or by its class name, as Keras finds it; so is a class named in an enclosing
``custom_object_scope``.

>>> import gradkit.tf as tf
>>> @tf.keras.saving.register_keras_serializable(package="demo")
... class Scale(tf.keras.layers.Layer):
...     def call(self, x):
...         return 2.0 * x
>>> tf.keras.saving.get_registered_name(Scale), tf.keras.saving.get_registered_object("demo>Scale") is Scale
('demo>Scale', True)
"""

from __future__ import annotations

import inspect
import threading

from gradkit import _errors

# Keras' GLOBAL_CUSTOM_OBJECTS (registered name -> object) and GLOBAL_CUSTOM_NAMES (object -> name).
_OBJECTS: dict = {}
_NAMES: dict = {}


class _Scope(threading.local):
    def __init__(self):
        self.objects: dict = {}


_scope = _Scope()


def register_keras_serializable(package="Custom", name=None):
    """A decorator registering a class (with ``get_config``) or function as ``f"{package}>{name}"``
    (``name``: its ``__name__``), so deserialization finds it without ``custom_objects``."""

    def decorator(arg):
        class_name = name if name is not None else arg.__name__
        registered_name = f"{package}>{class_name}"
        if inspect.isclass(arg) and not hasattr(arg, "get_config"):
            raise _errors.GradkitValueError(
                f"tf.keras.saving.register_keras_serializable got the class {arg.__name__}, which has no get_config() "
                "method: Keras cannot register it (ValueError). Define get_config() (and from_config if its "
                "arguments are not the config's keys)."
            )
        _OBJECTS[registered_name] = arg
        _NAMES[arg] = registered_name
        return arg

    return decorator


def get_registered_name(obj):
    """The name ``obj`` was registered under, else its ``__name__``."""
    try:
        return _NAMES[obj]
    except (KeyError, TypeError):
        return obj.__name__


def get_registered_object(name, custom_objects=None, module_objects=None):
    """The object registered as ``name``: from an enclosing ``custom_object_scope`` first, then the
    registry, then ``custom_objects``, then ``module_objects``; None if none has it."""
    if name in _scope.objects:
        return _scope.objects[name]
    if name in _OBJECTS:
        return _OBJECTS[name]
    if custom_objects and name in custom_objects:
        return custom_objects[name]
    if module_objects and name in module_objects:
        return module_objects[name]
    return None


def get_custom_objects():
    """The registry itself (a dict of registered name -> object); adding to it registers an object."""
    return _OBJECTS


class CustomObjectScope:
    """``with tf.keras.saving.custom_object_scope({"MyLayer": MyLayer}): ...``: within it,
    deserialization finds these objects by name (the scope's dict replaces an enclosing one's,
    as in Keras)."""

    def __init__(self, custom_objects):
        self.custom_objects = dict(custom_objects or {})
        self.backup = None

    def __enter__(self):
        self.backup = dict(_scope.objects)
        _scope.objects = dict(self.custom_objects)
        return self

    def __exit__(self, *args, **kwargs):
        _scope.objects = dict(self.backup)


custom_object_scope = CustomObjectScope


def find(class_name, registered_name=None, custom_objects=None):
    """The class or function a config names (by its registered name, then its class name), from
    ``custom_objects``, an enclosing scope or the registry, as Keras' deserialization looks; None
    if none has it (gradkit's own classes are looked up by the caller)."""
    custom_objects = custom_objects or {}
    for key in (registered_name, class_name):
        if key is None:
            continue
        found = custom_objects.get(key) or get_registered_object(key)
        if found is not None:
            return found
    return None


def clear_scope() -> None:
    """``tf.keras.backend.clear_session``'s part: no custom object scope is in force."""
    _scope.objects = {}


def function_entry(fn) -> dict:
    """A Python function in a saved config, as Keras writes one: by its name (its registered name
    where it is registered), found again through ``custom_objects`` or the registry."""
    if not callable(fn) or not hasattr(fn, "__name__"):
        raise TypeError(f"Object of type {type(fn).__name__} is not JSON serializable")
    registered = _NAMES.get(fn)
    return {
        "module": "builtins",
        "class_name": "function",
        "config": registered or fn.__name__,
        "registered_name": "function",
    }


def _keras_loss_function(name: str):
    from . import loss_registry

    found = loss_registry.OBJECTS.get(name)
    return found if inspect.isfunction(found) else None


def functions_found(config, custom_objects=None):
    """``config`` with each function entry (``function_entry``'s) replaced by the function, or by
    its name where it names a built-in activation (found by the layer); a [gradkit] error where
    neither custom_objects nor the registry has it."""
    if isinstance(config, list):
        return [functions_found(v, custom_objects) for v in config]
    if not isinstance(config, dict):
        return config
    if config.get("class_name") == "function" and isinstance(config.get("config"), str):
        name = config["config"]
        found = find(name, None, custom_objects)
        if found is None:
            found = _keras_loss_function(name)  # Keras finds its own loss functions by name
        if found is not None:
            return found
        from . import activations

        if name in activations.BY_NAME:
            return name
        raise _errors.GradkitTypeError(
            f"The config names the function {name!r}, which is not a Keras activation and is not registered. Pass "
            f"it in custom_objects={{{name!r}: {name}}} (or register it with register_keras_serializable)."
        )
    return {k: functions_found(v, custom_objects) for k, v in config.items()}
