"""Keras 3's ``add_loss`` and ``losses`` for gradkit.tf's layers and models.

A layer's ``call`` adds scalar tensors with ``self.add_loss(x)`` (an activity regularizer,
an auxiliary loss); ``layer.losses`` lists them, the layer's own first, then its sublayers',
in Keras' order. As in Keras 3, each outermost layer call starts afresh: it clears the losses
of the layer called and of every layer inside it, so ``sum(model.losses)`` after
``model(x)`` is that call's. Tensors added under a tape are recorded, so a training step that
adds ``sum(model.losses)`` to its loss differentiates through them.

>>> import gradkit.tf as tf
>>> class ActivityRegularization(tf.keras.layers.Layer):
...     def call(self, inputs):
...         self.add_loss(1e-2 * tf.reduce_sum(inputs))
...         return inputs
>>> layer = ActivityRegularization()
>>> _ = layer(tf.ones([2, 3])); _ = layer(tf.ones([2, 3]))
>>> [round(float(x), 4) for x in layer.losses]
[0.06]
"""

from __future__ import annotations

import collections

import jax

from gradkit import _errors
from gradkit._tape.tensor import Tensor

from .._convert import wrap


def _is_tensor(x) -> bool:
    return isinstance(x, (Tensor, jax.Array))


class LayerLosses:
    """The ``add_loss``/``losses`` part of ``tf.keras.layers.Layer``."""

    def add_loss(self, loss) -> None:
        """Add a scalar loss tensor (or a list of them) to the layer's ``losses``."""
        losses = list(loss) if isinstance(loss, (list, tuple)) else [loss]
        for x in losses:
            if not _is_tensor(x):
                raise _errors.GradkitValueError(
                    f"{type(self).__name__}.add_loss takes tensors computed in call() or build(), as Keras does, "
                    f"but got {type(x).__name__} {x!r}. Pass a tensor, e.g. tf.reduce_sum(inputs) * 1e-2 (a "
                    "constant: tf.constant(value))."
                )
        from . import functional

        if functional.running_symbolically():
            return  # a call on zeros that builds a functional model: Keras' symbolic call keeps no loss
        self.__dict__.setdefault("_keras_losses", []).extend(wrap(x) for x in losses)

    def _keras_flatten_layers(self) -> list:
        # Keras' _flatten_layers(include_self=False): a deque, each layer's sublayers put in front.
        found, seen = [], set()
        queue = collections.deque(self._keras_layers())
        while queue:
            layer = queue.popleft()
            if id(layer) in seen:
                continue
            seen.add(id(layer))
            found.append(layer)
            if isinstance(layer, LayerLosses):
                queue.extendleft(layer._keras_layers())
        return found

    @property
    def losses(self) -> list:
        """The losses ``add_loss`` added during the last outermost call: the layer's own, then
        its sublayers'; then the trainable weights' regularization penalties, computed now."""
        from .layer_regularization import regularization_losses

        own = list(self.__dict__.get("_keras_losses", []))
        for layer in self._keras_flatten_layers():
            if isinstance(layer, LayerLosses):
                own += layer.__dict__.get("_keras_losses", [])
        return own + regularization_losses(self.trainable_weights)

    def _keras_clear_losses(self) -> None:
        self.__dict__["_keras_losses"] = []
        for layer in self._keras_layers():
            if isinstance(layer, LayerLosses):
                layer._keras_clear_losses()
