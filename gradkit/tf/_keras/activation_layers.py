"""``tf.keras.layers.LeakyReLU``, ``ReLU`` and ``Softmax``: Keras 3's activation layers.

>>> import gradkit.tf as tf
>>> x = tf.constant([-2.0, 0.0, 3.0])
>>> tf.keras.layers.LeakyReLU()(x).numpy().tolist()  # Keras 3's default negative_slope is 0.3
[-0.6000000238418579, 0.0, 3.0]
>>> tf.keras.layers.ReLU(max_value=2.0)(x).numpy().tolist()
[0.0, 0.0, 2.0]
"""

from __future__ import annotations

import numbers
import warnings

import gradkit.numpy as gnp
from gradkit import _errors

from .. import _array, _math, _nn
from .._convert import convert
from . import activations
from .base_layer import Layer


def _slope(value, what: str):
    if not isinstance(value, numbers.Real) or isinstance(value, bool) or value < 0:
        raise _errors.GradkitValueError(
            f"{what} takes negative_slope as a float >= 0, as Keras does, but got negative_slope={value!r}."
        )
    return float(value)


class LeakyReLU(Layer):
    """``LeakyReLU(negative_slope=0.3)``: ``x`` where ``x > 0``, else ``negative_slope * x``
    (``tf.nn.leaky_relu``, so the gradient at 0 is ``negative_slope``, as in TensorFlow).
    Keras 2's ``alpha=`` is taken, with Keras 3's deprecation warning."""

    def __init__(self, negative_slope=0.3, **kwargs):
        if "alpha" in kwargs:
            negative_slope = kwargs.pop("alpha")
            warnings.warn("Argument `alpha` is deprecated. Use `negative_slope` instead.", stacklevel=2)
        super().__init__(**kwargs)
        self.negative_slope = _slope(negative_slope, "LeakyReLU")
        self.built = True

    def call(self, inputs):
        return _nn.leaky_relu(inputs, alpha=self.negative_slope)


class ReLU(Layer):
    """``ReLU(max_value=None, negative_slope=0.0, threshold=0.0)``: ``x`` above ``threshold``
    (clipped at ``max_value``), ``negative_slope * (x - threshold)`` below, computed as Keras'
    ``relu`` does, so the gradients at the kinks are TensorFlow's too."""

    def __init__(self, max_value=None, negative_slope=0.0, threshold=0.0, **kwargs):
        super().__init__(**kwargs)
        if max_value is not None and not isinstance(max_value, numbers.Real):
            raise _errors.GradkitTypeError(  # Keras' comparison with 0 raises a TypeError
                f"ReLU takes max_value as None or a float >= 0, as Keras does, but got max_value={max_value!r}."
            )
        if max_value is not None and max_value < 0:
            raise _errors.GradkitValueError(
                f"ReLU takes max_value as None or a float >= 0, as Keras does, but got max_value={max_value!r}."
            )
        if not isinstance(threshold, numbers.Real) or isinstance(threshold, bool) or threshold < 0:
            raise _errors.GradkitValueError(
                f"ReLU takes threshold as a float >= 0, as Keras does, but got threshold={threshold!r}. "
                "For a negative threshold, write tf.where(x > t, x, 0.0) instead."
            )
        self.max_value = None if max_value is None else float(max_value)
        self.negative_slope = _slope(negative_slope, "ReLU")
        self.threshold = float(threshold)
        self.built = True

    def call(self, inputs):
        # Keras' ops.relu, step for step (keras/src/activations/activations.py).
        x, slope, top, threshold = inputs, self.negative_slope, self.max_value, self.threshold
        if slope != 0.0:
            if top is None and threshold == 0:
                return _nn.leaky_relu(x, alpha=slope)
            negative_part = _nn.relu(-x + threshold) if threshold != 0 else _nn.relu(-x)
        clip = top is not None
        if threshold != 0:
            x = x * gnp.asarray(x > threshold, x.dtype)
        elif top == 6:
            x, clip = _nn.relu6(x), False
        else:
            x = _nn.relu(x)
        if clip:
            x = _math.clip_by_value(x, 0.0, top)  # TensorFlow's gradient at the bound (a tie of minimum)
        if slope != 0.0:
            x = x - slope * negative_part
        return x


class Softmax(Layer):
    """``Softmax(axis=-1)``, called as ``layer(inputs, mask=None)``: a softmax along ``axis``
    (an int or a tuple of ints). As in Keras 3, where a ``mask`` (boolean, or above 0.5) is
    False the input is taken as -1e9 before the softmax and the output is 0."""

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis  # as given (a list stays a list in Keras' config)
        self.built = True

    def call(self, inputs, mask=None):
        x = inputs
        if mask is not None:
            mask = convert(mask)
            if len(mask.shape) > len(x.shape) or any(
                m != 1 and m != i for m, i in zip(mask.shape[::-1], x.shape[::-1])
            ):
                raise _errors.GradkitValueError(
                    f"Softmax '{self.name}': a mask of shape {tuple(mask.shape)} does not broadcast to the inputs' "
                    f"shape {tuple(x.shape)}, as Keras requires."
                )
            if mask.dtype != bool:
                mask = mask > 0.5
            mask = gnp.broadcast_to(mask, tuple(x.shape))
            x = _array.where(mask, x, -1e9)
        if isinstance(self.axis, (tuple, list)) and len(self.axis) > 1:
            out = _math.exp(x - _math.reduce_logsumexp(x, axis=list(self.axis), keepdims=True))
        else:
            out = activations.softmax(x, axis=self.axis[0] if isinstance(self.axis, (tuple, list)) else self.axis)
        if mask is not None:
            out = _array.where(mask, out, 0.0)
        return out
