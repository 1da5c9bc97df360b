"""``tf.keras.layers.EinsumDense``: Keras 3's dense layer over an einsum equation.

``EinsumDense(equation, output_shape, activation=None, bias_axes=None, ...)`` computes
``einsum(equation, inputs, kernel) + bias`` as one recorded op (the activation a second, as
in the other layers). The kernel's shape, the bias' shape and the output shape come from the
equation as Keras works them out (``_analyze_einsum_string``): equations ``ab,bc->ac``,
``...ab,bc->...ac`` (any leading axes) or ``ab...,bc->ac...`` (any trailing ones); a kernel
axis takes its size from the output shape if the output has it, else from the input; the bias
spans the output from the first of ``bias_axes`` on, 1 where an axis is not in ``bias_axes``.
A variance-scaling kernel initializer (the default 'glorot_uniform') counts the kernel's input
and output axes as its fans, as Keras' does.

>>> import gradkit.tf as tf
>>> layer = tf.keras.layers.EinsumDense("abc,cde->abde", output_shape=(None, 2, 3), bias_axes="de", name="e")
>>> layer(tf.ones([4, 5, 6])).shape, [tuple(w.shape) for w in layer.weights]
((4, 5, 2, 3), [(6, 2, 3), (2, 3)])
"""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp

from gradkit import _errors
from gradkit.nn import activations
from gradkit.nn.layer import Layer, unique_name

from .._convert import call
from . import activations as _keras_activations
from . import initializers as _initializers
from . import layer_args, layer_config, layer_regularization
from .layers import _KerasLayer

_FORMS = (  # (pattern over the equation with '...' written '0', whether the elided axes lead)
    (r"([a-zA-Z]+),([a-zA-Z]+)->([a-zA-Z]+)", False),
    (r"0([a-zA-Z]+),([a-zA-Z]+)->0([a-zA-Z]+)", True),
    (r"([a-zA-Z]{2,})0,([a-zA-Z]+)->([a-zA-Z]+)0", False),
)


