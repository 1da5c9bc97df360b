"""Keras 3's ``serialize``/``deserialize``/``get`` for the small object families whose lookup
table is ``ALL_OBJECTS_DICT`` (each class by its name and by its snake_case name):
``tf.keras.regularizers`` and ``tf.keras.constraints``.

``get`` takes a name as the table has it (``"l2"``, ``"L2"``; Keras' snake_case of ``L1L2`` is
``"l1l2"``, so ``"l1_l2"`` is not a name it knows), a ``serialize`` dict, or a callable, and
makes a class found an instance with its defaults. ``deserialize`` returns a name it does not
know unchanged, as Keras does.
"""

from __future__ import annotations

import inspect
import re
import types

from gradkit import _errors

from . import serialization_registry


def snake_case(name: str) -> str:
    """Keras' ``to_snake_case``: ``MaxNorm`` is ``max_norm``, ``L1L2`` ``l1l2``."""
    name = re.sub(r"\W+", "", name)
    name = re.sub("(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub("([a-z])([A-Z])", r"\1_\2", name).lower()


def table(classes) -> dict:
    """Keras' ``ALL_OBJECTS_DICT``: each class by its name and by its snake_case name."""
    return {**{cls.__name__: cls for cls in classes}, **{snake_case(cls.__name__): cls for cls in classes}}


def serialize(obj, base: type, module: str, kind: str):
    """``obj`` as Keras' ``serialize_keras_object`` writes it: an instance of ``base`` as
    ``{"module", "class_name", "config", "registered_name"}`` (a class defined outside gradkit.tf
    under its own module and name), a function by its name, plain values as they are."""
    if obj is None or isinstance(obj, (str, int, float, bool)):
        return obj
    if isinstance(obj, types.FunctionType):
        if obj.__name__ == "<lambda>":
            raise _errors.GradkitNotImplementedError(
                f"tf.keras.{kind}.serialize got a lambda; Keras writes its bytecode (and warns that this is unsafe), "
                "which gradkit does not. Define it with def and serialize that function instead."
            )
        return {"module": "builtins", "class_name": "function", "config": obj.__name__, "registered_name": "function"}
    if isinstance(obj, base):
        cls = type(obj)
        built_in = cls.__module__.startswith("gradkit.tf._keras.")
        own_module = cls.__module__
        return {
            "module": module if built_in else (None if own_module == "__main__" else own_module),
            "class_name": cls.__name__,
            "config": obj.get_config(),
            "registered_name": None if built_in else cls.__name__,
        }
    raise _errors.GradkitTypeError(
        f"tf.keras.{kind}.serialize got {obj!r} of type {type(obj).__name__}. Pass a tf.keras.{kind} object."
    )


def _make(found, config):
    return found.from_config(dict(config or {})) if inspect.isclass(found) else found


def deserialize(config, objects: dict, custom_objects, kind: str):
    """The object a name or ``serialize``'s dict describes (``custom_objects`` first, then
    ``objects``); a name neither knows is returned unchanged, as Keras does."""
    custom_objects = dict(custom_objects or {})
    if config is None:
        return None
    if isinstance(config, str):
        found = custom_objects.get(config, objects.get(config))
        return config if found is None else (found() if inspect.isclass(found) else found)
    if not isinstance(config, dict):
        return config
    if "class_name" not in config:
        raise _errors.GradkitValueError(
            f"tf.keras.{kind}.deserialize got the dict {config!r} without 'class_name' (Keras refuses it too). Pass "
            f"what tf.keras.{kind}.serialize returns."
        )
    class_name, inner = config["class_name"], config.get("config")
    if class_name == "function":
        key = inner if config.get("module") == "builtins" else config.get("registered_name")
        return custom_objects.get(key, objects.get(key, key))
    found = custom_objects.get(class_name, custom_objects.get(config.get("registered_name")))
    if found is None:  # registered with register_keras_serializable, or in a custom_object_scope
        found = serialization_registry.find(class_name, config.get("registered_name"))
    if found is None:
        found = objects.get(class_name)
    if found is None:
        return class_name
    return _make(found, inner)


def get(identifier, objects: dict, kind: str, noun: str):
    """Keras' ``get``: None stays None; a dict is deserialized, a name looked up; a class found
    is made with its defaults; anything not callable is refused."""
    if identifier is None:
        return None
    if isinstance(identifier, dict):
        found = deserialize(identifier, objects, None, kind)
    elif isinstance(identifier, str):
        found = objects.get(identifier)
    else:
        found = identifier
    if callable(found):
        return found() if inspect.isclass(found) else found
    raise _errors.GradkitValueError(
        f"Could not interpret {noun} identifier: {identifier!r} (Keras raises ValueError too). Pass one of the names "
        f"{', '.join(sorted(objects))}, a dict from tf.keras.{kind}.serialize, or a callable."
    )
