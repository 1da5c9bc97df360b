"""``tf.random``: a stateful global PRNG on ``jax.random`` (draws differ from TensorFlow's).

Seeded by ``tf.random.set_seed`` / ``tf.keras.utils.set_random_seed``; each draw splits a
fresh key off the global one (``gradkit.nn.initializers.next_key``).

>>> import gradkit.tf as tf
>>> tf.random.set_seed(0); a = tf.random.normal([2])
>>> tf.random.set_seed(0); b = tf.random.normal([2])
>>> bool((a == b).numpy().all()), a.shape
(True, (2,))
"""

from __future__ import annotations

import jax
import numpy as np

from gradkit._tape.tensor import Tensor
from gradkit.nn import initializers

from . import _dtypes
from ._convert import static_ints


def set_seed(seed):
    initializers.set_seed(seed)


def _key(seed):
    key = initializers.next_key()
    if seed is not None:
        with jax.ensure_compile_time_eval():
            key = jax.random.fold_in(key, int(seed))
    return key


def normal(shape, mean=0.0, stddev=1.0, dtype=_dtypes.float32, seed=None, name=None):
    with jax.ensure_compile_time_eval():
        x = mean + stddev * jax.random.normal(_key(seed), static_ints(shape), np.dtype(dtype))
        return Tensor.concrete(x.astype(dtype))


def uniform(shape, minval=0, maxval=None, dtype=_dtypes.float32, seed=None, name=None):
    dtype = np.dtype(dtype)
    with jax.ensure_compile_time_eval():
        if np.issubdtype(dtype, np.integer):
            x = jax.random.randint(_key(seed), static_ints(shape), minval, maxval, dtype)
        else:
            x = jax.random.uniform(_key(seed), static_ints(shape), dtype, minval, 1.0 if maxval is None else maxval)
        return Tensor.concrete(x)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=_dtypes.float32, seed=None, name=None):
    with jax.ensure_compile_time_eval():
        x = mean + stddev * jax.random.truncated_normal(_key(seed), -2.0, 2.0, static_ints(shape), np.dtype(dtype))
        return Tensor.concrete(x.astype(dtype))
