"""``tf.keras.layers.Lambda``: a Python function of the inputs as a layer, as Keras 3.

The function runs on gradkit.tf tensors, so the tape records its ops and gradients flow
through it. It gets ``arguments`` as keyword arguments, and ``training`` and the incoming Keras
``mask`` when it takes parameters of those names. Its output mask is ``mask=``'s: None, a
tensor, or a function ``mask(inputs, mask)``. ``get_config`` names a named function as Keras
does (``from_config`` finds it in ``custom_objects`` or among Keras' activations); a Python
lambda is refused, as gradkit.tf does not serialize Python code (Keras would store its bytecode).

>>> import gradkit.tf as tf
>>> def scale(x, factor=2.0):
...     return x * factor
>>> layer = tf.keras.layers.Lambda(scale, arguments={"factor": 3.0})
>>> layer(tf.ones([1, 2])).numpy().tolist(), layer.get_config()["function"]["config"]
([[3.0, 3.0]], 'scale')
"""

from __future__ import annotations

import inspect
import types

from gradkit import _errors

from . import activations as _activations
from . import layer_config
from .base_layer import Layer
from .layer_names import KerasNamedLayer


def _is_lambda(fn) -> bool:
    return isinstance(fn, types.LambdaType) and fn.__name__ == "<lambda>"


def _serialize_function(fn, what: str):
    """Keras' config of a named function: ``{'module': 'builtins', 'class_name': 'function',
    'config': name, 'registered_name': 'function'}``."""
    if _is_lambda(fn) or not hasattr(fn, "__name__"):
        raise _errors.GradkitNotImplementedError(
            f"Lambda.get_config: {what} is {fn!r}, a Python lambda (or a callable without a name); Keras would "
            "store its bytecode, which gradkit.tf does not serialize. Define it with def at module level and pass "
            "that function; from_config then finds it by name in custom_objects."
        )
    return {"module": "builtins", "class_name": "function", "config": fn.__name__, "registered_name": "function"}


def _deserialize_function(config, custom_objects, what: str):
    if callable(config):
        return config
    if isinstance(config, dict) and config.get("class_name") == "__lambda__":
        raise _errors.GradkitValueError(
            f"Lambda.from_config: {what} is a serialized Python lambda (its bytecode), which gradkit.tf does not "
            "load (Keras refuses it too unless safe_mode=False). Pass the function itself: "
            "Lambda.from_config({**config, 'function': fn})."
        )
    name = config.get("config") if isinstance(config, dict) else config
    found = (custom_objects or {}).get(name) or _activations.BY_NAME.get(name)
    if found is None:
        raise _errors.GradkitTypeError(
            f"Lambda.from_config: could not locate the function {name!r} ({what}), as Keras cannot. Pass it in "
            f"custom_objects={{{name!r}: fn}}."
        )
    return found


class Lambda(KerasNamedLayer, Layer):
    """``Lambda(function, output_shape=None, mask=None, arguments=None)``: ``function(inputs,
    **arguments)`` as a layer; ``output_shape`` (without the batch axis, or a function of the
    input shape) answers ``compute_output_shape``."""

    def __init__(self, function, output_shape=None, mask=None, arguments=None, **kwargs):
        if not callable(function):
            raise _errors.GradkitTypeError(
                f"tf.keras.layers.Lambda takes a callable function, but got {function!r}. Pass e.g. "
                "Lambda(lambda x: x * 2)."
            )
        super().__init__(**kwargs)
        self.function = function
        self.arguments = arguments or {}
        self.mask = mask
        self.supports_masking = mask is not None
        self._output_shape = output_shape
        parameters = inspect.getfullargspec(function).args
        self._fn_expects_training_arg = "training" in parameters
        self._fn_expects_mask_arg = "mask" in parameters

    def call(self, inputs, mask=None, training=None):
        kwargs = dict(self.arguments)
        if self._fn_expects_mask_arg:
            kwargs["mask"] = mask
        if self._fn_expects_training_arg:
            kwargs["training"] = training
        return self.function(inputs, **kwargs)

    def compute_mask(self, inputs, mask=None):
        """Keras': ``mask(inputs, mask)`` for a function, else the ``mask=`` given (None: none)."""
        if callable(self.mask):
            return self.mask(inputs, mask)
        return self.mask

    def compute_output_shape(self, input_shape):
        if self._output_shape is None:
            return super().compute_output_shape(input_shape)
        if callable(self._output_shape):
            return self._output_shape(input_shape)
        return (tuple(input_shape)[0], *self._output_shape)

    def get_config(self):
        config = {"name": self.name, "trainable": self.trainable, "dtype": layer_config.dtype_policy(self.dtype)}
        config["function"] = _serialize_function(self.function, "the function")
        if self._output_shape is not None:
            shape = self._output_shape
            config["output_shape"] = _serialize_function(shape, "output_shape") if callable(shape) else shape
        if not layer_config.plain(self.arguments):
            raise _errors.GradkitNotImplementedError(
                f"Lambda.get_config: arguments={self.arguments!r} holds values other than Python numbers, strings, "
                "lists and dicts, which gradkit.tf does not serialize. Pass plain Python values."
            )
        config["arguments"] = dict(self.arguments)
        if self.mask is not None:
            if not callable(self.mask):
                raise _errors.GradkitNotImplementedError(
                    "Lambda.get_config: a tensor mask= is not serialized by gradkit.tf. Pass a named function "
                    "mask(inputs, mask) instead."
                )
            config["mask"] = _serialize_function(self.mask, "mask")
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None, safe_mode=None):
        """A Lambda from ``get_config()``'s dict: functions by name from ``custom_objects`` or
        Keras' activations (serialized lambdas are refused)."""
        config = dict(config)
        config["function"] = _deserialize_function(config["function"], custom_objects, "the function")
        if isinstance(config.get("mask"), dict):
            config["mask"] = _deserialize_function(config["mask"], custom_objects, "mask")
        shape = config.get("output_shape")
        if isinstance(shape, dict):
            config["output_shape"] = _deserialize_function(shape, custom_objects, "output_shape")
        elif isinstance(shape, list):
            config["output_shape"] = tuple(shape)
        dtype = config.get("dtype")
        if isinstance(dtype, dict):
            config["dtype"] = dtype.get("config", {}).get("name", "float32")
        return cls(**config)
