"""``tf.nn.dropout``: zero each entry with probability ``rate``, scale the rest by ``1 / (1 - rate)``.

Written as TensorFlow writes it (``where(uniform >= rate, x * scale, 0)``), so the gradient
is ``1 / (1 - rate)`` where an entry is kept and exactly 0 where it is dropped. The uniform
draws come from ``gradkit.tf.random``'s generator (the masks differ from TensorFlow's), so,
as its draws, they are new at each call of a ``tf.function`` too.

>>> import gradkit.tf as tf
>>> y = tf.nn.dropout(tf.ones([1000]), rate=0.5, seed=1)
>>> sorted(set(y.numpy().tolist()))
[0.0, 2.0]
"""

from __future__ import annotations

import numbers

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors
from gradkit._tape.record import floats_are_runtime
from gradkit._tape.tensor import Tensor

from . import _random
from ._convert import TENSOR_LIKE, call, convert, static_ints, wrap


def _uniform(shape, dtype, seed):
    """Uniform draws in [0, 1) from ``tf.random``'s generator: concrete eagerly, and from the
    call's runtime seed inside a ``tf.function``, so each call of a compiled step draws anew."""
    with jax.ensure_compile_time_eval():
        return Tensor.concrete(jax.random.uniform(_random._key(seed, "dropout", dtype), shape, dtype))


def _drop(x, u, rate, scale):
    return jnp.where(u >= rate, x * jnp.asarray(scale, x.dtype), jnp.zeros((), x.dtype))


def _drop_at_rate(x, u, rate):
    return jnp.where(u >= rate, x / (1 - rate), jnp.zeros((), x.dtype))


# A rate given as a number is an operand of the program: a scheduled rate compiles nothing new.
floats_are_runtime(_drop)


def _noise_shape(noise_shape, shape, what):
    if noise_shape is None:
        return shape
    dims = static_ints(noise_shape)
    if len(dims) == len(shape):
        dims = tuple(s if d == -1 else d for d, s in zip(dims, shape))
    try:
        np.broadcast_shapes(dims, shape)
        ok = len(dims) <= len(shape) and all(d > 0 for d in dims)
    except ValueError:
        ok = False
    if not ok:
        raise _errors.GradkitValueError(
            f"{what}: noise_shape={list(dims)} does not broadcast to x's shape {list(shape)}; TensorFlow "
            "requires each entry to be 1 or x's size there (e.g. [batch, 1, channels] to drop whole features)."
        )
    return dims


def dropout(x, rate, noise_shape=None, seed=None, name=None):
    """``tf.nn.dropout(x, rate, noise_shape=None, seed=None)``; a ``rate`` of 0 returns ``x``."""
    return _dropout(x, rate, noise_shape, lambda shape, dtype: _uniform(shape, dtype, seed), "tf.nn.dropout")


def stateless_dropout(x, rate, seed, rng_alg=None, noise_shape=None, name=None):
    """``tf.nn.experimental.stateless_dropout(x, rate, seed, rng_alg=None, noise_shape=None)``:
    ``tf.nn.dropout`` with its mask from ``tf.random.stateless_uniform(shape, seed)``, so the same
    seed drops the same entries (gradkit's stateless draws, not TensorFlow's numbers)."""
    from ._random_stateless import stateless_uniform

    def sample(shape, dtype):
        return stateless_uniform(list(shape), seed=seed, dtype=dtype, alg="auto_select" if rng_alg is None else rng_alg)

    return _dropout(x, rate, noise_shape, sample, "tf.nn.experimental.stateless_dropout")


def general_dropout(x, rate, uniform_sampler, noise_shape=None, name=None):
    """``tf.nn.experimental.general_dropout(x, rate, uniform_sampler, noise_shape=None)``:
    ``tf.nn.dropout`` with its uniform draws from ``uniform_sampler(shape=..., dtype=...)``
    (kept where a draw is ``>= rate``), as TensorFlow calls it."""
    if not callable(uniform_sampler):
        raise _errors.GradkitTypeError(
            f"tf.nn.experimental.general_dropout takes uniform_sampler as a callable (shape, dtype) -> uniform draws "
            f"in [0, 1), as TensorFlow does, but got {uniform_sampler!r}. Pass e.g. "
            "functools.partial(tf.random.stateless_uniform, seed=[1, 2])."
        )

    def sample(shape, dtype):
        return convert(uniform_sampler(shape=list(shape), dtype=dtype))

    return _dropout(x, rate, noise_shape, sample, "tf.nn.experimental.general_dropout")


def _dropout(x, rate, noise_shape, sample, what):
    """TensorFlow's shared dropout: ``where(sample(noise_shape) >= rate, x / (1 - rate), 0)``."""
    is_number = isinstance(rate, numbers.Real) and not isinstance(rate, TENSOR_LIKE)
    if is_number and not 0 <= rate < 1:
        raise _errors.GradkitValueError(
            f"{what}: rate={rate!r}; TensorFlow takes a probability in [0, 1) (the fraction of entries dropped)."
        )
    x = convert(x)
    if not jnp.issubdtype(x.dtype, jnp.floating):
        raise _errors.GradkitValueError(
            f"{what} scales x, so it takes a floating-point tensor, but got dtype {np.dtype(x.dtype).name}, as "
            f"TensorFlow refuses too. Cast it first: {what}(tf.cast(x, tf.float32), rate, ...)."
        )
    if is_number and rate == 0:
        return wrap(x)  # a tensor, also for a NumPy array or a list
    shape = _noise_shape(noise_shape, tuple(x.shape), what)
    u = sample(shape, x.dtype)
    if tuple(u.shape) != tuple(shape):
        raise _errors.GradkitValueError(
            f"{what}: the uniform draws have shape {list(u.shape)}, not the noise shape {list(shape)} asked for."
        )
    if is_number:
        return call(_drop, x, u, rate=float(rate), scale=1 / (1 - float(rate)))
    rate = convert(rate)
    if len(rate.shape):
        raise _errors.GradkitValueError(f"{what}: rate must be a scalar, but got shape {list(rate.shape)}.")
    return call(_drop_at_rate, x, u, convert(rate, x.dtype))
