"""``tf.keras.layers`` without weights: ``Flatten``, ``Dropout``, ``Activation``, ``Reshape``.

>>> import gradkit.tf as tf
>>> x = tf.ones([2, 3, 4])
>>> tf.keras.layers.Flatten()(x).shape, tf.keras.layers.Reshape((4, -1))(x).shape
((2, 12), (2, 4, 3))
>>> drop = tf.keras.layers.Dropout(0.5)
>>> bool((drop(x) == x).numpy().all())  # identity unless called with training=True
True
"""

from __future__ import annotations

import math
import numbers

import gradkit.numpy as gnp
from gradkit import _errors, nn

from .. import _array, _dropout
from . import activations as _activations
from . import keras_random
from .base_layer import Layer
from .spatial_args import standardize_data_format


class Flatten(Layer):
    """``Flatten(data_format=None)``: ``(batch, ...)`` to ``(batch, size)``; a ``(batch,)``
    input becomes ``(batch, 1)``. With ``data_format='channels_first'`` the channels axis is
    moved last first, as in Keras."""

    def __init__(self, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = standardize_data_format(data_format, "Flatten")  # any case, as Keras reads it
        self.built = True

    def call(self, inputs):
        rank = len(inputs.shape)
        if rank == 0:
            raise _errors.GradkitValueError(
                f"Flatten '{self.name}' keeps the first (batch) axis, so it needs an input of rank 1 or more, but "
                "got a scalar."
            )
        if self.data_format == "channels_first" and rank > 2:
            inputs = gnp.transpose(inputs, (0, *range(2, rank), 1))
        return gnp.reshape(inputs, (inputs.shape[0], math.prod(inputs.shape[1:])))


class Reshape(Layer):
    """``Reshape(target_shape)``: each example to ``target_shape`` (one entry may be -1)."""

    def __init__(self, target_shape, **kwargs):
        super().__init__(**kwargs)
        try:
            self.target_shape = tuple(int(d) for d in target_shape)
        except TypeError:
            raise _errors.GradkitTypeError(
                f"Reshape takes target_shape as a tuple of ints (without the batch axis), but got {target_shape!r}."
            ) from None
        if any(d < -1 for d in self.target_shape) or self.target_shape.count(-1) > 1:
            raise _errors.GradkitValueError(  # Keras checks this when the layer is made
                f"Reshape takes a target_shape of ints >= 0 with at most one -1 (the unknown size), as Keras "
                f"does, but got {target_shape!r}."
            )
        self.built = True

    def call(self, inputs):
        size, known = math.prod(inputs.shape[1:]), math.prod(d for d in self.target_shape if d != -1)
        fits = size % known == 0 if -1 in self.target_shape and known else size == known
        if not fits or self.target_shape.count(-1) > 1:
            raise _errors.GradkitValueError(
                f"Reshape '{self.name}' cannot reshape examples of shape {tuple(inputs.shape[1:])} ({size} entries) "
                f"to target_shape {self.target_shape}, as Keras cannot. Pass a target_shape with {size} entries "
                "(at most one -1)."
            )
        return gnp.reshape(inputs, (inputs.shape[0], *self.target_shape))


class Activation(Layer):
    """``Activation(activation)``: a name (``'relu'``, ``'softmax'``, ...) or a callable."""

    def __init__(self, activation, **kwargs):
        super().__init__(**kwargs)
        self.activation = nn.activations.get(_activations.for_layer(activation))
        self.built = True

    def call(self, inputs):
        return self.activation(inputs)


class Dropout(Layer):
    """``Dropout(rate, noise_shape=None, seed=None)``: ``tf.nn.dropout`` when called with a true
    ``training`` (passed, or reaching it from the enclosing model call), else the input as it
    is. The masks are fresh at each call, also at each call of a ``tf.function``; they are not
    TensorFlow's draws. With a ``seed`` they come from the layer's own
    ``tf.keras.random.SeedGenerator(seed)``, as in Keras."""

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(rate, numbers.Real):
            raise _errors.GradkitTypeError(  # Keras' comparison with 0 raises a TypeError
                f"Dropout takes a rate in [0, 1] (the fraction of entries dropped), as Keras does, but got "
                f"rate={rate!r}."
            )
        if not 0 <= rate <= 1:
            raise _errors.GradkitValueError(
                f"Dropout takes a rate in [0, 1] (the fraction of entries dropped), as Keras does, but got "
                f"rate={rate!r}."
            )
        if noise_shape is not None and (isinstance(noise_shape, str) or not hasattr(noise_shape, "__iter__")):
            raise _errors.GradkitValueError(
                f"Dropout takes noise_shape as a tuple of ints (None for the input's size there), but got "
                f"{noise_shape!r}."
            )
        self.rate = rate
        self.noise_shape = None if noise_shape is None else tuple(noise_shape)
        self.seed = seed
        # As in Keras, a layer given a seed draws its masks from a SeedGenerator of its own: two
        # Dropout(rate, seed=1) layers start from the same mask, whatever tf.random.set_seed says.
        keras_random.own_generator(self, seed)
        self.built = True

    def call(self, inputs, training=False):
        if not training or self.rate == 0:
            return inputs
        if self.rate == 1:  # Keras: all dropped, a constant (no gradient reaches the inputs), not 0 / 0
            return _array.zeros_like(inputs)
        noise_shape = None
        if self.noise_shape is not None:
            noise_shape = [s if d is None else d for d, s in zip(self.noise_shape, inputs.shape)]
        generator = keras_random.layer_seed(self)
        if isinstance(generator, keras_random.SeedGenerator):
            return keras_random.dropout(inputs, self.rate, noise_shape=noise_shape, seed=generator)
        return _dropout.dropout(inputs, self.rate, noise_shape=noise_shape, seed=self.seed)
