"""``tf.keras.Sequential``: layers called one after another."""

from __future__ import annotations

import inspect

from gradkit.nn.layer import unique_name
from gradkit.nn.module import Module

from .._convert import convert, wrap
from .layers import KerasVariableLists


def _takes_training(layer) -> bool:
    call = getattr(layer, "call", layer)
    try:
        return "training" in inspect.signature(call).parameters
    except (TypeError, ValueError):
        return False


class Sequential(KerasVariableLists, Module):
    """``tf.keras.Sequential(layers=None, name=None)``: ``model(x)`` calls each layer on the last output.

    ``training=`` reaches the layers that take it (BatchNormalization). The variables
    properties are lists, as in Keras.

    >>> import gradkit.tf as tf
    >>> model = tf.keras.Sequential([tf.keras.layers.Dense(4, activation="relu"), tf.keras.layers.Dense(1)])
    >>> model(tf.ones([2, 3])).shape, [tuple(v.shape) for v in model.trainable_variables]
    ((2, 1), [(3, 4), (4,), (4, 1), (1,)])
    """

    def __init__(self, layers=None, trainable=True, name=None):
        super().__init__(name if name is not None else unique_name("sequential"))
        self.layers = list(layers or [])
        if not trainable:
            self.trainable = False

    def add(self, layer) -> None:
        self.layers.append(layer)

    def pop(self):
        return self.layers.pop()

    def __call__(self, inputs, training=None, mask=None):
        x = convert(inputs)
        for layer in self.layers:
            x = layer(x, training=training) if training is not None and _takes_training(layer) else layer(x)
        return wrap(x)

    call = __call__
