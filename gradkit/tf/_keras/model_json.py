"""``model.to_json(**kwargs)`` and ``tf.keras.models.model_from_json(json_string, custom_objects=None)``,
as Keras 3 writes and reads them.

The JSON is the model as Keras' ``serialize_keras_object`` writes it (``model_config.py``), the
same dict as an archive's ``config.json``: its class, its ``get_config()``, its ``build_config``
and its ``compile_config``. No weights: a model read back has fresh ones. ``model_from_json``
reads what Keras 3 writes as well; like Keras, it builds the model and compiles it when the JSON
holds a compile config (with a fresh optimizer).

>>> import gradkit.tf as tf
>>> model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2)], name="tiny")
>>> again = tf.keras.models.model_from_json(model.to_json())
>>> again.name, again.layers[0].units, again.built
('tiny', 2, True)
"""

from __future__ import annotations

import json

from gradkit import _errors

from . import model_config
from .serialization_registry import function_entry


def to_json(model, **kwargs) -> str:
    """The model's config as a JSON string, ``json.dumps(serialize_keras_object(model), **kwargs)``."""
    kwargs.setdefault("default", function_entry)  # a custom activation function: by its name, as Keras
    return json.dumps(model_config.serialize_model(model), **kwargs)


def model_from_json(json_string, custom_objects=None):
    """The model (built, fresh weights) a JSON string from ``to_json`` describes; classes of your
    own from ``custom_objects`` or the registry."""
    if not isinstance(json_string, (str, bytes, bytearray)):
        raise _errors.GradkitTypeError(
            f"tf.keras.models.model_from_json takes the JSON string model.to_json() returns, but got "
            f"{type(json_string).__name__}. For a dict, pass json.dumps(config)."
        )
    config = json.loads(json_string)
    if not isinstance(config, dict) or "class_name" not in config:
        raise _errors.GradkitValueError(
            f"tf.keras.models.model_from_json got JSON that is not a serialized model (a dict with 'class_name'): "
            f"{str(json_string)[:120]!r}. Pass the string model.to_json() returns."
        )
    return model_config.deserialize_model(config, custom_objects)
