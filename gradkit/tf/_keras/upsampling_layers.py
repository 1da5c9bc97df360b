"""``tf.keras.layers.UpSampling1D/2D/3D``: Keras 3's upsampling layers, each one recorded op.

Nearest-neighbour upsampling repeats each entry ``size`` times along its axis (Keras'
``ops.repeat``). ``UpSampling2D(interpolation='bilinear')`` and ``'bicubic'`` are TensorFlow's
``tf.image.resize`` (half-pixel centers; bilinear clamps at the edges, bicubic is Keys' cubic
with ``a = -0.5`` from TensorFlow's 1024-step weight table, the weights of samples outside the
image dropped and the rest renormalized), written as one interpolation matrix per spatial
axis, so the gradient is the exact transpose, as TensorFlow's ``ResizeBilinearGrad`` and
``ResizeBicubicGrad``. ``'lanczos3'`` and ``'lanczos5'`` are TensorFlow's
``scale_and_translate`` with those kernels (every input entry within the kernel's radius,
weights renormalized). ``'area'`` is not implemented: TensorFlow's
``ResizeArea`` has no gradient.

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

_IMPLEMENTED = ("nearest", "area", "bilinear", "bicubic", "lanczos3", "lanczos5")


def _repeat(x, sizes, axes):
    for size, axis in zip(sizes, axes):
        x = jnp.repeat(x, size, axis=axis)
    return x


def _positions(n: int, factor: int):
    """TensorFlow's half-pixel source positions (in float32, as its kernels compute them)."""
    scale = np.float32(n) / np.float32(n * factor)
    return (np.arange(n * factor, dtype=np.float32) + np.float32(0.5)) * scale - np.float32(0.5)


def _bilinear_matrix(n: int, factor: int) -> np.ndarray:
    """TensorFlow's ResizeBilinear weights (half-pixel centers) from ``n`` entries to ``n * factor``."""
    out = np.arange(n * factor)
    position = _positions(n, factor).astype(np.float64)
    below = np.floor(position)
    lerp = position - below
    lower = np.maximum(below, 0).astype(int)
    upper = np.minimum(np.ceil(position), n - 1).astype(int)
    weights = np.zeros((n * factor, n))
    np.add.at(weights, (out, lower), 1 - lerp)
    np.add.at(weights, (out, upper), lerp)
    return weights


def _keys_cubic_table(a: float = -0.5, steps: int = 1024):
    """TensorFlow's bicubic weight table: Keys' kernel at ``steps + 1`` offsets in [0, 1] (for the
    two inner samples) and in [1, 2] (the two outer ones), in float32."""
    x = np.arange(steps + 1, dtype=np.float64) / steps
    inner = ((a + 2) * x - (a + 3)) * x * x + 1
    x = x + 1.0
    outer = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return inner.astype(np.float32), outer.astype(np.float32)


def _bicubic_matrix(n: int, factor: int) -> np.ndarray:
    """TensorFlow's ResizeBicubic weights (half-pixel centers, Keys' cubic) from ``n`` entries to
    ``n * factor``: four samples per output, those outside the input dropped, renormalized."""
    inner, outer = _keys_cubic_table()
    position = _positions(n, factor)
    start = np.floor(position).astype(int)
    offset = np.rint((position - start) * 1024).astype(int)
    weights = np.stack([outer[offset], inner[offset], inner[1024 - offset], outer[1024 - offset]], 1)
    index = start[:, None] + np.arange(-1, 3)
    inside = (index >= 0) & (index < n)
    weights = np.where(inside, weights, 0.0).astype(np.float64)
    weights /= weights.sum(1, keepdims=True)
    matrix = np.zeros((n * factor, n))
    rows = np.broadcast_to(np.arange(n * factor)[:, None], index.shape)
    np.add.at(matrix, (rows[inside], index[inside]), weights[inside])
    return matrix


def _lanczos(radius: int):
    def kernel(x):
        x = np.abs(x)
        with np.errstate(divide="ignore", invalid="ignore"):
            value = radius * np.sin(np.pi * x) * np.sin(np.pi * x / radius) / (np.pi**2 * x * x)
        return np.where(x > radius, 0.0, np.where(x <= 1e-3, 1.0, value))

    return kernel


# TensorFlow's Lanczos sampling kernels (sampling_kernels.h) for scale_and_translate; Keras takes
# no other of its kernels.
_KERNELS = {"lanczos3": _lanczos(3), "lanczos5": _lanczos(5)}


def _scale_and_translate_matrix(method: str):
    """TensorFlow's ScaleAndTranslate weights for an upsampling by ``factor`` (the kernel not
    scaled): output ``o`` samples at ``(o + 0.5) / factor``, input ``s`` weighs
    ``kernel(s + 0.5 - sample)``, renormalized to sum to 1."""

    def matrix(n: int, factor: int) -> np.ndarray:
        sample = (np.arange(n * factor) + 0.5) / factor
        weights = _KERNELS[method](np.arange(n)[None, :] + 0.5 - sample[:, None])
        return weights / weights.sum(1, keepdims=True)

    return matrix


_MATRICES = {
    "bilinear": _bilinear_matrix,
    "bicubic": _bicubic_matrix,
    **{method: _scale_and_translate_matrix(method) for method in _KERNELS},
}


def _interpolate(x, sizes, axes, method):
    dtype = x.dtype
    if not jnp.issubdtype(dtype, jnp.floating):
        x = x.astype(jnp.float32)  # integers are resized in float32, as Keras resizes them
    for size, axis in zip(sizes, axes):
        weights = jnp.asarray(_MATRICES[method](x.shape[axis], size), x.dtype)
        x = jnp.moveaxis(jnp.tensordot(weights, x, axes=(1, axis)), 0, axis)
    # Keras rounds an integer image's result to the nearest integer (ties to even) in its dtype.
    return x if x.dtype == dtype else jnp.round(x).astype(dtype)


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
        sizes = tuple(int(s) for s in self._sizes())
        axes = spatial_axes(len(inputs.shape), self.data_format)
        if self.interpolation in ("nearest", "area"):
            # An area resize by whole factors averages over a part of one input entry: the
            # entry itself, as a repeat gives it (TensorFlow's has no gradient; this one does).
            return call(_repeat, inputs, sizes=sizes, axes=axes)
        return call(_interpolate, inputs, sizes=sizes, axes=axes, method=self.interpolation)

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
    repeated (``'nearest'``, and ``'area'``, the same by whole factors) or interpolated as
    ``tf.image.resize`` does (``'bilinear'``, ``'bicubic'``, ``'lanczos3'``, ``'lanczos5'``)."""

    _n = 2

    def __init__(self, size=(2, 2), data_format=None, interpolation="nearest", **kwargs):
        super().__init__(**kwargs)
        self.data_format = standardize_data_format(data_format, "UpSampling2D")
        self.size = standardize_tuple(size, 2, "size", "UpSampling2D")
        self.interpolation = str(interpolation).lower()
        if self.interpolation not in _IMPLEMENTED:
            raise _errors.GradkitValueError(
                f"UpSampling2D: interpolation={interpolation!r} is not one Keras knows; gradkit.tf takes "
                f"{list(_IMPLEMENTED)}."
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
