"""``tf.keras.layers``' reshaping layers without weights: ``Permute``, ``RepeatVector``,
``Cropping1D/2D/3D`` and ``ZeroPadding1D/2D/3D``, as Keras 3 (arguments, checks, configs and
``compute_output_shape``), each one recorded op.

>>> import gradkit.tf as tf
>>> x = tf.ones([2, 5, 3])
>>> tf.keras.layers.Permute((2, 1))(x).shape, tf.keras.layers.RepeatVector(4)(tf.ones([2, 3])).shape
((2, 3, 5), (2, 4, 3))
>>> tf.keras.layers.Cropping1D((1, 2))(x).shape, tf.keras.layers.ZeroPadding1D(2)(x).shape
((2, 2, 3), (2, 9, 3))
"""

from __future__ import annotations

import jax.numpy as jnp

from gradkit import _errors

from .._convert import call
from . import layer_args, layer_config
from .base_layer import Layer
from .layer_names import KerasNamedLayer
from .spatial_args import axis_pairs, spatial_axes, standardize_data_format, standardize_tuple


def _permute(x, perm):
    return jnp.transpose(x, perm)


def _repeat_vector(x, n):
    return jnp.repeat(x[:, None, :], n, axis=1)


def _crop(x, bounds):
    return x[tuple(slice(start, stop) for start, stop in bounds)]


def _zero_pad(x, widths):
    return jnp.pad(x, widths)


class Permute(KerasNamedLayer, Layer):
    """``Permute(dims)``: the axes after the batch axis reordered; ``dims`` numbers them from 1
    (``Permute((2, 1))`` swaps the two axes of a rank-3 input)."""

    def __init__(self, dims, **kwargs):
        super().__init__(**kwargs)
        self.dims = tuple(dims)
        if sorted(dims) != list(range(1, len(dims) + 1)):
            raise _errors.GradkitValueError(
                f"Permute: dims={dims!r} must hold the axes 1 ... {len(dims)} (the batch axis 0 stays first), each "
                "once, as Keras requires. Pass e.g. dims=(2, 1)."
            )

    def call(self, inputs):
        layer_args.check_rank(inputs.shape, len(self.dims) + 1, "(batch, ...)", f"Permute '{self.name}'")
        return call(_permute, inputs, perm=(0, *self.dims))

    def compute_output_shape(self, input_shape):
        return (input_shape[0], *(input_shape[d] for d in self.dims))


