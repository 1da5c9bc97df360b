"""``tf.keras.layers``: Dense and BatchNormalization on gradkit.nn, with TF's names."""

from __future__ import annotations

from gradkit import nn

from .._convert import convert, wrap
from .._variables import Variable


class KerasVariableLists:
    """Mixin: the variables properties as lists, as Keras returns them (``[x] +
    layer.trainable_variables`` must work); tf.Module's stay tuples."""

    @property
    def variables(self):
        return list(super().variables)

    @property
    def trainable(self) -> bool:
        """Keras' layer flag. ``False`` lists every variable of the layer and of its sublayers
        as non-trainable (``apply_gradients(zip(grads, layer.trainable_variables))`` skips
        them); a tape still watches them, as in Keras."""
        return self.__dict__.get("_keras_trainable", True)

    @trainable.setter
    def trainable(self, value) -> None:
        self.__dict__["_keras_trainable"] = bool(value)
        for sub in self._collect()[1]:  # Keras sets it on every sublayer too
            if isinstance(sub, KerasVariableLists):
                sub.__dict__["_keras_trainable"] = bool(value)

    def _frozen(self) -> set:
        """ids of the variables of this layer or of a sublayer whose ``trainable`` is False."""
        layers = [self, *self._collect()[1]]
        return {
            id(v)
            for layer in layers
            if isinstance(layer, KerasVariableLists) and not layer.trainable
            for v in layer.variables
        }

    @property
    def trainable_variables(self):
        frozen = self._frozen()
        return [v for v in super().trainable_variables if id(v) not in frozen]

    @property
    def non_trainable_variables(self):
        frozen = self._frozen()
        return [v for v in self.variables if not v.trainable or id(v) in frozen]

    weights = variables
    trainable_weights = trainable_variables
    non_trainable_weights = non_trainable_variables

    def get_weights(self):
        return [v.numpy() for v in self.variables]


class _KerasLayer(KerasVariableLists):
    """Mixin: TF-named Variables ('dense/kernel:0'), eager tensors out, Keras' ``trainable=``."""

    def __init__(self, *args, trainable=True, **kwargs):
        super().__init__(*args, **kwargs)
        if not trainable:
            self.trainable = False

    def _make_variable(self, value, name, trainable):
        return Variable(value, name=f"{self.name}/{name}", trainable=trainable)

    def __call__(self, inputs, *args, **kwargs):
        return wrap(super().__call__(convert(inputs), *args, **kwargs))


class Dense(_KerasLayer, nn.Dense):
    """``tf.keras.layers.Dense(units, activation=None, use_bias=True, kernel_initializer='glorot_uniform')``.

    >>> import gradkit.tf as tf
    >>> layer = tf.keras.layers.Dense(2, activation="relu", name="dense")
    >>> layer(tf.ones([3, 4])).shape, layer.kernel.name
    ((3, 2), 'dense/kernel:0')
    """


class BatchNormalization(_KerasLayer, nn.BatchNorm):
    """``tf.keras.layers.BatchNormalization(axis=-1, momentum=0.99, epsilon=0.001)``, called with ``training=``."""

    def __init__(self, axis=-1, momentum=0.99, epsilon=0.001, name=None, trainable=True, **kwargs):
        if axis not in (-1,):
            from gradkit import _errors

            raise _errors.GradkitValueError("gradkit.tf BatchNormalization supports axis=-1 only.")
        super().__init__(momentum=momentum, epsilon=epsilon, name=name, trainable=trainable)

    def __call__(self, inputs, training=None, **kwargs):
        # A frozen BatchNormalization runs in inference mode, as in Keras: the moving
        # statistics normalise and are left alone.
        return super().__call__(inputs, training=bool(training) and self.trainable)


def __getattr__(name):
    from .._namespace import missing

    raise AttributeError(missing("gradkit.tf.keras.layers", name))
