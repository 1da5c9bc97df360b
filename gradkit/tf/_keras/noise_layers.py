"""``tf.keras.layers``' noise and regularization layers: ``GaussianNoise``, ``GaussianDropout``,
``AlphaDropout``, ``SpatialDropout1D/2D/3D`` and ``ActivityRegularization``.

The random layers act only when called with a true ``training`` (passed, or reaching them from
the enclosing model call) and return their input as it is otherwise, as in Keras. Their draws
come from ``gradkit.tf.random``'s generator (fresh at each call, also at each call of a
``tf.function``; they are not TensorFlow's numbers), and each call is one recorded op of the
input and the draws, so the gradient w.r.t. the input is exact for the noise drawn.
``ActivityRegularization`` adds Keras' activity loss, ``(l1 * sum|y| + l2 * sum y**2) / batch``,
to ``layer.losses`` at each call.

>>> import gradkit.tf as tf
>>> x = tf.ones([2, 3])
>>> bool((tf.keras.layers.GaussianNoise(0.5)(x) == x).numpy().all())  # inference: the input
True
>>> layer = tf.keras.layers.ActivityRegularization(l1=0.1)
>>> _ = layer(x); [round(float(loss), 4) for loss in layer.losses]
[0.3]
"""

from __future__ import annotations

import math
import numbers

import jax
import jax.numpy as jnp

from gradkit import _errors
from gradkit._tape.tensor import Tensor

from .. import _array, _dropout, _random
from .._convert import call
from .._math import _tf_abs
from . import keras_random, layer_args, layer_config
from .base_layer import Layer
from .layer_names import KerasNamedLayer, default_name
from .spatial_args import standardize_data_format

# SELU's constants, as Keras' AlphaDropout writes them.
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _draw(kind: str, shape, dtype, seed):
    """Standard normal or uniform [0, 1) draws from ``gradkit.tf.random``'s generator (from the
    call's runtime seed inside a ``tf.function``), or from a seeded layer's own SeedGenerator."""
    if isinstance(seed, keras_random.SeedGenerator):
        draw = keras_random.normal if kind == "normal" else keras_random.uniform
        return draw(shape, dtype=dtype, seed=seed)
    with jax.ensure_compile_time_eval():
        key = _random._key(seed, f"keras_{kind}", dtype)
        sample = (
            _random.standard_normal(key, shape, dtype) if kind == "normal" else jax.random.uniform(key, shape, dtype)
        )
        return Tensor.concrete(sample)


def _add_noise(x, noise, stddev):
    return x + stddev * noise


def _scale_by_noise(x, noise, stddev):
    return x * (1.0 + stddev * noise)


def _alpha_dropout(x, u, rate):
    alpha_p = -_SELU_ALPHA * _SELU_SCALE
    kept = (u >= rate).astype(x.dtype)
    a = ((1 - rate) * (1 + rate * alpha_p**2)) ** -0.5
    b = -a * alpha_p * rate
    return a * (x * kept + alpha_p * (1 - kept)) + b


def _check_fraction(value, name: str, what: str):
    # Keras compares with 0 and 1: a TypeError for a non-number, a ValueError out of range.
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        raise _errors.GradkitTypeError(f"{what} takes {name} as a float in [0, 1], as Keras does, but got {value!r}.")
    if not 0 <= value <= 1:
        raise _errors.GradkitValueError(
            f"{what} takes {name} as a float in [0, 1], as Keras does, but got {name}={value!r}."
        )


class _Noise(KerasNamedLayer, Layer):
    def _float_input(self, inputs):
        layer_args.check_float(inputs, f"{type(self).__name__} '{self.name}'")

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)


