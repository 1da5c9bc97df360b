"""``tf.keras.layers.UpSampling1D/2D/3D``: Keras 3's upsampling layers, each one recorded op.

Nearest-neighbour upsampling repeats each entry ``size`` times along its axis (Keras'
``ops.repeat``). ``UpSampling2D(interpolation='bilinear')`` is TensorFlow's
``tf.image.resize(..., 'bilinear')`` (half-pixel centers, edges clamped), written as one
interpolation matrix per spatial axis, so its gradient is the exact transpose. The other
interpolations Keras takes are not implemented.

>>> import gradkit.tf as tf
>>> x = tf.reshape(tf.range(4.0), [1, 2, 2, 1])
>>> tf.keras.layers.UpSampling2D()(x)[0, :, :, 0].numpy().tolist()[:2]
[[0.0, 0.0, 1.0, 1.0], [0.0, 0.0, 1.0, 1.0]]
>>> tf.keras.layers.UpSampling2D(interpolation="bilinear")(x)[0, 0, :, 0].numpy().tolist()
[0.0, 0.25, 0.75, 1.0]
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from .._convert import call
from . import layer_args, layer_config
from .base_layer import Layer
from .layer_names import KerasNamedLayer
from .spatial_args import spatial_axes, standardize_data_format, standardize_tuple

# The interpolations Keras' UpSampling2D passes to tf.image.resize, beyond 'nearest' and 'bilinear'.
_NOT_IMPLEMENTED = ("bicubic", "area", "lanczos3", "lanczos5", "gaussian", "mitchellcubic")


def _repeat(x, sizes, axes):
    for size, axis in zip(sizes, axes):
        x = jnp.repeat(x, size, axis=axis)
    return x


def _bilinear_matrix(n: int, factor: int) -> np.ndarray:
    """TensorFlow's ResizeBilinear weights (half-pixel centers) from ``n`` entries to ``n * factor``."""
    out = np.arange(n * factor)
    position = (out + 0.5) * (n / (n * factor)) - 0.5
    below = np.floor(position)
    lerp = position - below
    lower = np.maximum(below, 0).astype(int)
    upper = np.minimum(np.ceil(position), n - 1).astype(int)
    weights = np.zeros((n * factor, n))
    np.add.at(weights, (out, lower), 1 - lerp)
    np.add.at(weights, (out, upper), lerp)
    return weights


def _bilinear(x, sizes, axes):
    for size, axis in zip(sizes, axes):
        weights = jnp.asarray(_bilinear_matrix(x.shape[axis], size), x.dtype)
        x = jnp.moveaxis(jnp.tensordot(weights, x, axes=(1, axis)), 0, axis)
    return x


class _UpSampling(KerasNamedLayer, Layer):
    _n = 1
    data_format = "channels_last"
    interpolation = "nearest"

    def _sizes(self):
        return self.size if self._n > 1 else (self.size,)

    def call(self, inputs):
        layout = ", ".join(["spatial"] * self._n)
        layout = (
            f"(batch, {layout}, channels)" if self.data_format == "channels_last" else f"(batch, channels, {layout})"
        )
        layer_args.check_rank(inputs.shape, self._n + 2, layout, f"{type(self).__name__} '{self.name}'")
        if self.interpolation == "bilinear":
            layer_args.check_float(inputs, f"{type(self).__name__} '{self.name}'")
        fn = _bilinear if self.interpolation == "bilinear" else _repeat
        sizes = tuple(int(s) for s in self._sizes())
        return call(fn, inputs, sizes=sizes, axes=spatial_axes(len(inputs.shape), self.data_format))

    def compute_output_shape(self, input_shape):
        out = list(input_shape)
        for size, axis in zip(self._sizes(), spatial_axes(len(out), self.data_format)):
            out[axis] = None if out[axis] is None else out[axis] * size
        return tuple(out)


class UpSampling1D(_UpSampling):
    """``UpSampling1D(size=2)``: each step of a ``(batch, steps, features)`` input repeated ``size`` times."""

    def __init__(self, size=2, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(size, int) or isinstance(size, bool):
            raise _errors.GradkitTypeError(f"UpSampling1D takes size as a Python int, as Keras does, but got {size!r}.")
        if size <= 0:
            raise _errors.GradkitValueError(f"UpSampling1D takes a positive size, as Keras does, but got size={size}.")
        self.size = size


class UpSampling2D(_UpSampling):
    """``UpSampling2D(size=(2, 2), data_format=None, interpolation='nearest')``: rows and columns
    repeated (``'nearest'``) or interpolated as ``tf.image.resize`` does (``'bilinear'``)."""

    _n = 2

    def __init__(self, size=(2, 2), data_format=None, interpolation="nearest", **kwargs):
        super().__init__(**kwargs)
        self.data_format = standardize_data_format(data_format, "UpSampling2D")
        self.size = standardize_tuple(size, 2, "size", "UpSampling2D")
        self.interpolation = str(interpolation).lower()
        if self.interpolation in _NOT_IMPLEMENTED:
            raise _errors.GradkitNotImplementedError(
                f"UpSampling2D: interpolation={interpolation!r} is not implemented in gradkit.tf (only 'nearest' and "
                "'bilinear' are). Use one of those, or resize with your own op."
            )
        if self.interpolation not in ("nearest", "bilinear"):
            raise _errors.GradkitValueError(
                f"UpSampling2D: interpolation={interpolation!r} is not one Keras knows; gradkit.tf takes 'nearest' "
                "and 'bilinear'."
            )


class UpSampling3D(_UpSampling):
    """``UpSampling3D(size=(2, 2, 2), data_format=None)``: each spatial entry repeated ``size``
    times along its axis."""

    _n = 3

    def __init__(self, size=(2, 2, 2), data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = standardize_data_format(data_format, "UpSampling3D")
        self.size = standardize_tuple(size, 3, "size", "UpSampling3D")


layer_config.BUILTIN.update(
    {
        "UpSampling1D": ("size",),
        "UpSampling2D": ("size", "data_format", "interpolation"),
        "UpSampling3D": ("size", "data_format"),
    }
)
