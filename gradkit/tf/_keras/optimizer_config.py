"""Keras 3's optimizer configs: ``get_config()`` and ``from_config(config)``.

``get_config()`` gives Keras' keys in Keras' order: ``name``, ``learning_rate`` (a float read
from the rate's Variable, a schedule as Keras serializes it), the base options, then the
optimizer's own hyperparameters. ``from_config`` makes a new optimizer from one (without its
state, as in Keras). A learning rate that is a Python callable (not a schedule) is kept in the
config as the callable: gradkit.tf does not serialize Python code.

>>> import gradkit.tf as tf
>>> config = tf.keras.optimizers.SGD(0.5, momentum=0.9).get_config()
>>> config["learning_rate"], config["momentum"], config["nesterov"]
(0.5, 0.9, False)
>>> tf.keras.optimizers.SGD.from_config(config).get_config() == config
True
"""

from __future__ import annotations

import numpy as np

from gradkit import _errors
from gradkit._core.variable import Variable

from . import schedules, serialization_registry
from .schedules import LearningRateSchedule

# Keras 3's base options, in the order its get_config lists them, with their defaults.
BASE_CONFIG = {
    "weight_decay": None,
    "clipnorm": None,
    "global_clipnorm": None,
    "clipvalue": None,
    "use_ema": False,
    "ema_momentum": 0.99,
    "ema_overwrite_frequency": None,
    "loss_scale_factor": None,
    "gradient_accumulation_steps": None,
}

_SCHEDULE_MODULE = "keras.optimizers.schedules"


def serialize_schedule(schedule: LearningRateSchedule) -> dict:
    """``keras.optimizers.schedules.serialize``: the schedule as Keras writes it in a config (a
    schedule class of your own by its module, None for ``__main__``, and its registered name)."""
    cls = type(schedule)
    if getattr(schedules, cls.__name__, None) is cls:
        return {
            "module": _SCHEDULE_MODULE,
            "class_name": cls.__name__,
            "config": schedule.get_config(),
            "registered_name": None,
        }
    return {
        "module": None if cls.__module__ == "__main__" else cls.__module__,
        "class_name": cls.__name__,
        "config": schedule.get_config(),
        "registered_name": serialization_registry.get_registered_name(cls),
    }


def deserialize_schedule(config: dict, custom_objects=None) -> LearningRateSchedule:
    """The schedule a ``serialize_schedule`` dict describes (a class of ``custom_objects`` by its
    name first, then gradkit.tf's schedules)."""
    name = config.get("class_name")
    cls = (
        (custom_objects or {}).get(name)
        or serialization_registry.get_registered_object(config.get("registered_name") or name, custom_objects)
        or getattr(schedules, str(name), None)
    )
    if not (isinstance(cls, type) and issubclass(cls, LearningRateSchedule)):
        raise _errors.GradkitValueError(
            f"the optimizer config's learning_rate names the schedule {name!r}, which gradkit.tf does not have. "
            "Pass its class in custom_objects={name: cls}, or use one of tf.keras.optimizers.schedules' "
            "(ExponentialDecay, InverseTimeDecay, PiecewiseConstantDecay, PolynomialDecay, CosineDecay, "
            "CosineDecayRestarts)."
        )
    return cls.from_config(dict(config.get("config", {})))


def _learning_rate(lr):
    if isinstance(lr, LearningRateSchedule):
        return serialize_schedule(lr)
    if isinstance(lr, Variable):
        return float(np.asarray(lr.value))
    if callable(lr):
        return lr
    return float(np.asarray(lr))


def get_config(optimizer) -> dict:
    config = {"name": optimizer.name, "learning_rate": _learning_rate(optimizer._learning_rate)}
    config.update({key: getattr(optimizer, key, default) for key, default in BASE_CONFIG.items()})
    config.update({key: getattr(optimizer, key) for key in type(optimizer)._config_keys})
    return config


def from_config(cls, config: dict, custom_objects=None):
    config = dict(config)  # Keras writes into the dict it is given; gradkit.tf leaves it alone
    if isinstance(config.get("learning_rate"), dict):
        config["learning_rate"] = deserialize_schedule(config["learning_rate"], custom_objects)
    return cls(**config)