class GaussianNoise(_Noise):
    """``GaussianNoise(stddev, seed=None)``: in training, ``x`` plus zero-mean normal noise of
    standard deviation ``stddev`` (in [0, 1])."""

    def __init__(self, stddev, seed=None, **kwargs):
        super().__init__(**kwargs)
        _check_fraction(stddev, "stddev", "GaussianNoise")
        self.stddev = stddev
        self.seed = seed
        keras_random.own_generator(self, seed)

    def call(self, inputs, training=False):
        if not training or self.stddev == 0:
            return inputs
        self._float_input(inputs)
        noise = _draw("normal", tuple(inputs.shape), inputs.dtype, keras_random.layer_seed(self))
        return call(_add_noise, inputs, noise, stddev=float(self.stddev))


class GaussianDropout(_Noise):
    """``GaussianDropout(rate, seed=None)``: in training, ``x`` times normal noise of mean 1 and
    standard deviation ``sqrt(rate / (1 - rate))``."""

    def __init__(self, rate, seed=None, **kwargs):
        super().__init__(**kwargs)
        _check_fraction(rate, "rate", "GaussianDropout")
        self.rate = rate
        self.seed = seed
        keras_random.own_generator(self, seed)

    def call(self, inputs, training=False):
        if not training or self.rate == 0:
            return inputs
        if self.rate == 1:
            raise _errors.GradkitValueError(
                f"GaussianDropout '{self.name}' with rate=1 has an infinite noise deviation sqrt(rate / (1 - rate)) "
                "(Keras fails with a ZeroDivisionError). Use a rate below 1."
            )
        self._float_input(inputs)
        noise = _draw("normal", tuple(inputs.shape), inputs.dtype, keras_random.layer_seed(self))
        return call(_scale_by_noise, inputs, noise, stddev=math.sqrt(self.rate / (1.0 - self.rate)))


class AlphaDropout(_Noise):
    """``AlphaDropout(rate, noise_shape=None, seed=None)``: in training, entries dropped with
    probability ``rate`` are set to SELU's negative saturation value, and the result is scaled
    and shifted so that a SELU network's mean and variance are kept (Keras' formula)."""

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        _check_fraction(rate, "rate", "AlphaDropout")
        self.rate = rate
        self.noise_shape = None if noise_shape is None else tuple(noise_shape)
        self.seed = seed
        keras_random.own_generator(self, seed)

    def call(self, inputs, training=False):
        if not training or self.rate == 0:
            return inputs
        if self.rate == 1:
            raise _errors.GradkitValueError(
                f"AlphaDropout '{self.name}' with rate=1 has no finite scale ((1 - rate) ** -0.5; Keras fails with a "
                "ZeroDivisionError). Use a rate below 1."
            )
        self._float_input(inputs)
        shape = tuple(inputs.shape)
        if self.noise_shape is not None:
            if len(self.noise_shape) != len(shape) or any(
                d is not None and d not in (1, s) for d, s in zip(self.noise_shape, shape)
            ):
                raise _errors.GradkitValueError(
                    f"AlphaDropout '{self.name}': noise_shape={self.noise_shape} does not broadcast to the input's "
                    f"shape {shape}; each entry must be None, 1 or the input's size there."
                )
            shape = tuple(s if d is None else d for d, s in zip(self.noise_shape, shape))
        u = _draw("uniform", shape, inputs.dtype, keras_random.layer_seed(self))
        return call(_alpha_dropout, inputs, u, rate=float(self.rate))


