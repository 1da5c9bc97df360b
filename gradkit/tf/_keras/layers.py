"""``tf.keras.layers``: Dense and BatchNormalization on gradkit.nn, with TF's names."""

from __future__ import annotations

from gradkit import nn

from .._convert import convert, wrap
from .._variables import Variable


class _KerasLayer:
    """Mixin: TF-named Variables ('dense/kernel:0') and eager tensors out."""

    def _make_variable(self, value, name, trainable):
        return Variable(value, name=f"{self.name}/{name}", trainable=trainable)

    def __call__(self, inputs, *args, **kwargs):
        return wrap(super().__call__(convert(inputs), *args, **kwargs))

    @property
    def weights(self):
        return list(self.variables)

    @property
    def trainable_weights(self):
        return list(self.trainable_variables)

    def get_weights(self):
        return [v.numpy() for v in self.variables]


class Dense(_KerasLayer, nn.Dense):
    """``tf.keras.layers.Dense(units, activation=None, use_bias=True, kernel_initializer='glorot_uniform')``.

    >>> import gradkit.tf as tf
    >>> layer = tf.keras.layers.Dense(2, activation="relu", name="dense")
    >>> layer(tf.ones([3, 4])).shape, layer.kernel.name
    ((3, 2), 'dense/kernel:0')
    """


class BatchNormalization(_KerasLayer, nn.BatchNorm):
    """``tf.keras.layers.BatchNormalization(axis=-1, momentum=0.99, epsilon=0.001)``, called with ``training=``."""

    def __init__(self, axis=-1, momentum=0.99, epsilon=0.001, name=None, **kwargs):
        if axis not in (-1,):
            from gradkit import _errors

            raise _errors.GradkitValueError("gradkit.tf BatchNormalization supports axis=-1 only.")
        super().__init__(momentum=momentum, epsilon=epsilon, name=name)

    def __call__(self, inputs, training=None, **kwargs):
        return super().__call__(inputs, training=bool(training))
