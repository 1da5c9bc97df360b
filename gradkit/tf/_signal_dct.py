"""``tf.signal.dct`` and ``tf.signal.idct``: discrete cosine transforms of types I-IV over the
inner axis, unnormalized (scipy's scaling) or ``norm="ortho"`` (types II-IV), the input first
cropped or zero-padded to ``n``.

Each is TensorFlow's formula through a real FFT (type I: the FFT of the evenly extended signal;
II: of the signal padded to twice its length; III: the inverse; IV: the odd terms of a type II of
twice the length), written as one ``jax.numpy`` function, so its gradient is exact. ``idct`` is
the DCT of the inverse type (II and III swap), so ``idct(dct(x, norm="ortho"), norm="ortho")``
is ``x``; unnormalized, it is ``x`` times ``2 * n`` (``2 * (n - 1)`` for type I), as in
TensorFlow and scipy.

>>> import gradkit.tf as tf
>>> tf.signal.dct(tf.constant([1.0, 2.0, 3.0, 4.0]), type=2).numpy().astype(float).round(4).tolist()
[20.0, -6.3086, 0.0, -0.4483]
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp

from gradkit import _errors

from ._convert import call, convert
from ._signal_args import static_int

_INVERSE_TYPE = {1: 1, 2: 3, 3: 2, 4: 4}


def _along_last(vector, ndim):
    """``vector`` shaped to multiply the last axis of a rank-``ndim`` tensor."""
    return vector.reshape((1,) * (ndim - 1) + vector.shape)


def _twiddle(length, dtype, sign, ndim):
    """``2 exp(sign * i pi k / (2 length))``, k = 0 .. length - 1, in ``dtype``'s complex type."""
    angle = jnp.arange(length, dtype=dtype) * math.pi * 0.5 / jnp.asarray(length, dtype)
    return _along_last(2.0 * jnp.exp(1j * (sign * angle)), ndim)


def _ortho_weights(length, dtype, first, rest, ndim):
    return _along_last(jnp.concatenate([jnp.full([1], first, dtype), jnp.full([length - 1], rest, dtype)]), ndim)


def _dct(x, kind, n, norm):
    if n is not None:
        width = x.shape[-1]
        if n <= width:
            x = x[..., :n]
        else:
            x = jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, n - width)])
    length = x.shape[-1]
    if kind == 1:
        return jnp.real(jnp.fft.rfft(jnp.concatenate([x, x[..., -2:0:-1]], axis=-1)))
    if kind == 2:
        spectrum = jnp.fft.rfft(x, n=2 * length, axis=-1)[..., :length]
        out = jnp.real(spectrum * _twiddle(length, x.dtype, -1.0, x.ndim))
        if norm == "ortho":
            first = 0.5 / math.sqrt(length)
            out = out * _ortho_weights(length, x.dtype, first, first * math.sqrt(2.0), x.ndim)
        return out
    if kind == 3:
        if norm == "ortho":
            first = math.sqrt(length)
            x = x * _ortho_weights(length, x.dtype, first, first * math.sqrt(0.5), x.ndim)
        else:
            x = x * jnp.asarray(length, x.dtype)
        twiddle = _twiddle(length, x.dtype, 1.0, x.ndim)
        spectrum = twiddle * x.astype(twiddle.dtype)
        return jnp.fft.irfft(spectrum, n=2 * length, axis=-1)[..., :length]
    out = _dct(x, 2, 2 * length, None)[..., 1::2]
    if norm == "ortho":
        out = out * (math.sqrt(0.5) / math.sqrt(length))
    return out


def _checked(input, type, n, axis, norm, what):  # noqa: A002  (TensorFlow's argument names)
    if axis != -1:
        raise _errors.GradkitNotImplementedError(
            f"{what} transforms the last axis only (axis=-1), as TensorFlow, but got axis={axis!r}. Move the "
            "axis last first: tf.transpose, or tf.experimental.numpy.moveaxis."
        )
    if n is not None and static_int(n, what, "n") < 1:
        raise _errors.GradkitValueError(f"{what} got n={n!r}; n must be a positive integer or None.")
    if type not in (1, 2, 3, 4):
        raise _errors.GradkitValueError(f"{what} got type={type!r}; TensorFlow has DCT types 1, 2, 3 and 4.")
    if norm not in (None, "ortho"):
        raise _errors.GradkitValueError(f"{what} got norm={norm!r}; pass norm=None or norm='ortho'.")
    x = convert(input)
    if x.dtype.name not in ("float32", "float64"):
        raise _errors.GradkitTypeError(
            f"{what} takes a float32 or float64 tensor, as TensorFlow (its real FFT), but got dtype "
            f"{x.dtype.name}. Cast it first: {what}(tf.cast(x, tf.float32))."
        )
    if x.ndim < 1:
        raise _errors.GradkitValueError(f"{what} takes a tensor of rank 1 or more, but got a scalar.")
    if type == 1:
        if norm == "ortho":
            raise _errors.GradkitValueError(
                f"{what} has no orthonormal type-I DCT (TensorFlow defines none): pass norm=None with type=1."
            )
        if x.shape[-1] < 2:
            raise _errors.GradkitValueError(
                f"{what}: the type-I DCT needs 2 or more entries on the last axis, but got shape {tuple(x.shape)}."
            )
    return x


def dct(input, type=2, n=None, axis=-1, norm=None, name=None):  # noqa: A002  (TensorFlow's argument names)
    """TensorFlow's ``tf.signal.dct``: the type ``type`` DCT of the last axis (cropped or padded to ``n``)."""
    x = _checked(input, type, n, axis, norm, "tf.signal.dct")
    return call(_dct, x, kind=type, n=None if n is None else static_int(n, "tf.signal.dct", "n"), norm=norm)


def idct(input, type=2, n=None, axis=-1, norm=None, name=None):  # noqa: A002  (TensorFlow's argument names)
    """TensorFlow's ``tf.signal.idct``: the DCT of the inverse type (II and III swap; I and IV are
    their own inverses up to scale)."""
    x = _checked(input, type, n, axis, norm, "tf.signal.idct")
    n = None if n is None else static_int(n, "tf.signal.idct", "n")
    return call(_dct, x, kind=_INVERSE_TYPE[type], n=n, norm=norm)


def _mfccs(log_mel):
    return _dct(log_mel, 2, None, None) * jax.lax.rsqrt(jnp.asarray(log_mel.shape[-1] * 2.0, log_mel.dtype))


def mfccs_from_log_mel_spectrograms(log_mel_spectrograms, name=None):
    """TensorFlow's ``tf.signal.mfccs_from_log_mel_spectrograms``: the orthonormal-scaled type-II
    DCT of log-mel spectrograms (``dct(x) / sqrt(2 * num_mel_bins)``, HTK's scaling)."""
    what = "tf.signal.mfccs_from_log_mel_spectrograms"
    x = _checked(log_mel_spectrograms, 2, None, -1, None, what)
    if x.shape[-1] == 0:
        raise _errors.GradkitValueError(
            f"{what} needs at least one mel bin (the last axis), but got shape {tuple(x.shape)}."
        )
    return call(_mfccs, x)
