"""``tf.nn.dropout``: zero each entry with probability ``rate``, scale the rest by ``1 / (1 - rate)``.

Written as TensorFlow writes it (``where(uniform >= rate, x * scale, 0)``), so the gradient
is ``1 / (1 - rate)`` where an entry is kept and exactly 0 where it is dropped. The uniform
draws come from ``gradkit.tf.random``'s global generator (the masks differ from
TensorFlow's). Inside ``tf.function`` a draw made while tracing would be baked into the
compiled program, the same mask at every call; there the key is instead folded with a
counter Variable each call reads and advances, so each call of a compiled step draws a new
mask, as in TensorFlow.

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
from gradkit._core.variable import Variable
from gradkit._tape.tensor import Tensor

from . import _random
from ._convert import call, convert, static_ints

# The dropout calls so far: made here, outside any trace, as a live Variable.
_calls = Variable(np.int32(0), name="dropout_calls", trainable=False, dtype=jnp.int32)


def _traced_uniform(key_data, count, shape, dtype):
    key = jax.random.fold_in(jax.random.wrap_key_data(key_data), count)
    return jax.random.uniform(key, shape, dtype)


def _uniform(shape, dtype, seed):
    """Uniform draws in [0, 1): a key split off the global generator, folded with the counter.

    The counter is read and advanced at every call, eagerly too: whether a call is being traced
    cannot be told reliably from inside it (a pending value is computed concretely even inside
    a trace), and a traced call must thread the counter to draw anew each time it runs.
    """
    with jax.ensure_compile_time_eval():
        key_data = np.asarray(jax.random.key_data(_random._key(seed)))
    u = call(_traced_uniform, key_data, _calls.value, shape=shape, dtype=np.dtype(dtype))
    _calls.assign_add(1)
    return u


def _drop(x, u, rate, scale):
    return jnp.where(u >= rate, x * jnp.asarray(scale, x.dtype), jnp.zeros((), x.dtype))


def _drop_at_rate(x, u, rate):
    return jnp.where(u >= rate, x / (1 - rate), jnp.zeros((), x.dtype))


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
    what = "tf.nn.dropout"
    is_number = isinstance(rate, numbers.Real) and not isinstance(rate, (Tensor, Variable))
    if is_number and not 0 <= rate < 1:
        raise _errors.GradkitValueError(
            f"{what}: rate={rate!r}; TensorFlow takes a probability in [0, 1) (the fraction of entries dropped)."
        )
    x = convert(x)
    if not jnp.issubdtype(x.dtype, jnp.floating):
        raise _errors.GradkitValueError(
            f"{what} scales x, so it takes a floating-point tensor, but got dtype {np.dtype(x.dtype).name}, as "
            "TensorFlow refuses too. Cast it first: tf.nn.dropout(tf.cast(x, tf.float32), rate)."
        )
    if is_number and rate == 0:
        return x
    u = _uniform(_noise_shape(noise_shape, tuple(x.shape), what), x.dtype, seed)
    if is_number:
        return call(_drop, x, u, rate=float(rate), scale=1 / (1 - float(rate)))
    rate = convert(rate)
    if len(rate.shape):
        raise _errors.GradkitValueError(f"{what}: rate must be a scalar, but got shape {list(rate.shape)}.")
    return call(_drop_at_rate, x, u, convert(rate, x.dtype))