def analyze(equation: str, bias_axes, input_shape, output_shape, what: str):
    """Keras' ``_analyze_einsum_string``: ``(kernel_shape, bias_shape or None, full_output_shape,
    kernel input axes, kernel output axes)``."""
    replaced = re.sub(r"\.\.\.", "0", equation)
    matches = [(re.match(pattern, replaced), lead) for pattern, lead in _FORMS]
    match, left_elided = next(((m, lead) for m, lead in matches if m), (None, False))
    if match is None:
        raise _errors.GradkitValueError(
            f"{what}: equation={equation!r} is not one Keras takes (nor does gradkit.tf). Equations must be in the "
            "form [X],[Y]->[Z], ...[X],[Y]->...[Z], or [X]...,[Y]->[Z]..., e.g. 'ab,bc->ac'."
        )
    input_spec, weight_spec, output_spec = match.groups()
    input_shape = list(input_shape)
    elided = len(input_shape) - len(input_spec)
    output_shape = [output_shape] if isinstance(output_shape, int) else list(output_shape)
    output_shape.insert(0, input_shape[0])
    if elided > 0 and left_elided:
        for i in range(1, elided):
            output_shape.insert(1, input_shape[i])
    elif elided > 0:
        output_shape.extend(input_shape[len(input_shape) - elided :])
    if left_elided:
        input_dims = {dim: i + elided - len(input_shape) for i, dim in enumerate(input_spec)}
        output_dims = {dim: i + elided for i, dim in enumerate(output_spec)}
    else:
        input_dims = {dim: i for i, dim in enumerate(input_spec)}
        output_dims = {dim: i for i, dim in enumerate(output_spec)}
    try:
        for dim in input_spec:
            if dim in output_dims and output_shape[output_dims[dim]] not in (None, input_shape[input_dims[dim]]):
                raise _errors.GradkitValueError(
                    f"{what}: the input and output shapes do not match at the shared dimension {dim!r} of "
                    f"{equation!r}: the input has {input_shape[input_dims[dim]]} there, output_shape "
                    f"{output_shape[output_dims[dim]]}, as Keras refuses too. Make output_shape agree with the input."
                )
        for dim in output_spec:
            if dim not in input_spec and dim not in weight_spec:
                raise _errors.GradkitValueError(
                    f"{what}: dimension {dim!r} of the output {output_spec!r} is in neither the input spec "
                    f"{input_spec!r} nor the weight spec {weight_spec!r} of {equation!r}, as Keras requires."
                )
        kernel_shape, input_axes, output_axes = [], [], []
        for i, dim in enumerate(weight_spec):
            if dim in output_dims:
                kernel_shape.append(output_shape[output_dims[dim]])
                output_axes.append(i)
            elif dim in input_dims:
                kernel_shape.append(input_shape[input_dims[dim]])
                input_axes.append(i)
            else:
                raise _errors.GradkitValueError(
                    f"{what}: weight dimension {dim!r} of {equation!r} is in neither the input spec {input_spec!r} "
                    f"nor the output spec {output_spec!r}; the kernel must be fully specified, as in Keras."
                )
        bias_shape = None
        if bias_axes is not None:
            for char in bias_axes:
                if char not in output_spec:
                    raise _errors.GradkitValueError(
                        f"{what}: bias_axes={bias_axes!r} asks for a bias along {char!r}, which is not in the "
                        f"output spec {output_spec!r}, as Keras requires. Use letters of the output."
                    )
            offset = elided if left_elided else 0
            sizes = {char: output_shape[i + offset] for i, char in enumerate(output_spec)}
            spec = output_spec[min(output_spec.find(char) for char in bias_axes) :]
            bias_shape = [sizes[char] if char in bias_axes else 1 for char in spec]
            if not left_elided:
                bias_shape.extend([1] * max(elided, 0))
    except IndexError:
        raise _errors.GradkitValueError(
            f"{what}: output_shape and the input's shape {tuple(input_shape)} do not fit {equation!r}: the output "
            f"spec has {len(output_spec)} axes (the batch axis included) and the input spec {len(input_spec)}. "
            "Give output_shape one entry per output axis after the batch axis."
        ) from None
    return kernel_shape, bias_shape, output_shape, input_axes, output_axes


def _einsum_dense(x, kernel, bias, *, equation):
    y = jnp.einsum(equation, x, kernel, precision=jax.lax.Precision.HIGHEST)
    if bias is not None:  # Explicit rank: gradkit's strict test mode forbids implicit rank promotion.
        y = y + jnp.reshape(bias, (1,) * (y.ndim - bias.ndim) + bias.shape)
    return y


