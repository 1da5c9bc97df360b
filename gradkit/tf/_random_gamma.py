"""``tf.random.gamma`` and ``tf.random.poisson``, and their ``stateless_`` forms.

Draws follow ``tf.random``'s seed rules (the numbers differ from TensorFlow's generator). A gamma
draw is ``max(tiny, gamma(alpha) / beta)``, as TensorFlow writes it, and is differentiable with
respect to ``alpha`` and ``beta``: the derivative with respect to ``alpha`` is the implicit
reparameterization gradient (Figurnov et al., 2018), ``jax.random.gamma``'s, which is TensorFlow's
``RandomGammaGrad`` of the same sample. Poisson counts have no gradient, as in TensorFlow.

>>> import gradkit.tf as tf
>>> alpha = tf.Variable([1.0, 4.0])
>>> with tf.GradientTape() as tape:
...     x = tf.random.gamma([1000], alpha, seed=1)
...     mean = tf.reduce_sum(tf.reduce_mean(x, axis=0))
>>> x.shape, tape.gradient(mean, alpha).shape
((1000, 2), (2,))
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors
from gradkit._tape.tensor import Tensor

from . import _dtypes, _random
from ._convert import call, convert
from ._random_stateless import key_from_seed

__all__ = ["gamma", "poisson", "stateless_gamma", "stateless_poisson"]


def _gamma_draw(key, alpha, beta, *, dims, dtype):
    """``max(tiny, gamma(alpha broadcast to dims) / beta)`` from the raw key ``key``."""
    # Drawn in float32 for a half-precision dtype, as TensorFlow does (jax's half-precision
    # uniforms would leave few distinct values and a distorted lower tail).
    drawn = np.promote_types(dtype, np.float32)
    standard = jax.random.gamma(key, jnp.broadcast_to(alpha, dims).astype(drawn), dims, drawn)
    return jnp.maximum(jnp.finfo(dtype).tiny, (standard / jnp.broadcast_to(beta, dims).astype(drawn)).astype(dtype))


def _raw(key):
    """A key as its uint32 data: a recorded op takes arrays, not typed keys."""
    return jax.random.key_data(key) if jnp.issubdtype(key.dtype, jax.dtypes.prng_key) else key


def _float_dtype(dtype, fn: str):
    dtype = np.dtype(dtype)
    if dtype.kind != "f":
        raise _errors.GradkitTypeError(
            f"tf.random.{fn} got dtype={dtype.name}: gamma draws are floats (float16, float32, float64), as in "
            "TensorFlow. Pass a float dtype."
        )
    return dtype


def _parameters(alpha, beta, dtype):
    alpha = convert(alpha, dtype)
    beta = convert(1.0 if beta is None else beta, dtype)
    return alpha, beta


def gamma(shape, alpha, beta=None, dtype=_dtypes.float32, seed=None, name=None):
    """``tf.random.gamma``: draws of shape ``shape + broadcast(alpha, beta).shape``."""
    dtype = _float_dtype(dtype, "gamma")
    dims = _random._shape(shape, "gamma")
    alpha, beta = _parameters(alpha, beta, dtype)
    try:
        batch = tuple(np.broadcast_shapes(tuple(alpha.shape), tuple(beta.shape)))
    except ValueError:
        raise _errors.InvalidArgumentValueError(
            f"tf.random.gamma got alpha of shape {list(alpha.shape)} and beta of shape {list(beta.shape)}, "
            "which do not broadcast together; TensorFlow refuses them too."
        ) from None
    with jax.ensure_compile_time_eval():
        key = _raw(_random._key(seed, "gamma", dtype))
    return call(_gamma_draw, key, alpha, beta, dims=tuple(dims) + batch, dtype=dtype)


def stateless_gamma(shape, seed, alpha, beta=None, dtype=_dtypes.float32, name=None):
    """``tf.random.stateless_gamma``: draws of shape ``shape``, ``broadcast(alpha, beta)`` broadcast to
    its rightmost dimensions."""
    dtype = _float_dtype(dtype, "stateless_gamma")
    dims = tuple(_random._shape(shape, "stateless_gamma"))
    alpha, beta = _parameters(alpha, beta, dtype)
    try:
        np.broadcast_shapes(tuple(np.broadcast_shapes(tuple(alpha.shape), tuple(beta.shape))), dims)
        fits = np.broadcast_shapes(tuple(alpha.shape), tuple(beta.shape), dims) == dims
    except ValueError:
        fits = False
    if not fits:
        raise _errors.InvalidArgumentValueError(
            f"tf.random.stateless_gamma got alpha of shape {list(alpha.shape)} and beta of shape "
            f"{list(beta.shape)} for draws of shape {list(dims)}: they must broadcast to it (to its rightmost "
            "dimensions), as in TensorFlow."
        )
    with jax.ensure_compile_time_eval():
        key = key_from_seed(seed, "stateless_gamma")
    return call(_gamma_draw, key, alpha, beta, dims=dims, dtype=dtype)


_LARGEST_COUNTED_RATE = 2.0**30  # jax counts in the default integers: int32 without x64


def _poisson_draw(key, lam, dims, dtype):
    # A negative rate draws zeros, as TensorFlow's kernel does (jax's would be its -1 marker).
    lam = jnp.broadcast_to(jnp.where(lam < 0, jnp.zeros_like(lam), lam), dims)
    if not jnp.issubdtype(dtype, jnp.floating):
        return jax.random.poisson(key, lam, dims).astype(dtype)
    # Float draws of a rate whose counts would not fit jax's integers: Poisson's normal limit
    # (relative error of order 1/sqrt(rate), below 3e-5 there), and an infinite rate draws
    # infinity, as TensorFlow's kernel gives.
    huge = lam >= _LARGEST_COUNTED_RATE
    counts = jax.random.poisson(key, jnp.where(huge, jnp.zeros_like(lam), lam), dims).astype(dtype)
    gaussian = jnp.floor(lam + jnp.sqrt(lam) * jax.random.normal(jax.random.fold_in(key, 1), dims) + 0.5)
    return jnp.where(huge, jnp.where(jnp.isinf(lam), lam, gaussian), counts).astype(dtype)


def _lam(lam, fn: str, dtype_error=_errors.GradkitTypeError):
    lam = convert(lam)
    if np.dtype(lam.dtype).kind not in "iuf":
        raise dtype_error(f"tf.random.{fn} got lam of dtype {lam.dtype}: the rates must be numbers, as in TensorFlow.")
    return lam.__gradkit_value__() if isinstance(lam, Tensor) else lam


def poisson(shape, lam, dtype=_dtypes.float32, seed=None, name=None):
    """``tf.random.poisson``: counts of shape ``shape + lam.shape`` (no gradient, as in TensorFlow)."""
    dtype = np.dtype(dtype)
    dims = tuple(_random._shape(shape, "poisson"))
    lam = _lam(lam, "poisson")
    with jax.ensure_compile_time_eval():
        key = _random._key(seed, "poisson", dtype)
        return Tensor.concrete(_poisson_draw(key, lam.astype(jnp.float32), dims + tuple(lam.shape), dtype))


def stateless_poisson(shape, seed, lam, dtype=_dtypes.int32, name=None):
    """``tf.random.stateless_poisson``: counts of shape ``shape`` (``lam`` broadcast to it)."""
    dtype = np.dtype(dtype)
    dims = tuple(_random._shape(shape, "stateless_poisson"))
    lam = _lam(lam, "stateless_poisson", _errors.InvalidArgumentTypeError)
    try:
        fits = np.broadcast_shapes(tuple(lam.shape), dims) == dims
    except ValueError:
        fits = False
    if not fits:
        raise _errors.InvalidArgumentValueError(
            f"tf.random.stateless_poisson got lam of shape {list(lam.shape)} for draws of shape {list(dims)}: "
            "it must broadcast to that shape (to its rightmost dimensions), as in TensorFlow. Pass a lam whose "
            "shape matches the draw's trailing dimensions (or a scalar), or put lam's shape at the end of shape."
        )
    with jax.ensure_compile_time_eval():
        key = key_from_seed(seed, "stateless_poisson")
        return Tensor.concrete(_poisson_draw(key, lam.astype(jnp.float32), dims, dtype))
