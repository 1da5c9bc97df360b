"""``tf.keras.random``: Keras 3's random ops and ``SeedGenerator``, on ``tf.random``'s stateless draws.

Keras' seed rules: an int ``seed`` gives the same numbers at every call; a ``SeedGenerator``
gives new ones at each call (its state, a non-trainable Variable, moves on, so inside a
``tf.function`` or a compiled training step each call draws anew, and the same generator seeded
the same way repeats its sequence); ``seed=None`` draws from the global generator that
``tf.keras.utils.set_random_seed`` seeds. The numbers are not TensorFlow's (another generator).

>>> import gradkit.tf as tf
>>> a = tf.keras.random.normal((2,), seed=1); b = tf.keras.random.normal((2,), seed=1)
>>> bool((a == b).numpy().all())
True
>>> g = tf.keras.random.SeedGenerator(7)
>>> bool((tf.keras.random.uniform((2,), seed=g) == tf.keras.random.uniform((2,), seed=g)).numpy().all())
False
"""

from __future__ import annotations

import random as _py_random

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors
from gradkit.nn.layer import unique_name

from .. import (
    _array,
    _indexing,
    _math,
    _ordering,
    _random,
    _random_gamma,
    _random_sampling,
    _random_seeds,
    _random_stateless,
)
from .._variables import Variable
from .ops import dispatch
from .ops.dtype_rules import standardize_dtype


class SeedGenerator:
    """``tf.keras.random.SeedGenerator(seed=None, name=None)``: a seed that moves on at each draw.

    Its ``state`` is a non-trainable int32 Variable ``[seed, counter]`` (a random ``seed`` when
    None); pass the generator as a random op's ``seed`` (``self.seed_generator`` in a layer)."""

    def __init__(self, seed=None, name=None, **kwargs):
        if kwargs:
            raise _errors.GradkitValueError(
                f"tf.keras.random.SeedGenerator got unrecognized keyword arguments {sorted(kwargs)} (Keras raises "
                "ValueError). It takes seed= and name= only."
            )
        self.name = unique_name("seed_generator") if name is None else str(name)
        self._initial_seed = seed
        if seed is None:  # Keras' make_default_seed: reproducible after tf.keras.utils.set_random_seed
            seed = _py_random.randint(1, int(1e9))
        if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool):
            raise _errors.GradkitValueError(
                f"tf.keras.random.SeedGenerator got seed={seed!r}: it must be an integer (Keras raises ValueError)."
            )
        start = np.array([(int(seed) & 0xFFFFFFFF ^ 0x80000000) - 0x80000000, 0], np.int32)
        self.state = Variable(start, trainable=False, name="seed_generator_state")

    def next(self, ordered=True):
        """The current seed (an int32 pair); the state moves on (its counter by one)."""
        value = self.state.value * 1
        if ordered:
            self.state.assign_add(np.array([0, 1], np.int32))
        else:
            self.state.assign((self.state.value + 1) * 5387 % 933199)
        return value

    def get_config(self):
        return {"seed": self._initial_seed, "name": self.name}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self):
        return f"<SeedGenerator name={self.name}>"


def own_generator(layer, seed) -> None:
    """Give ``layer`` a SeedGenerator of its own when ``seed`` is an int, as Keras gives each
    seeded layer (Dropout, the noise layers, attention, RNN dropout): two layers made with one
    seed then draw the same numbers, whatever ``tf.random.set_seed`` says."""
    layer.__dict__["_keras_seed_generator"] = None if seed is None else SeedGenerator(seed)


def layer_seed(layer):
    """The seed a layer's draws take: its own SeedGenerator (``own_generator``), else its
    ``seed`` attribute as a TensorFlow op seed (None: the global random sequence)."""
    generator = layer.__dict__.get("_keras_seed_generator")
    return generator if generator is not None else getattr(layer, "seed", None)


def draw_seed(seed):
    """The int32 (or uint32) pair a stateless draw takes, by Keras' rules for ``seed``."""
    if isinstance(seed, SeedGenerator):
        return seed.next()
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        return np.array([(int(seed) & 0xFFFFFFFF ^ 0x80000000) - 0x80000000, 0], np.int32)
    if seed is None:
        with jax.ensure_compile_time_eval():
            return _random_gamma._raw(_random._key(None, "keras.random", np.float32))
    raise _errors.GradkitValueError(
        f"tf.keras.random got seed={seed!r} of type {type(seed).__name__}: it must be an int, a "
        "tf.keras.random.SeedGenerator or None (Keras raises ValueError)."
    )


def _dims(shape):
    return [int(d) for d in ((shape,) if np.ndim(shape) == 0 else shape)]


def _float(dtype, fn):
    dtype = standardize_dtype(dtype)
    if dtype.kind != "f" and dtype != jnp.bfloat16:
        raise _errors.GradkitValueError(
            f"tf.keras.random.{fn} requires a floating point dtype, but got dtype={dtype.name} (Keras raises "
            "ValueError). Pass 'float32' (the default)."
        )
    return dtype


def normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    """``keras.random.normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None)``: normal draws."""
    dtype = _float(dtype, "normal")
    return _random_stateless.stateless_normal(_dims(shape), draw_seed(seed), mean, stddev, dtype)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    """``keras.random.truncated_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None)``: normal
    draws redrawn beyond two standard deviations."""
    dtype = _float(dtype, "truncated_normal")
    return _random_stateless.stateless_truncated_normal(_dims(shape), draw_seed(seed), mean, stddev, dtype)


def uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None):
    """``keras.random.uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None)``: floats in
    ``[minval, maxval)``."""
    dtype = _float(dtype, "uniform")
    minval, maxval = (v if isinstance(v, (int, float)) else dispatch.tensor(v, dtype) for v in (minval, maxval))
    return _random_stateless.stateless_uniform(_dims(shape), draw_seed(seed), minval, maxval, dtype)


def randint(shape, minval, maxval, dtype="int32", seed=None):
    """``keras.random.randint(shape, minval, maxval, dtype="int32", seed=None)``: integers in
    ``[minval, maxval)``."""
    dtype = standardize_dtype(dtype)
    if dtype.kind not in "iu":
        raise _errors.GradkitValueError(
            f"tf.keras.random.randint requires an integer dtype, but got dtype={dtype.name} (Keras raises "
            "ValueError). Pass 'int32' (the default)."
        )
    drawn = np.dtype("int32") if dtype.itemsize < 4 or dtype.kind == "u" else dtype
    out = _random_stateless.stateless_uniform(_dims(shape), draw_seed(seed), minval, maxval, drawn)
    return dispatch.cast(out, dtype)


def categorical(logits, num_samples, dtype="int32", seed=None):
    """``keras.random.categorical(logits, num_samples, dtype="int32", seed=None)``: ``num_samples``
    class indices per row of the 2-D ``logits``."""
    logits = dispatch.tensor(logits)
    if logits.ndim != 2:
        raise _errors.GradkitValueError(
            f"tf.keras.random.categorical takes 2-D logits [batch_size, num_classes], but got shape "
            f"{tuple(logits.shape)} (Keras raises ValueError)."
        )
    out = _random_sampling.stateless_categorical(logits, num_samples, draw_seed(seed))
    return dispatch.cast(out, standardize_dtype(dtype))


def dropout(inputs, rate, noise_shape=None, seed=None):
    """``keras.random.dropout(inputs, rate, noise_shape=None, seed=None)``: each entry zeroed with
    probability ``rate``, the others scaled by ``1 / (1 - rate)`` (``noise_shape``: the mask's shape,
    None sizes taken from ``inputs``)."""
    x = dispatch.tensor(inputs)
    if rate == 1.0:
        return dispatch.apply(jnp.zeros_like, x)
    if rate == 0.0:
        return dispatch.apply(jnp.asarray, x)
    shape = list(x.shape) if noise_shape is None else [d if n is None else int(n) for d, n in zip(x.shape, noise_shape)]
    draws = _random_stateless.stateless_uniform(shape, draw_seed(seed), 0.0, 1.0, x.dtype)
    keep = dispatch.cast(draws >= rate, x.dtype)
    return dispatch.apply(_dropped, x, keep, scale=1.0 / (1.0 - float(rate)))


def _dropped(x, keep, scale):
    return x * jnp.asarray(scale, x.dtype) * jnp.broadcast_to(keep, x.shape)


def shuffle(x, axis=0, seed=None):
    """``keras.random.shuffle(x, axis=0, seed=None)``: ``x`` in a random order along ``axis``."""
    x = dispatch.tensor(x)
    order = _ordering.argsort(_random_stateless.stateless_uniform([x.shape[axis]], draw_seed(seed)))
    return _array.gather(x, order, axis=axis)


def gamma(shape, alpha, dtype=None, seed=None):
    """``keras.random.gamma(shape, alpha, dtype=None, seed=None)``: gamma draws of shape ``alpha``."""
    dtype = _float(dtype, "gamma")
    work = np.dtype("float32") if dtype == jnp.bfloat16 else dtype
    out = _random_gamma.stateless_gamma(_dims(shape), draw_seed(seed), alpha, dtype=work)
    return dispatch.cast(out, dtype)


def binomial(shape, counts, probabilities, dtype=None, seed=None):
    """``keras.random.binomial(shape, counts, probabilities, dtype=None, seed=None)``: the number of
    successes in ``counts`` trials of probability ``probabilities`` (float32 by default)."""
    dtype = standardize_dtype(dtype)
    out = _random_seeds.stateless_binomial(_dims(shape), draw_seed(seed), counts, probabilities, np.float32)
    return dispatch.cast(out, dtype)


def beta(shape, alpha, beta, dtype=None, seed=None):
    """``keras.random.beta(shape, alpha, beta, dtype=None, seed=None)``: ``X / (X + Y)`` for gamma draws
    ``X`` (shape ``alpha``) and ``Y`` (shape ``beta``) from two seeds, as Keras draws it."""
    dtype = _float(dtype, "beta")
    work = np.dtype("float32") if dtype == jnp.bfloat16 else dtype
    dims = _dims(shape)
    first = dispatch.tensor(draw_seed(seed))
    second = first + np.asarray(12, first.dtype)
    a, b = (_indexing.broadcast_to(dispatch.tensor(v, work), dims) for v in (alpha, beta))
    x = dispatch.cast(_random_gamma.stateless_gamma(dims, first, a, dtype=work), dtype)
    y = dispatch.cast(_random_gamma.stateless_gamma(dims, second, b, dtype=work), dtype)
    return _math.divide(x, _math.add(x, y))