class EinsumDense(_KerasLayer, Layer):
    """``tf.keras.layers.EinsumDense(equation, output_shape, activation=None, bias_axes=None,
    kernel_initializer='glorot_uniform', bias_initializer='zeros')``; see the module docstring."""

    def __init__(
        self,
        equation,
        output_shape,
        activation=None,
        bias_axes=None,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        kernel_regularizer=None,
        bias_regularizer=None,
        kernel_constraint=None,
        bias_constraint=None,
        lora_rank=None,
        lora_alpha=None,
        gptq_unpacked_column_size=None,
        quantization_config=None,
        name=None,
        trainable=True,
        **kwargs,
    ):
        what = "tf.keras.layers.EinsumDense"
        layer_args.refuse_unimplemented(
            what,
            "equation, output_shape, activation, bias_axes, the initializers, regularizers and constraints, name "
            "and trainable",
            lora_rank=lora_rank,
            lora_alpha=lora_alpha,
            gptq_unpacked_column_size=gptq_unpacked_column_size,
            quantization_config=quantization_config,
        )
        activity_regularizer = kwargs.pop("activity_regularizer", None)
        shape_args = layer_args.base_options(what, kwargs)
        layer_args.check_initializers(what, kernel_initializer=kernel_initializer, bias_initializer=bias_initializer)
        if not isinstance(equation, str):
            raise _errors.GradkitTypeError(f"{what}: equation={equation!r}; Keras takes a string such as 'ab,bc->ac'.")
        super().__init__(
            name=name if name is not None else unique_name("einsum_dense"),
            trainable=trainable,
            activity_regularizer=activity_regularizer,
            **shape_args,
        )
        layer_regularization.keep_options(
            self,
            kernel_regularizer=kernel_regularizer,
            bias_regularizer=bias_regularizer,
            kernel_constraint=kernel_constraint,
            bias_constraint=bias_constraint,
        )
        self.equation = equation
        self.partial_output_shape = (output_shape,) if isinstance(output_shape, int) else tuple(output_shape)
        self.bias_axes = bias_axes
        self.activation = activations.get(_keras_activations.for_layer(activation))
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer
        self.kernel = None  # (in this order: the variables are listed kernel, bias, as in Keras)
        self.bias = None

    @property
    def output_shape(self):
        """The ``output_shape`` the layer was given (Keras' config key; ``partial_output_shape``)."""
        return self.partial_output_shape

    def _what(self) -> str:
        return f"tf.keras.layers.EinsumDense '{self.name}'"

    def _analyze(self, input_shape):
        return analyze(self.equation, self.bias_axes, input_shape, self.partial_output_shape, self._what())

    def _kernel_initializer(self, input_axes, output_axes):
        """Keras counts a variance-scaling initializer's fans over the kernel's input and output axes."""
        init = self.kernel_initializer
        if isinstance(init, (str, dict)):
            init = _initializers.get(init)
        if isinstance(init, _initializers.VarianceScaling) and (init.input_axes is None or init.output_axes is None):
            config = {**init.get_config(), "input_axes": input_axes, "output_axes": output_axes}
            return type(init).from_config(config)
        return init

    def build(self, input_shape) -> None:
        kernel_shape, bias_shape, _, input_axes, output_axes = self._analyze(tuple(input_shape))
        if any(d is None for d in kernel_shape) or (bias_shape is not None and any(d is None for d in bias_shape)):
            raise _errors.GradkitValueError(
                f"{self._what()}: the kernel {tuple(kernel_shape)} (or bias) has an axis of unknown size; give its "
                "size in output_shape or in the input's shape."
            )
        kernel_init = self._kernel_initializer(input_axes, output_axes)
        self.kernel = self.add_weight("kernel", tuple(kernel_shape), kernel_init)
        if bias_shape is not None:
            self.bias = self.add_weight("bias", tuple(bias_shape), self.bias_initializer)
        layer_regularization.attach_to_weights(self, "kernel", "bias")

    def compute_output_shape(self, input_shape):
        return tuple(self._analyze(tuple(input_shape))[2])

    def call(self, inputs, training=None):
        inputs = layer_args.float_input(inputs)
        kernel_shape = self._analyze(tuple(inputs.shape))[0]
        if tuple(kernel_shape) != tuple(self.kernel.shape):
            raise _errors.GradkitValueError(
                f"{self._what()} was built with a kernel of shape {tuple(self.kernel.shape)}, but an input of shape "
                f"{tuple(inputs.shape)} needs {tuple(kernel_shape)}. Pass inputs like the first, or use a new layer."
            )
        bias = None if self.bias is None else self.bias.value
        return self.activation(call(_einsum_dense, inputs, self.kernel.value, bias, equation=self.equation))


layer_config.BUILTIN["EinsumDense"] = (
    "output_shape",
    "equation",
    "activation",
    "bias_axes",
    "kernel_initializer",
    "bias_initializer",
    "kernel_regularizer",
    "bias_regularizer",
    "activity_regularizer",
    "kernel_constraint",
    "bias_constraint",
    ("quantization_config", None),
)
