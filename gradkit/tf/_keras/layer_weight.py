"""A layer's weight: gradkit.tf's ``tf.Variable`` with Keras 3's settable ``trainable``.

Keras 3 flips a weight's ``trainable`` when its layer is frozen (``layer.trainable = False``) and
lets a user set it directly; ``trainable_weights`` and the optimizers follow that flag. A
GradientTape, as TensorFlow's under Keras, keeps watching the weight by the flag it was created
with, so gradients of a frozen layer's weights are still there when asked for.
"""

from __future__ import annotations

from .._variables import Variable


class KerasStateVariable(Variable):
    """A metric's or an optimizer's state Variable: a ``tf.Variable`` whose augmented assignment
    (``v += x``) makes a new tensor, as a Keras variable's does."""

    _augmented_assignment_rebinds = True

    @property
    def path(self) -> str:
        """Keras 3's ``path``: ``'metric_name/total'`` for a metric's state (set by the metric), else
        the Variable's name without ``':0'``."""
        path = self.__dict__.get("_keras_path")
        if path is not None:
            return path
        return self.name[:-2] if self.name.endswith(":0") else self.name


class SettableTrainable:
    """Keras' ``trainable``: read and set; it starts as the Variable's own flag."""

    @property
    def trainable(self) -> bool:
        return self.__dict__.get("_keras_trainable", self._trainable)

    @trainable.setter
    def trainable(self, value) -> None:
        self.__dict__["_keras_trainable"] = bool(value)


class LayerWeight(SettableTrainable, Variable):
    """What ``Layer.add_weight`` returns: a ``tf.Variable`` named ``'layer/name:0'``."""

    _augmented_assignment_rebinds = True  # a Keras variable: ``w += x`` makes a new tensor, as in Keras

    @property
    def path(self) -> str:
        """Keras 3's ``path``, the key its optimizers (``MultiOptimizer``) match: ``'layer/name'``
        after the names of the models and layers it was built in (``'sequential/dense/kernel'``;
        a functional model's layers are built outside it, ``'dense/kernel'``)."""
        path = self.__dict__.get("_keras_path")
        if path is not None:
            return path
        return self.name[:-2] if self.name.endswith(":0") else self.name
