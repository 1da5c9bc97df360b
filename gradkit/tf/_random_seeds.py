"""``tf.random.split``, ``tf.random.fold_in`` and ``tf.random.stateless_binomial``: seed-only helpers.

``split`` and ``fold_in`` derive new shape-[2] seeds from one (for the ``stateless_*`` draws) with
``jax.random.split``/``fold_in`` on the seed's key: deterministic and independent, as TensorFlow's,
though not its numbers. The seeds keep the given seed's dtype (int32 unless it is int64).

>>> import gradkit.tf as tf
>>> seeds = tf.random.split([1, 2], num=3)
>>> seeds.shape, seeds.dtype.name, bool((seeds.numpy() == tf.random.split([1, 2], 3).numpy()).all())
((3, 2), 'int32', True)
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors
from gradkit._tape.tensor import Tensor

from . import _random
from ._convert import convert, known_value
from ._random_stateless import _check_alg, key_from_seed

__all__ = ["fold_in", "split", "stateless_binomial"]


def _seed_dtype(seed) -> np.dtype:
    value = convert(seed)
    return np.dtype(np.int64) if np.dtype(value.dtype) == np.int64 else np.dtype(np.int32)


def _as_seeds(keys, dtype):
    """Raw uint32 keys as seeds of ``dtype`` (int32: the same bits)."""
    if dtype == np.int32:
        return jax.lax.bitcast_convert_type(keys, jnp.int32)
    return keys.astype(jnp.int64) if jax.config.jax_enable_x64 else jax.lax.bitcast_convert_type(keys, jnp.int32)


def split(seed, num=2, alg="auto_select"):
    """``tf.random.split``: ``num`` new seeds, shape ``[num, 2]``."""
    _check_alg(alg, "split")
    count = known_value(num)
    if count is None or count.ndim != 0 or count.dtype.kind not in "iu" or int(count) < 0:
        raise _errors.GradkitValueError(
            f"tf.random.split got num={num!r}: it must be a non-negative Python int (it fixes the result's shape)."
        )
    with jax.ensure_compile_time_eval():
        keys = jax.random.split(key_from_seed(seed, "split"), int(count))
        return Tensor.concrete(_as_seeds(keys, _seed_dtype(seed)))


def fold_in(seed, data, alg="auto_select"):
    """``tf.random.fold_in``: a new seed, shape ``[2]``, from ``seed`` and the integer ``data``."""
    _check_alg(alg, "fold_in")
    value = convert(data)
    if np.dtype(value.dtype).kind not in "iu" or len(value.shape) != 0:
        raise _errors.GradkitTypeError(
            f"tf.random.fold_in got data of dtype {value.dtype} and shape {list(value.shape)}: it must be an "
            "integer scalar, as in TensorFlow."
        )
    value = value.__gradkit_value__() if isinstance(value, Tensor) else value
    with jax.ensure_compile_time_eval():
        key = jax.random.fold_in(key_from_seed(seed, "fold_in"), jnp.asarray(value).astype(jnp.uint32))
        return Tensor.concrete(_as_seeds(key, _seed_dtype(seed)))


def stateless_binomial(shape, seed, counts, probs, output_dtype=np.int32, name=None):
    """``tf.random.stateless_binomial``: draws of shape ``shape`` (which must end with the broadcast
    shape of ``counts`` and ``probs``); no gradient, as in TensorFlow."""
    dims, n, p = binomial_arguments(shape, counts, probs, "tf.random.stateless_binomial")
    with jax.ensure_compile_time_eval():
        return binomial_draws(key_from_seed(seed, "stateless_binomial"), dims, n, p, output_dtype)


def binomial_arguments(shape, counts, probs, what: str):
    """``(shape, counts, probs)`` of a binomial draw, checked as TensorFlow checks them: the shape
    must end with the broadcast shape of ``counts`` and ``probs``."""
    dims = tuple(_random._shape(shape, what))
    n, p = (convert(x) for x in (counts, probs))
    n, p = (x.__gradkit_value__() if isinstance(x, Tensor) else x for x in (n, p))
    batch = np.broadcast_shapes(tuple(n.shape), tuple(p.shape))
    if len(batch) > len(dims) or (batch and dims[len(dims) - len(batch) :] != batch):
        raise _errors.InvalidArgumentValueError(
            f"[gradkit] {what} got shape {list(dims)} for counts and probs that broadcast "
            f"to {list(batch)}: the shape passed in must end with the broadcast shape, as in TensorFlow."
        )
    return dims, n, p


def binomial_draws(key, dims, n, p, dtype):
    """Binomial draws of shape ``dims`` from ``key`` (no gradient, as in TensorFlow)."""
    n = jnp.broadcast_to(jnp.asarray(n, jnp.float32), dims)
    p = jnp.broadcast_to(jnp.asarray(p, jnp.float32), dims)
    return Tensor.concrete(jax.random.binomial(key, n, p, dims).astype(jax.dtypes.canonicalize_dtype(np.dtype(dtype))))
