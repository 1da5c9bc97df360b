"""``tf.signal``'s window functions: ``hann_window``, ``hamming_window``, ``kaiser_window``,
``kaiser_bessel_derived_window`` and ``vorbis_window``.

Each is computed in the requested floating ``dtype`` with TensorFlow's formula, quirks
included: a ``periodic`` window of odd length is the symmetric one (TensorFlow divides by
``window_length - 1`` unless the length is even), a window of length 1 is ``[1.0]``, and the
Kaiser-Bessel-derived window has ``2 * (window_length // 2)`` entries. ``periodic`` may be a
boolean tensor (even one traced inside ``tf.function``); ``window_length`` sets the result's
shape, so it must be known. ``kaiser_window``'s ``beta`` may be a tensor, with its exact
gradient.

>>> import gradkit.tf as tf
>>> tf.signal.hann_window(4).numpy().tolist()
[0.0, 0.5, 1.0, 0.5]
>>> tf.signal.hann_window(5, periodic=True).numpy().tolist()  # odd: as TensorFlow, symmetric
[0.0, 0.5, 1.0, 0.5, 0.0]
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from . import _dtypes
from ._convert import call, convert
from ._signal_args import static_int


def _check_dtype(dtype, what):
    dtype = np.dtype(dtype)
    if not jnp.issubdtype(dtype, jnp.floating):
        raise _errors.GradkitValueError(
            f"{what} computes a window of floating dtype, but got dtype={dtype.name}. Pass dtype=tf.float32 "
            "(or float16, float64) and cast the window afterwards if you need another type."
        )
    return dtype


def _raised_cosine(periodic, length, dtype, a, b):
    if length == 1:
        return jnp.ones([1], dtype)
    even = 1 - length % 2
    n = (length - 1 + periodic.astype(jnp.int32) * even).astype(dtype)
    count = jnp.arange(length).astype(dtype)
    return (a - b * jnp.cos(jnp.asarray(2 * np.pi, dtype) * count / n)).astype(dtype)


def _raised_cosine_window(window_length, periodic, dtype, a, b, what):
    dtype = _check_dtype(dtype, what)
    length = static_int(window_length, what, "window_length", 0, least_error=_errors.InvalidArgumentValueError)
    periodic = convert(periodic, _dtypes.bool)
    if periodic.ndim != 0:
        raise _errors.GradkitValueError(
            f"{what} takes a scalar periodic flag, but got one of shape {tuple(periodic.shape)}. Pass True or False."
        )
    return call(_raised_cosine, periodic, length=length, dtype=dtype, a=a, b=b)


def hann_window(window_length, periodic=True, dtype=_dtypes.float32, name=None):
    """TensorFlow's ``tf.signal.hann_window``: ``0.5 - 0.5 cos(2 pi n / N)``, N the length for a
    periodic window of even length, the length minus 1 otherwise."""
    return _raised_cosine_window(window_length, periodic, dtype, 0.5, 0.5, "tf.signal.hann_window")


def hamming_window(window_length, periodic=True, dtype=_dtypes.float32, name=None):
    """TensorFlow's ``tf.signal.hamming_window``: ``0.54 - 0.46 cos(2 pi n / N)``, N as in
    ``hann_window``."""
    return _raised_cosine_window(window_length, periodic, dtype, 0.54, 0.46, "tf.signal.hamming_window")


def _ones(length, dtype):
    return jnp.ones([length], dtype)


def _kaiser(beta, length, dtype):
    # TensorFlow takes the positions in float32 (its range has no float16 kernel), then casts.
    half = np.float32(length - 1) / np.float32(2)
    arg = (jnp.arange(length, dtype=jnp.float32) - half).astype(dtype)
    beta = beta.astype(dtype)
    num = beta * jnp.sqrt(jax.nn.relu(1 - jnp.square(arg / jnp.asarray(half, dtype))))
    return jnp.exp(num - beta) * (jax.scipy.special.i0e(num) / jax.scipy.special.i0e(beta))


def _kaiser_window(window_length, beta, dtype, what):
    dtype = _check_dtype(dtype, what)
    length = static_int(window_length, what, "window_length", 1, least_error=_errors.InvalidArgumentValueError)
    beta = convert(beta, None if hasattr(beta, "dtype") else dtype)
    # TensorFlow casts beta to the window's dtype, so an integer tensor is taken too.
    if not (jnp.issubdtype(beta.dtype, jnp.floating) or jnp.issubdtype(beta.dtype, jnp.integer)) or beta.ndim != 0:
        raise _errors.GradkitTypeError(
            f"{what} takes a real scalar beta, but got {_errors.describe_value(beta)}. Pass a float, e.g. beta=12.0."
        )
    if length == 1:  # [1.0], whatever beta is: no gradient reaches beta, as in TensorFlow
        return call(_ones, length=1, dtype=dtype)
    return call(_kaiser, beta, length=length, dtype=dtype)


def kaiser_window(window_length, beta=12.0, dtype=_dtypes.float32, name=None):
    """TensorFlow's ``tf.signal.kaiser_window`` (NumPy's ``kaiser``): ``I0(beta sqrt(1 - r^2)) /
    I0(beta)`` at ``window_length`` points ``r`` from -1 to 1."""
    return _kaiser_window(window_length, beta, dtype, "tf.signal.kaiser_window")


def _kaiser_bessel_derived(kaiser):
    total = jnp.cumsum(kaiser)
    half = jnp.sqrt(total[:-1] / total[-1])
    return jnp.concatenate([half, half[::-1]])


def kaiser_bessel_derived_window(window_length, beta=12.0, dtype=_dtypes.float32, name=None):
    """TensorFlow's ``tf.signal.kaiser_bessel_derived_window``: the square roots of the running sums
    of a Kaiser window of ``window_length // 2 + 1`` points, mirrored (``2 * (window_length // 2)``
    entries, as TensorFlow)."""
    what = "tf.signal.kaiser_bessel_derived_window"
    length = static_int(window_length, what, "window_length", 0, least_error=_errors.InvalidArgumentValueError)
    return call(_kaiser_bessel_derived, _kaiser_window(length // 2 + 1, beta, dtype, what))


def _vorbis(length, dtype):
    arg = jnp.arange(length).astype(dtype)
    inner = jnp.sin(jnp.asarray(np.pi, dtype) / jnp.asarray(length, dtype) * (arg + 0.5))
    return jnp.sin(np.pi / 2.0 * inner**2)


def vorbis_window(window_length, dtype=_dtypes.float32, name=None):
    """TensorFlow's ``tf.signal.vorbis_window``: ``sin(pi / 2 sin^2(pi (n + 1/2) / N))``, a power
    complementary window (its square plus its half-shifted square is 1)."""
    what = "tf.signal.vorbis_window"
    dtype = _check_dtype(dtype, what)
    length = static_int(window_length, what, "window_length", 0, least_error=_errors.InvalidArgumentValueError)
    return call(_vorbis, length=length, dtype=dtype)