class _SpatialDropout(Layer):
    """Dropout of whole feature maps: one draw per (example, channel), shared along the spatial axes."""

    _n = 1

    def __init__(self, rate, seed=None, name=None, dtype=None):
        what = type(self).__name__
        if isinstance(rate, (int, float)) and not 0 <= rate <= 1:
            raise _errors.GradkitValueError(f"{what} takes a rate in [0, 1], as Keras does, but got rate={rate!r}.")
        super().__init__(name=default_name(self, name), dtype=dtype)
        self.rate = rate
        self.seed = seed
        keras_random.own_generator(self, seed)
        self.data_format = "channels_last"
        self.supports_masking = True  # a Dropout in Keras: the mask passes through
        self.built = True

    def call(self, inputs, training=False):
        what = f"{type(self).__name__} '{self.name}'"
        spatial = ", ".join(["spatial"] * self._n)
        layout = (
            f"(batch, {spatial}, channels)" if self.data_format == "channels_last" else f"(batch, channels, {spatial})"
        )
        layer_args.check_rank(inputs.shape, self._n + 2, layout, what)
        if not training or self.rate == 0:
            return inputs
        if self.rate == 1:  # all dropped, as Keras: a constant, no gradient reaches the input
            return _array.zeros_like(inputs)
        shape = list(inputs.shape)
        channels = -1 if self.data_format == "channels_last" else 1
        noise_shape = [1] * len(shape)
        noise_shape[0], noise_shape[channels] = shape[0], shape[channels]
        seed = keras_random.layer_seed(self)
        if isinstance(seed, keras_random.SeedGenerator):
            return keras_random.dropout(inputs, self.rate, noise_shape=noise_shape, seed=seed)
        return _dropout.dropout(inputs, self.rate, noise_shape=noise_shape, seed=self.seed)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        # Keras' spatial dropouts write their own config: no trainable, the dtype by name.
        config = {"rate": self.rate, "seed": self.seed, "name": self.name, "dtype": self.dtype}
        if self._n > 1:
            config["data_format"] = self.data_format
        return config

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class SpatialDropout1D(_SpatialDropout):
    """``SpatialDropout1D(rate, seed=None)``: in training, whole channels of a ``(batch, steps,
    channels)`` input dropped (and the rest scaled by ``1 / (1 - rate)``)."""


class SpatialDropout2D(_SpatialDropout):
    """``SpatialDropout2D(rate, data_format=None, seed=None)``: in training, whole 2-D feature maps dropped."""

    _n = 2

    def __init__(self, rate, data_format=None, seed=None, name=None, dtype=None):
        super().__init__(rate, seed=seed, name=name, dtype=dtype)
        self.data_format = standardize_data_format(data_format, "SpatialDropout2D")


class SpatialDropout3D(_SpatialDropout):
    """``SpatialDropout3D(rate, data_format=None, seed=None)``: in training, whole 3-D feature maps dropped."""

    _n = 3

    def __init__(self, rate, data_format=None, seed=None, name=None, dtype=None):
        super().__init__(rate, seed=seed, name=name, dtype=dtype)
        self.data_format = standardize_data_format(data_format, "SpatialDropout3D")


def _activity_loss(y, l1, l2):
    loss = jnp.zeros((), y.dtype)
    if l1 != 0.0:
        loss = loss + jnp.asarray(l1, y.dtype) * jnp.sum(_tf_abs(y))  # TensorFlow's abs: gradient 0 at 0
    if l2 != 0.0:
        loss = loss + jnp.asarray(l2, y.dtype) * jnp.sum(jnp.square(y))
    if y.ndim == 0:
        return loss
    # Keras divides by the batch size (divide_no_nan: an empty batch gives 0).
    batch = jnp.asarray(y.shape[0], y.dtype)
    return jnp.where(batch == 0, jnp.zeros_like(loss), loss / jnp.where(batch == 0, 1, batch))


class ActivityRegularization(KerasNamedLayer, Layer):
    """``ActivityRegularization(l1=0.0, l2=0.0)``: returns its input and adds Keras' activity
    loss ``(l1 * sum|y| + l2 * sum y**2) / batch_size`` to ``layer.losses``."""

    def __init__(self, l1=0.0, l2=0.0, **kwargs):
        super().__init__(**kwargs)
        self.l1 = l1
        self.l2 = l2

    def call(self, inputs):
        if self.l1 == 0 and self.l2 == 0:  # Keras' loss is then the constant 0: no gradient reaches the input
            self.add_loss(_array.zeros((), inputs.dtype))
        else:
            self.add_loss(call(_activity_loss, inputs, l1=float(self.l1), l2=float(self.l2)))
        return inputs

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)


layer_config.BUILTIN.update(
    {
        "GaussianNoise": ("stddev", "seed"),
        "GaussianDropout": ("rate", "seed"),
        "AlphaDropout": ("rate", "seed"),
        "ActivityRegularization": ("l1", "l2"),
    }
)
