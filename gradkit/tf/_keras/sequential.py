"""``tf.keras.Sequential``: a Model that calls its layers one after another."""

from __future__ import annotations

import inspect

from .model import Model


def _takes_training(layer) -> bool:
    call = getattr(layer, "call", layer)
    try:
        return "training" in inspect.signature(call).parameters
    except (TypeError, ValueError):
        return False


class Sequential(Model):
    """``tf.keras.Sequential(layers=None, trainable=True, name=None)``: ``model(x)`` calls each layer on the last output.

    ``training=`` reaches the layers that take it (Dropout, BatchNormalization). The
    variables properties are lists, as in Keras.

    >>> import gradkit.tf as tf
    >>> model = tf.keras.Sequential([tf.keras.layers.Dense(4, activation="relu"), tf.keras.layers.Dense(1)])
    >>> model(tf.ones([2, 3])).shape, [tuple(v.shape) for v in model.trainable_variables]
    ((2, 1), [(3, 4), (4,), (4, 1), (1,)])
    """

    def __init__(self, layers=None, trainable=True, name=None):
        super().__init__(trainable=trainable, name=name)
        self._sequence = list(layers or [])

    @property
    def layers(self) -> list:
        return list(self._sequence)

    def add(self, layer) -> None:
        self._sequence.append(layer)

    def pop(self):
        return self._sequence.pop()

    def call(self, inputs, training=None, mask=None):
        x = inputs
        for layer in self._sequence:
            x = layer(x, training=training) if training is not None and _takes_training(layer) else layer(x)
        return x
