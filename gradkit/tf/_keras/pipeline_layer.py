"""``tf.keras.layers.Pipeline(layers, name=None)``: Keras 3's layer that applies ``layers`` in order.

Unlike a ``Sequential`` model it is a plain layer (an image augmentation pipeline, typically, to
``ds.map`` over a dataset). Its ``call(inputs, training=True, mask=None)`` passes ``training`` to
each layer whose call takes it (when not None) and ``mask`` to each whose call takes one (the
mask of the previous layer's outputs after the first), as Keras does; ``training`` defaults to
True, so a Pipeline called on its own augments, and inside ``model.predict`` (training False) it
does not. ``get_config()`` is Keras': ``{"layers": [serialized layers], "name": name}``.

>>> import gradkit.tf as tf
>>> pipeline = tf.keras.layers.Pipeline([tf.keras.layers.Rescaling(2.0), tf.keras.layers.Rescaling(0.5, offset=1.0)])
>>> pipeline(tf.constant([[1.0, 2.0]])).numpy().tolist()
[[2.0, 3.0]]
>>> [layer.name for layer in pipeline.layers] == [c["config"]["name"] for c in pipeline.get_config()["layers"]]
True
"""

from __future__ import annotations

import inspect

from gradkit import _errors

from . import base_layer, keras_object_serialization, masking
from .layer_names import default_name


def _takes(layer, name: str) -> bool:
    """Whether ``layer``'s call takes ``name`` (Keras' ``_call_has_training_arg`` / ``_call_has_mask_arg``)."""
    if isinstance(layer, base_layer.Layer):
        if name == "training":
            return type(layer)._keras_training is not base_layer._NO_TRAINING
        return bool(type(layer)._keras_call_takes_mask)
    try:
        return name in inspect.signature(layer.call).parameters
    except (AttributeError, TypeError, ValueError):
        return False


class Pipeline(base_layer.Layer):
    """``tf.keras.layers.Pipeline(layers, name=None)``: ``layers`` applied one after the other;
    see the module docstring."""

    def __init__(self, layers, name=None):
        if not isinstance(layers, (list, tuple)) or not all(isinstance(x, base_layer.Layer) for x in layers):
            got = [type(x).__name__ for x in layers] if isinstance(layers, (list, tuple)) else type(layers).__name__
            raise _errors.GradkitTypeError(
                f"tf.keras.layers.Pipeline takes a list of tf.keras.layers.Layer instances, but got {got}: Keras "
                "calls each item as a layer (with its training and mask arguments). Wrap a function in "
                "tf.keras.layers.Lambda, or pass the layers as a list."
            )
        super().__init__(name=default_name(self, name))  # built by its first call, as in Keras
        # Keras keeps the list as `_pipeline_layers` and walks it (saving weights) by its public
        # property `layers`; gradkit walks attributes, so it holds the same list under both names.
        self._pipeline_layers = layers
        self.layers = layers

    def call(self, inputs, training=True, mask=None):
        outputs = inputs
        for layer in self._pipeline_layers:
            kwargs = {}
            if _takes(layer, "mask"):
                kwargs["mask"] = mask
            if _takes(layer, "training") and training is not None:
                kwargs["training"] = training
            outputs = layer(inputs, **kwargs)
            inputs = outputs
            mask = masking.masks_of(outputs)
        return outputs

    def compute_output_shape(self, input_shape):
        # Keras' Pipeline has none (Layer's default raises); gradkit's functional API does not need it.
        raise NotImplementedError(
            f"[gradkit] Layer Pipeline does not have a `compute_output_shape` method implemented, as in Keras "
            f"(asked for input_shape={tuple(input_shape)}). Call the pipeline on a tensor (or a tf.keras.Input) "
            "and read the output's shape, or ask each of pipeline.layers in turn."
        )

    def get_config(self) -> dict:
        return {
            "layers": keras_object_serialization.serialize_keras_object(self._pipeline_layers),
            "name": self.name,
        }

    @classmethod
    def from_config(cls, config):
        layers = config.get("layers")
        if not isinstance(layers, (list, tuple)):
            raise _errors.GradkitValueError(
                "The `Pipeline` config must contain a `layers` key mapping to a list of serialized layers, as Keras "
                f"requires, but got layers={layers!r}. Pass get_config()'s dict (or Keras' Pipeline config)."
            )
        config = dict(config)
        config["layers"] = [keras_object_serialization.deserialize_keras_object(x) for x in layers]
        return cls(**config)