class RepeatVector(KerasNamedLayer, Layer):
    """``RepeatVector(n)``: a ``(batch, features)`` input repeated ``n`` times, ``(batch, n, features)``."""

    def __init__(self, n, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(n, int) or isinstance(n, bool):
            raise _errors.GradkitTypeError(f"RepeatVector takes n as a Python int, as Keras does, but got {n!r}.")
        if n <= 0:
            raise _errors.GradkitValueError(f"RepeatVector takes a positive n, as Keras does, but got n={n}.")
        self.n = n

    def call(self, inputs):
        layer_args.check_rank(inputs.shape, 2, "(batch, features)", f"RepeatVector '{self.name}'")
        return call(_repeat_vector, inputs, n=self.n)

    def compute_output_shape(self, input_shape):
        return (input_shape[0], self.n, input_shape[1])


class _Spatial(KerasNamedLayer, Layer):
    """A layer acting on the ``_n`` spatial axes of a ``(batch, *spatial, channels)`` input (or
    ``(batch, channels, *spatial)`` for channels_first)."""

    _n = 1
    data_format = "channels_last"

    def _axes(self, rank):
        return spatial_axes(rank, self.data_format)

    def _check(self, shape):
        layout = "(batch, " + ", ".join(["spatial"] * self._n) + ", channels)"
        if self.data_format == "channels_first":
            layout = "(batch, channels, " + ", ".join(["spatial"] * self._n) + ")"
        layer_args.check_rank(shape, self._n + 2, layout, f"{type(self).__name__} '{self.name}'")


class _Cropping(_Spatial):
    """``cropping``: one ``(before, after)`` pair per spatial axis; each crop leaves at least one entry."""

    def _crop_bounds(self, input_shape):
        shape = tuple(input_shape)
        bounds = [(0, d) for d in shape]
        pairs = self.cropping if self._n > 1 else (self.cropping,)
        for axis, (before, after) in zip(self._axes(len(shape)), pairs):
            size = shape[axis]
            if size is not None and before + after >= size:
                raise _errors.GradkitValueError(
                    f"{type(self).__name__} '{self.name}': cropping {self.cropping} must be smaller than the input's "
                    f"spatial sizes, as in Keras, but the input has shape {shape}. Crop less."
                )
            bounds[axis] = (int(before), None if size is None else size - int(after))
        return bounds

    def call(self, inputs):
        self._check(inputs.shape)
        return call(_crop, inputs, bounds=tuple(self._crop_bounds(inputs.shape)))

    def compute_output_shape(self, input_shape):
        bounds = self._crop_bounds(input_shape)
        return tuple(d if d is None else stop - start for d, (start, stop) in zip(input_shape, bounds))


class Cropping1D(_Cropping):
    """``Cropping1D(cropping=(1, 1))``: ``cropping[0]`` steps cut from the start of a
    ``(batch, steps, features)`` input, ``cropping[1]`` from its end."""

    def __init__(self, cropping=(1, 1), **kwargs):
        super().__init__(**kwargs)
        self.cropping = standardize_tuple(cropping, 2, "cropping", "Cropping1D", allow_zero=True)


class Cropping2D(_Cropping):
    """``Cropping2D(cropping=((0, 0), (0, 0)), data_format=None)``: ``((top, bottom), (left,
    right))`` rows and columns cut off (an int, or one int per axis, for symmetric crops)."""

    _n = 2

    def __init__(self, cropping=((0, 0), (0, 0)), data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = standardize_data_format(data_format, "Cropping2D")
        self.cropping = axis_pairs(cropping, 2, "cropping", "Cropping2D")


class Cropping3D(_Cropping):
    """``Cropping3D(cropping=((1, 1), (1, 1), (1, 1)), data_format=None)``: a ``(before, after)``
    crop on each of the three spatial axes."""

    _n = 3

    def __init__(self, cropping=((1, 1), (1, 1), (1, 1)), data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = standardize_data_format(data_format, "Cropping3D")
        self.cropping = axis_pairs(cropping, 3, "cropping", "Cropping3D")


class _ZeroPadding(_Spatial):
    def _widths(self, rank):
        widths = [(0, 0)] * rank
        pairs = self.padding if self._n > 1 else (self.padding,)
        for axis, (before, after) in zip(self._axes(rank), pairs):
            widths[axis] = (int(before), int(after))
        return tuple(widths)

    def call(self, inputs):
        self._check(inputs.shape)
        return call(_zero_pad, inputs, widths=self._widths(len(inputs.shape)))

    def compute_output_shape(self, input_shape):
        widths = self._widths(len(input_shape))
        return tuple(d if d is None else d + before + after for d, (before, after) in zip(input_shape, widths))


class ZeroPadding1D(_ZeroPadding):
    """``ZeroPadding1D(padding=1, data_format=None)``: zeros added before and after the steps
    (``padding`` an int or ``(before, after)``)."""

    def __init__(self, padding=1, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = standardize_data_format(data_format, "ZeroPadding1D")
        self.padding = standardize_tuple(padding, 2, "padding", "ZeroPadding1D", allow_zero=True)


class ZeroPadding2D(_ZeroPadding):
    """``ZeroPadding2D(padding=(1, 1), data_format=None)``: zero rows and columns added,
    ``((top, bottom), (left, right))`` (an int, or one int per axis, for symmetric padding)."""

    _n = 2

    def __init__(self, padding=(1, 1), data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = standardize_data_format(data_format, "ZeroPadding2D")
        self.padding = axis_pairs(padding, 2, "padding", "ZeroPadding2D")


class ZeroPadding3D(_ZeroPadding):
    """``ZeroPadding3D(padding=((1, 1), (1, 1), (1, 1)), data_format=None)``: zeros added on
    each of the three spatial axes."""

    _n = 3

    def __init__(self, padding=((1, 1), (1, 1), (1, 1)), data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = standardize_data_format(data_format, "ZeroPadding3D")
        self.padding = axis_pairs(padding, 3, "padding", "ZeroPadding3D")


layer_config.BUILTIN.update(
    {
        "Permute": ("dims",),
        "RepeatVector": ("n",),
        "Cropping1D": ("cropping",),
        "Cropping2D": ("cropping", "data_format"),
        "Cropping3D": ("cropping", "data_format"),
        "ZeroPadding1D": ("padding", "data_format"),
        "ZeroPadding2D": ("padding", "data_format"),
        "ZeroPadding3D": ("padding", "data_format"),
    }
)
