"""``tf.keras.layers.Wrapper``: Keras 3's base class for a layer that wraps another one.

``Wrapper(layer)`` keeps ``layer`` as ``self.layer``, builds it with the wrapper's input shape
(its weights named under the wrapper's, ``'wrapper/dense/kernel'``), and saves it in its config,
built, so a wrapper made from the config is built too. It has no ``call`` of its own: subclass it
and write one. ``TimeDistributed`` and ``SpectralNormalization`` are Wrappers, as in Keras.

>>> import gradkit.tf as tf
>>> class Doubled(tf.keras.layers.Wrapper):
...     def call(self, inputs):
...         return 2.0 * self.layer(inputs)
>>> Doubled(tf.keras.layers.Dense(2, kernel_initializer="ones"))(tf.ones([1, 3])).numpy().tolist()
[[6.0, 6.0]]
"""

from __future__ import annotations

from gradkit import _errors
from gradkit.nn.layer import unique_name

from .. import _name_scope
from . import base_layer, layer_config
from .keras_object_serialization import deserialize_keras_object, serialize_keras_object


class Wrapper(base_layer.Layer):
    """``tf.keras.layers.Wrapper(layer, **kwargs)``: see the module docstring."""

    def __init__(self, layer, **kwargs):
        if not isinstance(layer, base_layer.Layer):
            raise _errors.GradkitValueError(
                f"{type(self).__name__} wraps a tf.keras.layers.Layer instance, as Keras does, but got {layer!r}. "
                "Pass a layer, e.g. tf.keras.layers.Dense(units)."
            )
        if kwargs.get("name") is None and type(self) is Wrapper:
            kwargs["name"] = unique_name("wrapper")
        super().__init__(**kwargs)
        self.layer = layer

    def build(self, input_shape=None) -> None:
        # The wrapped layer's weights are named under this one's ('wrapper/dense/kernel').
        if not self.layer.built:
            with _name_scope.name_scope(self.name):
                self.layer.build(input_shape)
                self.layer.built = True

    def get_config(self) -> dict:
        # As Keras: the inner layer with its build_config, so one made from the config is built.
        return {**super().get_config(), "layer": serialize_keras_object(self.layer)}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        config["layer"] = deserialize_keras_object(config["layer"], custom_objects=custom_objects)
        return layer_config.from_config(cls, config)
