"""``tf.random.categorical`` and ``tf.random.shuffle``: draws on ``tf.random``'s keys.

They follow ``tf.random.normal``'s seed rules (global and op seeds, a fresh draw at each
``tf.function`` call, each element's own in ``tf.vectorized_map``); the numbers differ from
TensorFlow's, which uses another generator.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors
from gradkit._tape import record
from gradkit._tape.tensor import Tensor

from . import _random
from ._convert import call, convert, known_value
from ._random_stateless import key_from_seed


def _value(x):
    """The array behind a tensor (its value: integer draws carry no gradient anyway)."""
    x = convert(x)
    return x.__gradkit_value__() if isinstance(x, Tensor) else x


def _check_num_samples(num_samples) -> int:
    if isinstance(num_samples, (bool, float, np.floating)) or not isinstance(
        num_samples, (int, np.integer, Tensor, jax.Array, np.ndarray)
    ):
        raise _errors.GradkitTypeError(
            f"tf.random.categorical got num_samples={num_samples!r}: it must be an integer, as in TensorFlow. "
            "Pass an int >= 0."
        )
    if isinstance(num_samples, (int, np.integer)):
        count = int(num_samples)
    else:
        known = known_value(num_samples)
        if known is None or np.ndim(known) != 0 or not np.issubdtype(np.asarray(known).dtype, np.integer):
            raise _errors.GradkitTypeError(
                f"tf.random.categorical got num_samples={num_samples!r}: gradkit needs a concrete integer scalar "
                "(it fixes the result's shape). Pass a Python int."
            )
        count = int(known)
    if count < 0:
        raise _errors.GradkitValueError(
            f"tf.random.categorical got num_samples={count}: it must be >= 0, as TensorFlow requires."
        )
    return count


def categorical(logits, num_samples, dtype=None, seed=None, name=None):
    """``tf.random.categorical``: ``num_samples`` class indices per row of the 2-D ``logits``
    (unnormalized log-probabilities), shape ``[batch, num_samples]``; no gradient, as in TensorFlow.
    A row whose logits are all ``-inf`` gives ``num_classes``, as TensorFlow's kernel does."""
    dtype, count, values = _categorical_args(logits, num_samples, dtype, "categorical")
    with jax.ensure_compile_time_eval():
        return _draw_categorical(_random._key(seed, "categorical", dtype), values, count, dtype)


def stateless_categorical(logits, num_samples, seed, dtype=np.int64, name=None):
    """``tf.random.stateless_categorical``: ``tf.random.categorical`` drawn from a shape-[2] seed."""
    dtype, count, values = _categorical_args(logits, num_samples, dtype, "stateless_categorical")
    with jax.ensure_compile_time_eval():
        return _draw_categorical(key_from_seed(seed, "stateless_categorical"), values, count, dtype)


def _categorical_args(logits, num_samples, dtype, fn: str):
    dtype = np.dtype(np.int64 if dtype is None else dtype)
    if dtype not in (np.dtype(np.int32), np.dtype(np.int64)):
        raise _errors.GradkitValueError(
            f"tf.random.{fn} got dtype={dtype.name}: it gives class indices, int32 or int64 as in "
            "TensorFlow. Pass dtype=tf.int32 or tf.int64 (the default)."
        )
    count = _check_num_samples(num_samples)
    values = _value(logits)
    if not jnp.issubdtype(values.dtype, jnp.floating):
        raise _errors.GradkitTypeError(
            f"tf.random.{fn} got {values.dtype} logits: they must be floats, as TensorFlow's kernel "
            "requires. Pass tf.cast(logits, tf.float32)."
        )
    if values.ndim != 2:
        raise _errors.InvalidArgumentValueError(
            f"tf.random.{fn} got logits of shape {list(values.shape)}: they must be a matrix "
            "[batch_size, num_classes], as in TensorFlow. Reshape them (tf.reshape(logits, [-1, n]))."
        )
    if values.shape[1] == 0:
        raise _errors.GradkitValueError(
            f"tf.random.{fn} got logits with 0 classes: num_classes must be positive, as in TensorFlow."
        )
    return dtype, count, values


def _draw_categorical(key, values, count, dtype):
    drawn = jax.random.categorical(key, values, axis=-1, shape=(count, values.shape[0])).T
    impossible = jnp.all(values == -jnp.inf, axis=1, keepdims=True)
    out_dtype = jax.dtypes.canonicalize_dtype(dtype)
    return Tensor.concrete(jnp.where(impossible, values.shape[1], drawn).astype(out_dtype))


def shuffle(value, seed=None, name=None):
    """``tf.random.shuffle``: ``value`` with its first axis in a random order (a scalar as it is).
    It has no gradient, as in TensorFlow (its RandomShuffle op is not differentiable)."""
    value = convert(value)
    if len(value.shape) == 0:
        return call(_shuffled, value, Tensor.concrete(jnp.zeros((0,), jnp.int32)))
    with jax.ensure_compile_time_eval():
        order = jax.random.permutation(_random._key(seed, "shuffle", value.dtype), value.shape[0])
    return call(_shuffled, value, Tensor.concrete(order.astype(jnp.int32)))


def stateless_shuffle(value, seed, alg="auto_select", name=None):
    """``tf.random.experimental.stateless_shuffle``: ``value`` with its first axis in an order the
    seed alone decides (the same at every call). Its gradient is the permutation's, where
    TensorFlow's StatelessShuffle has none registered (a tape raises LookupError there)."""
    value = convert(value)
    if len(value.shape) == 0:
        return value
    with jax.ensure_compile_time_eval():
        order = jax.random.permutation(key_from_seed(seed, "stateless_shuffle"), value.shape[0])
    return call(_permuted, value, Tensor.concrete(order.astype(jnp.int32)))


def _permuted(value, order):
    return value[order]


def _shuffled(value, order):
    return value if value.ndim == 0 else value[order]


# TensorFlow's RandomShuffle has no gradient: a tape gives None through it.
record.cut_by_design(_shuffled, "tf.random.shuffle (it has no gradient in TensorFlow)")
