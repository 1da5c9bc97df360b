"""Initializers and the module-global PRNG key (``gradkit.nn.set_seed``).

An initializer is ``init(key, shape, dtype) -> array``. Values are drawn on the host by a
NumPy generator seeded from the key, so they are concrete even when a layer is built lazily
inside ``gk.jit``, and a weight of a new shape costs no XLA compilation (drawing with
``jax.random`` eagerly compiles its kernels for every new shape: about a second per layer).

>>> import jax
>>> set_seed(0)
>>> glorot_uniform(next_key(), (3, 2)).shape
(3, 2)
>>> float(zeros(None, (2,)).sum()), float(ones(None, (2,)).sum())
(0.0, 2.0)
"""

from __future__ import annotations

import threading

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors


class _Seed(threading.local):
    def __init__(self):
        self.key = None


_seed = _Seed()


def set_seed(seed: int) -> None:
    """Seed the module-global key that layers and ``gradkit.tf.random`` draw from."""
    if isinstance(seed, (str, bytes)) or (isinstance(seed, float) and not seed.is_integer()):
        raise _errors.GradkitTypeError(
            f"set_seed got {seed!r} ({type(seed).__name__}); a seed is an integer. Pass e.g. set_seed(0)."
        )
    with jax.ensure_compile_time_eval():
        _seed.key = jax.random.key(int(seed))


def next_key():
    """Split a fresh key off the global one (seeded with 0 if ``set_seed`` was never called)."""
    with jax.ensure_compile_time_eval():
        if _seed.key is None:
            _seed.key = jax.random.key(0)
        _seed.key, sub = jax.random.split(_seed.key)
    return sub


def host_rng(key) -> np.random.Generator:
    """A NumPy generator determined by a jax PRNG key."""
    with jax.ensure_compile_time_eval():
        words = np.asarray(jax.random.key_data(key)).ravel()
    return np.random.default_rng([int(w) for w in words])


def to_device(values, dtype) -> jax.Array:
    """Host values as a jax array of ``dtype`` (cast by NumPy: no XLA program per shape)."""
    with jax.ensure_compile_time_eval():  # concrete also while a jit traces a layer's build
        return jnp.asarray(np.asarray(values).astype(np.dtype(dtype)))


def truncated_standard_normal(rng: np.random.Generator, shape, bound: float = 2.0) -> np.ndarray:
    """Unit normal draws, those beyond ``±bound`` drawn again (Keras' truncated normal)."""
    out = rng.standard_normal(shape)
    outside = np.abs(out) >= bound
    while outside.any():
        out[outside] = rng.standard_normal(int(outside.sum()))
        outside = np.abs(out) >= bound
    return out


def zeros(key, shape, dtype=jnp.float32):
    return to_device(np.zeros(shape), dtype)


def ones(key, shape, dtype=jnp.float32):
    return to_device(np.ones(shape), dtype)


def glorot_uniform(key, shape, dtype=jnp.float32):
    """Uniform on ±sqrt(6 / (fan_in + fan_out)) (Keras' default kernel initializer). A
    convolution kernel ``(*window, in, out)`` has Keras' fans: ``in`` and ``out`` times the
    window's size."""
    receptive_field = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
    fan_in = (shape[-2] if len(shape) >= 2 else shape[0] if shape else 1) * receptive_field
    fan_out = (shape[-1] if shape else 1) * receptive_field
    limit = (6.0 / (fan_in + fan_out)) ** 0.5
    return random_uniform(key, shape, dtype, -limit, limit)


def random_normal(key, shape, dtype=jnp.float32, mean=0.0, stddev=1.0):
    rng = host_rng(next_key() if key is None else key)
    return to_device(mean + stddev * rng.standard_normal(shape), dtype)


def random_uniform(key, shape, dtype=jnp.float32, minval=0.0, maxval=1.0):
    rng = host_rng(next_key() if key is None else key)
    return to_device(rng.uniform(minval, maxval, shape), dtype)


_BY_NAME = {
    "zeros": zeros,
    "ones": ones,
    "glorot_uniform": glorot_uniform,
    "random_normal": random_normal,
    "random_uniform": random_uniform,
}


def get(init):
    """An initializer from its name or itself (a callable ``init(key, shape, dtype)``)."""
    if callable(init):
        return init
    try:
        return _BY_NAME[init]
    except KeyError:
        raise _errors.GradkitValueError(
            f"unknown initializer {init!r}; use one of {sorted(_BY_NAME)} or a callable init(key, shape, dtype)."
        ) from None
