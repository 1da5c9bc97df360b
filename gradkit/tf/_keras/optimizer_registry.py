"""``tf.keras.optimizers.get``, ``serialize`` and ``deserialize``, as Keras 3 answers them.

Keras looks optimizers up by class name, case-insensitively, among the classes of its
``ALL_OBJECTS_DICT``; Lamb is not among them, so Keras (and gradkit.tf) cannot get it by name:
``deserialize`` returns the name it does not know unchanged and ``get`` refuses it.

>>> import gradkit.tf as tf
>>> opt = tf.keras.optimizers.get("adam")
>>> type(opt).__name__, opt.beta_1
('Adam', 0.9)
>>> config = tf.keras.optimizers.serialize(tf.keras.optimizers.SGD(0.5, name="s"))
>>> config["class_name"], config["config"]["learning_rate"]
('SGD', 0.5)
>>> tf.keras.optimizers.deserialize(config).get_config() == config["config"]
True
"""

from __future__ import annotations

import inspect

from gradkit import _errors

from . import (
    loss_scale_optimizer,
    optimizer_multi,
    optimizer_muon,
    optimizer_schedule_free,
    optimizers,
    optimizers_more,
)
from .optimizers import Optimizer

_CLASSES = (
    optimizers.Optimizer,
    optimizers.Adam,
    optimizers.SGD,
    optimizers.RMSprop,
    optimizers_more.Adadelta,
    optimizers.AdamW,
    optimizers.Adagrad,
    optimizers.Adamax,
    optimizers_more.Adafactor,
    optimizers.Nadam,
    optimizers_more.Ftrl,
    optimizers_more.Lion,
    loss_scale_optimizer.LossScaleOptimizer,
    optimizer_muon.Muon,
    optimizer_schedule_free.ScheduleFreeAdamW,
    optimizer_multi.MultiOptimizer,
)
# Keras' ALL_OBJECTS_DICT, less the optimizers gradkit.tf does not implement.
OBJECTS = {cls.__name__.lower(): cls for cls in _CLASSES}
_BUILT_IN = {id(cls) for cls in (*_CLASSES, optimizers_more.Lamb)}


def serialize(optimizer):
    """``tf.keras.optimizers.serialize``: an optimizer as ``{"module", "class_name", "config",
    "registered_name"}``; anything else is returned as it is, as Keras does."""
    if not isinstance(optimizer, Optimizer):
        return optimizer
    cls = type(optimizer)
    built_in = id(cls) in _BUILT_IN
    module = "keras.optimizers" if built_in else cls.__module__
    return {
        "module": None if module == "__main__" else module,
        "class_name": cls.__name__,
        "config": optimizer.get_config(),
        "registered_name": None if built_in else cls.__name__,
    }


def deserialize(config, custom_objects=None):
    """``tf.keras.optimizers.deserialize``: the optimizer ``serialize``'s dict describes (a class
    of ``custom_objects`` by its name first, then Keras' names, case-insensitively). A class name
    Keras does not know is returned unchanged, as Keras does."""
    custom_objects = dict(custom_objects or {})
    if not isinstance(config, dict):
        raise _errors.GradkitTypeError(
            f"tf.keras.optimizers.deserialize got {config!r} of type {type(config).__name__}; it takes the dict "
            "tf.keras.optimizers.serialize returns (Keras raises TypeError too). For a name, use "
            f"tf.keras.optimizers.get({config!r})."
        )
    if "class_name" not in config:
        raise _errors.GradkitKeyError(
            f"tf.keras.optimizers.deserialize got the dict {config!r} without 'class_name' (Keras raises KeyError "
            "too). Pass what tf.keras.optimizers.serialize returns, e.g. {'class_name': 'Adam', 'config': {}}."
        )
    class_name, inner = config["class_name"], dict(config.get("config") or {})
    cls = custom_objects.get(class_name, custom_objects.get(config.get("registered_name")))
    if cls is None and isinstance(class_name, str):
        cls = OBJECTS.get(class_name.lower())
    if cls is None:
        return class_name  # Keras returns a name it does not know unchanged.
    if cls is Optimizer:
        raise _errors.GradkitTypeError(
            "tf.keras.optimizers.deserialize cannot make the base class Optimizer (it has no update rule; Keras "
            "raises TypeError too). Name a concrete optimizer such as 'Adam' or 'SGD'."
        )
    if inspect.isclass(cls):
        return cls.from_config(inner, custom_objects=custom_objects or None)
    return cls


def get(identifier):
    """``tf.keras.optimizers.get``: an optimizer from a name (with its defaults), a ``serialize``
    dict, or an optimizer (returned as it is); None stays None."""
    if identifier is None:
        return None
    if isinstance(identifier, dict):
        found = deserialize(identifier)
    elif isinstance(identifier, str):
        found = deserialize({"class_name": identifier, "config": {}})
    else:
        found = identifier
    if isinstance(found, Optimizer):
        return found
    raise _errors.GradkitValueError(
        f"Could not interpret optimizer identifier: {identifier!r} (Keras raises ValueError too). Pass an optimizer's "
        f"name ({', '.join(sorted(n for n in OBJECTS if n != 'optimizer'))}; not 'lamb', which Keras cannot get by name either), a dict from "
        "tf.keras.optimizers.serialize, or an optimizer instance."
    )
