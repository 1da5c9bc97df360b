"""``tf.keras.layers.InputLayer`` and ``tf.keras.Input``, as far as a Sequential uses them: they
declare the input shape, so the Sequential builds its weights at once (``model.weights`` and
``set_weights`` work before the first call), as in Keras 3.

``tf.keras.Input(shape)`` is also the start of Keras' functional API (``functional.py``).

>>> import gradkit.tf as tf
>>> model = tf.keras.Sequential([tf.keras.Input(shape=(3,)), tf.keras.layers.Dense(2)])
>>> [tuple(w.shape) for w in model.weights], len(model.layers)
([(3, 2), (2,)], 1)
"""

from __future__ import annotations

import warnings

import numpy as np

from gradkit import _errors
from gradkit.nn.layer import unique_name

from .base_layer import Layer
from .functional import KerasTensor


def _shape(value, name: str):
    try:
        return tuple(None if d is None else int(d) for d in value)
    except (TypeError, ValueError):
        raise _errors.GradkitValueError(
            f"tf.keras.layers.InputLayer takes {name} as a tuple of ints (None for an unknown size), but got {value!r}."
        ) from None


class InputLayer(Layer):
    """``InputLayer(shape=None, batch_size=None, dtype=None, batch_shape=None, name=None)``: the
    input declaration of a Sequential (``input_shape=`` is taken, with Keras' deprecation
    warning). ``batch_shape`` is ``(batch_size, *shape)``. A sparse, ragged or given
    ``input_tensor`` raises an error."""

    def __init__(
        self,
        shape=None,
        batch_size=None,
        dtype=None,
        sparse=None,
        ragged=None,
        batch_shape=None,
        input_tensor=None,
        optional=False,
        name=None,
        **kwargs,
    ):
        if "input_shape" in kwargs:
            warnings.warn("Argument `input_shape` is deprecated. Use `shape` instead.", stacklevel=2)
            shape = kwargs.pop("input_shape")
        if "batch_input_shape" in kwargs:
            batch_shape = kwargs.pop("batch_input_shape")
        unsupported = {"sparse": sparse, "ragged": ragged, "input_tensor": input_tensor, "optional": optional}
        given = {k: v for k, v in unsupported.items() if v is not None and v is not False}
        if given or kwargs:
            raise _errors.GradkitValueError(
                f"tf.keras.layers.InputLayer got {sorted({**given, **kwargs})}, which gradkit.tf does not implement "
                "(no sparse or ragged inputs). Pass shape= (and batch_size=, dtype=, name=) only."
            )
        if shape is not None and batch_shape is not None:
            raise _errors.GradkitValueError(
                "tf.keras.layers.InputLayer got both shape and batch_shape; Keras takes one of them."
            )
        if batch_size is not None and batch_shape is not None:
            raise _errors.GradkitValueError(
                "tf.keras.layers.InputLayer got both batch_size and batch_shape; Keras takes one of them."
            )
        if shape is None and batch_shape is None:
            raise _errors.GradkitValueError("tf.keras.layers.InputLayer needs shape= (the shape of one example).")
        if batch_shape is None:
            batch_shape = (batch_size, *_shape(shape, "shape"))
        super().__init__(name=name if name is not None else unique_name("input_layer"))
        self.batch_shape = _shape(batch_shape, "batch_shape")
        self.dtype = np.dtype("float32" if dtype is None else getattr(dtype, "name", dtype)).name
        self.built = True

    def call(self, inputs):
        return inputs

    @property
    def output(self):
        """Keras': the KerasTensor this layer declares (what ``tf.keras.Input`` returned)."""
        tensor = self.__dict__.get("_keras_tensor")
        if tensor is None:
            tensor = self.__dict__["_keras_tensor"] = KerasTensor(self.batch_shape, self.dtype, name=self.name)
            tensor._keras_input_layer = self
        return tensor

    @property
    def input(self):
        """Keras': an InputLayer reads no tensor (an empty list)."""
        return []


def Input(  # noqa: N802  (Keras' name)
    shape=None, batch_size=None, dtype=None, sparse=None, batch_shape=None, name=None, tensor=None, optional=False
):
    """``tf.keras.Input(shape=None, batch_size=None, dtype=None, batch_shape=None, name=None)``:
    a symbolic input (a ``KerasTensor``, ``functional.py``) to call layers on, or to start a
    Sequential with."""
    layer = InputLayer(
        shape=shape,
        batch_size=batch_size,
        dtype=dtype,
        sparse=sparse,
        batch_shape=batch_shape,
        name=name,
        input_tensor=tensor,
        optional=optional,
    )
    tensor = KerasTensor(layer.batch_shape, layer.dtype, name=layer.name)
    tensor._keras_input_layer = layer  # a Sequential started with it takes this declaration
    layer.__dict__["_keras_tensor"] = tensor  # its output, as Keras' InputLayer has it
    return tensor
