"""``tf.signal.mdct`` and ``tf.signal.inverse_mdct``: the modified discrete cosine transform of
frames half-overlapping (``frame_step = frame_length // 2``), and its inverse by overlap-add.

Built as TensorFlow builds them: ``frame``, a window from ``window_fn(frame_length, dtype=...)``
(``None``: a constant ``1 / sqrt(2)``), then the frame folded to half its length and a type-IV
DCT (``_signal_dct``), the fold and the DCT one recorded op; the inverse unfolds, windows and
overlap-adds. With a power-complementary window (the default Vorbis window, or the
Kaiser-Bessel-derived one) and ``norm="ortho"``, ``inverse_mdct(mdct(x))`` gives ``x`` back
away from the first and last half frame.

>>> import gradkit.tf as tf
>>> x = tf.constant([0.0, 0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 4.0, 0.0, 0.0, 0.0, 0.0])
>>> y = tf.signal.inverse_mdct(tf.signal.mdct(x, 8, norm="ortho"), norm="ortho")
>>> y.numpy().round(4).tolist()[4:8]
[1.0, 2.0, 3.0, 4.0]
"""

from __future__ import annotations

import math

import jax.numpy as jnp

from gradkit import _errors

from . import _signal_dct, _signal_frames
from ._convert import call, convert
from ._signal_args import static_int
from ._signal_stft import _times_window
from ._signal_windows import vorbis_window


def _fold_and_dct(frames, norm):
    q0, q1, q2, q3 = jnp.split(frames, 4, axis=-1)
    folded = jnp.concatenate([-q2[..., ::-1] - q3, q0 - q1[..., ::-1]], axis=-1)
    return _signal_dct._dct(folded, 4, None, norm)


def _dct_and_unfold(mdcts, norm):
    half = mdcts.shape[-1]
    if norm is None:
        out = jnp.asarray(0.5 / half, mdcts.dtype) * _signal_dct._dct(mdcts, 4, None, None)
    else:
        out = _signal_dct._dct(mdcts, 4, None, "ortho")
    s0, s1 = jnp.split(out, 2, axis=-1)
    return jnp.concatenate([s1, -s1[..., ::-1], -s0[..., ::-1], -s0], axis=-1)


def _scaled(frames):
    return frames * jnp.asarray(1.0 / math.sqrt(2), frames.dtype)


def _windowed(frames, window_fn, length):
    if window_fn is None:
        return call(_scaled, frames)
    return call(_times_window, frames, convert(window_fn(length, dtype=frames.dtype)))


def _check_norm(norm, what):
    if norm not in (None, "ortho"):
        raise _errors.GradkitValueError(f"{what} got norm={norm!r}; pass norm=None or norm='ortho'.")


def mdct(signals, frame_length, window_fn=vorbis_window, pad_end=False, norm=None, name=None):
    """TensorFlow's ``tf.signal.mdct``: ``[..., samples]`` to ``[..., frames, frame_length // 2]``."""
    what = "tf.signal.mdct"
    length = static_int(frame_length, what, "frame_length", 4, type_error=_errors.GradkitValueError)
    if length % 4:
        raise _errors.GradkitValueError(
            f"{what} got frame_length={length}, but the frame length must be a multiple of 4, as TensorFlow "
            "requires. Pass e.g. frame_length=256."
        )
    _check_norm(norm, what)
    x = convert(signals)
    if x.dtype.name not in ("float32", "float64"):
        raise _errors.GradkitValueError(
            f"{what} takes float32 or float64 signals, but got dtype {x.dtype.name}. Cast them first: "
            f"{what}(tf.cast(signals, tf.float32), ...)."
        )
    framed = _signal_frames.frame(x, length, length // 2, pad_end=pad_end)
    return call(_fold_and_dct, _windowed(framed, window_fn, length), norm=norm)


def inverse_mdct(mdcts, window_fn=vorbis_window, norm=None, name=None):
    """TensorFlow's ``tf.signal.inverse_mdct``: ``[..., frames, half]`` to ``[..., (frames + 1) * half]``,
    the inverse MDCT of each frame windowed and overlap-added ``half`` apart."""
    what = "tf.signal.inverse_mdct"
    _check_norm(norm, what)
    x = convert(mdcts)
    if x.ndim < 2:
        raise _errors.GradkitValueError(
            f"{what} takes MDCTs of rank 2 or more ([..., frames, frame_length // 2]), but got shape "
            f"{tuple(x.shape)}. Add a frames axis: tf.expand_dims(mdcts, -2)."
        )
    if x.dtype.name not in ("float32", "float64"):
        raise _errors.GradkitValueError(
            f"{what} takes float32 or float64 MDCTs, but got dtype {x.dtype.name}. Cast them first."
        )
    half = x.shape[-1]
    if half % 2:
        raise _errors.GradkitValueError(
            f"{what} takes MDCTs of even length (frame_length // 2, frame_length a multiple of 4), but got "
            f"shape {tuple(x.shape)}."
        )
    frames = _windowed(call(_dct_and_unfold, x, norm=norm), window_fn, 2 * half)
    return _signal_frames.overlap_and_add(frames, half)
