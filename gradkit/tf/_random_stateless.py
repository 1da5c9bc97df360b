"""``tf.random.stateless_*``: draws fixed by a shape-[2] integer seed alone.

The same seed gives the same numbers, eagerly and inside ``tf.function`` (where the seed may
be a traced tensor, as one ``Generator.make_seeds`` gives). The numbers differ from
TensorFlow's (another generator; ``alg`` is checked but does not change them).

>>> import gradkit.tf as tf
>>> a = tf.random.stateless_normal([3], seed=[1, 2])
>>> bool((a == tf.random.stateless_normal([3], seed=[1, 2])).numpy().all())
True
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors
from gradkit._tape.tensor import Tensor

from . import _dtypes, _random
from ._convert import convert, known_value

_ALGORITHMS = ("auto_select", "philox", "threefry")
_FLOATS = tuple(np.dtype(d) for d in ("float16", _dtypes.bfloat16, "float32", "float64"))
_INTEGERS = tuple(np.dtype(d) for d in ("int32", "int64", "uint32", "uint64"))


def _check_alg(alg, fn):
    name = getattr(alg, "name", alg)
    if alg is not None and str(name).lower() not in _ALGORITHMS and alg not in (1, 2, 3):
        raise _errors.GradkitValueError(
            f"tf.random.{fn} got alg={alg!r}; TensorFlow takes 'philox', 'threefry' or 'auto_select'. "
            "Pass one of them (gradkit draws with jax.random whichever you pass)."
        )


def key_from_seed(seed, fn):
    """A raw ``jax.random`` key (uint32[2]) made from a shape-[2] integer seed (maybe traced)."""
    value = convert(seed)
    if isinstance(value, Tensor):
        value = value.__gradkit_value__()
    if tuple(value.shape) != (2,):
        raise _errors.InvalidArgumentValueError(
            f"tf.random.{fn} got a seed of shape {list(value.shape)}: the seed must have shape [2], as in "
            "TensorFlow. Pass two integers (seed=[1, 2]) or a tensor from Generator.make_seeds()[:, i]."
        )
    if not jnp.issubdtype(value.dtype, jnp.integer):
        raise _errors.InvalidArgumentTypeError(
            f"tf.random.{fn} got a {value.dtype} seed: it must be int32 or int64, as in TensorFlow. "
            "Pass integers (tf.cast(seed, tf.int32))."
        )
    key = value.astype(jnp.uint32)
    if value.dtype.itemsize == 8:  # the high halves count too
        high = (value >> 32).astype(jnp.uint32)
        key = jax.random.fold_in(jax.random.fold_in(key, high[0]), high[1])
    return key


def _float_dtype(dtype, fn):
    dtype = np.dtype(dtype)
    if dtype not in _FLOATS:
        raise _errors.GradkitTypeError(
            f"tf.random.{fn} got dtype={dtype.name}: it draws floats, as in TensorFlow (which cannot convert "
            "its mean 0.0 to an integer). Pass a float dtype, or tf.random.stateless_uniform for integers."
        )
    return dtype


def _dims(shape, fn):
    return _random._shape(shape, fn)


def stateless_normal(shape, seed, mean=0.0, stddev=1.0, dtype=_dtypes.float32, name=None, alg="auto_select"):
    """``tf.random.stateless_normal``: ``standard * stddev + mean``, recorded as ``tf.random.normal``'s."""
    _check_alg(alg, "stateless_normal")
    dtype = _float_dtype(dtype, "stateless_normal")
    dims = _dims(shape, "stateless_normal")
    with jax.ensure_compile_time_eval():
        standard = _random.standard_normal(key_from_seed(seed, "stateless_normal"), dims, dtype)
    return _random._affine(standard, stddev, mean, dtype)


def stateless_truncated_normal(shape, seed, mean=0.0, stddev=1.0, dtype=_dtypes.float32, name=None, alg="auto_select"):
    """``tf.random.stateless_truncated_normal``: a normal draw cut at two standard deviations."""
    _check_alg(alg, "stateless_truncated_normal")
    dtype = _float_dtype(dtype, "stateless_truncated_normal")
    dims = _dims(shape, "stateless_truncated_normal")
    with jax.ensure_compile_time_eval():
        key = key_from_seed(seed, "stateless_truncated_normal")
        standard = _random.standard_truncated_normal(key, dims, dtype)
    return _random._affine(standard, stddev, mean, dtype)


def uniform_integers(key, dims, minval, maxval, dtype, fn):
    """Integers in ``[minval, maxval)``, or over the whole dtype when both are None (as TensorFlow)."""
    if (minval is None) != (maxval is None):
        raise _errors.GradkitValueError(
            f"tf.random.{fn} with an integer dtype ({dtype.name}) needs minval and maxval both None (the whole "
            f"range) or both given, as in TensorFlow; got minval={minval!r} and maxval={maxval!r}. "
            "Pass maxval=... (and minval=...)."
        )
    out_dtype = jax.dtypes.canonicalize_dtype(dtype)
    if minval is None:
        unsigned = np.dtype(f"uint{8 * out_dtype.itemsize}")
        return Tensor.concrete(jax.lax.bitcast_convert_type(jax.random.bits(key, dims, unsigned), out_dtype))
    lo, hi = known_value(minval), known_value(maxval)
    if lo is not None and hi is not None and np.any(lo >= hi) and np.prod(dims) > 0:
        raise _errors.InvalidArgumentValueError(
            f"tf.random.{fn} with an integer dtype draws from [minval, maxval), which is empty for "
            f"minval={lo.tolist()} and maxval={hi.tolist()}; TensorFlow refuses it too. Pass minval < maxval."
        )
    lo, hi = (x.__gradkit_value__() if isinstance(x, Tensor) else x for x in (convert(minval), convert(maxval)))
    return Tensor.concrete(jax.random.randint(key, dims, lo, hi, out_dtype))


def uniform_floats(key, dims, minval, maxval, dtype):
    """``u * (maxval - minval) + minval`` for ``u`` in [0, 1), recorded as ``tf.random.uniform``'s."""
    maxval = 1.0 if maxval is None else maxval
    standard = jax.random.uniform(key, dims, dtype)
    if _random._is_number(minval) and _random._is_number(maxval):
        return _random._affine(standard, maxval - minval, minval, dtype)
    lo = convert(minval, dtype)
    return Tensor.concrete(standard) * (convert(maxval, dtype) - lo) + lo


def check_uniform_dtype(dtype, fn):
    dtype = np.dtype(dtype)
    if dtype not in _FLOATS + _INTEGERS:
        raise _errors.GradkitValueError(
            f"tf.random.{fn} got dtype={dtype.name}; TensorFlow accepts float16, bfloat16, float32, float64, "
            "int32, int64, uint32 and uint64. Pass one of them."
        )
    return dtype


def stateless_uniform(shape, seed, minval=0, maxval=None, dtype=_dtypes.float32, name=None, alg="auto_select"):
    """``tf.random.stateless_uniform``: floats in ``[minval, maxval)`` (maxval None: 1), or integers
    in ``[minval, maxval)``, which must then both be given (both None: the whole range)."""
    _check_alg(alg, "stateless_uniform")
    dtype = check_uniform_dtype(dtype, "stateless_uniform")
    dims = _dims(shape, "stateless_uniform")
    with jax.ensure_compile_time_eval():
        key = key_from_seed(seed, "stateless_uniform")
        if dtype in _INTEGERS:
            return uniform_integers(key, dims, minval, maxval, dtype, "stateless_uniform")
        return uniform_floats(key, dims, minval, maxval, dtype)
