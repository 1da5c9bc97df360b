"""``tf.signal.stft``, ``inverse_stft`` and ``inverse_stft_window_fn``, built as TensorFlow builds
them: frames (``_signal_frames``), a window from ``window_fn(frame_length, dtype=...)`` (any
callable of that form, ``None`` for none), and the real FFT of ``_signal_fft`` with a scalar
``fft_length`` (by default the power of two enclosing ``frame_length``). Each step is recorded on
the tape, so gradients are exact, also through a window computed from Variables.

>>> import gradkit.tf as tf
>>> x = tf.constant([0.0, 1.0, 0.0, -1.0, 0.0, 1.0, 0.0, -1.0])
>>> tuple(tf.signal.stft(x, frame_length=4, frame_step=2).shape)  # 3 frames, 4 // 2 + 1 bins
(3, 3)
>>> inverse = tf.signal.inverse_stft_window_fn(2)
>>> tf.signal.inverse_stft(tf.signal.stft(x, 4, 2), 4, 2, window_fn=inverse).numpy().round(4).tolist()[2:6]
[0.0, -1.0, 0.0, 1.0]
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from . import _array, _signal_fft, _signal_frames
from ._convert import call, convert
from ._signal_args import static_int
from ._signal_windows import hann_window


def _enclosing_power_of_two(frame_length: int) -> int:
    # TensorFlow's formula, its float rounding included.
    with np.errstate(divide="ignore"):
        return int(2 ** np.ceil(np.log(frame_length) / np.log(2.0)))


def _fft_length(fft_length, frame_length, what) -> int:
    if fft_length is None:
        return _enclosing_power_of_two(frame_length)
    return static_int(fft_length, what, "fft_length", 1)


def _times_window(frames, window):
    # TensorFlow broadcasts the window over the frames; written out, as gradkit's suite refuses
    # implicit rank promotion.
    return frames * window.reshape((1,) * (frames.ndim - window.ndim) + window.shape)


def _windowed(frames, window_fn, frame_length):
    if window_fn is None:
        return frames
    return call(_times_window, frames, convert(window_fn(frame_length, dtype=frames.dtype)))


def stft(signals, frame_length, frame_step, fft_length=None, window_fn=hann_window, pad_end=False, name=None):
    """TensorFlow's ``tf.signal.stft``: ``[..., samples]`` to ``[..., frames, fft_length // 2 + 1]``,
    the real FFT of each windowed frame."""
    what = "tf.signal.stft"
    # As TensorFlow's eager kernels: a float length or step, or a zero step, is an InvalidArgumentError.
    frame_length = static_int(frame_length, what, "frame_length", 1, type_error=_errors.InvalidArgumentTypeError)
    frame_step = static_int(
        frame_step, what, "frame_step", 1, _errors.InvalidArgumentTypeError, _errors.InvalidArgumentValueError
    )
    fft_length = _fft_length(fft_length, frame_length, what)
    framed = _signal_frames.frame(signals, frame_length, frame_step, pad_end=pad_end)
    return _signal_fft.rfft(_windowed(framed, window_fn, frame_length), [fft_length])


def inverse_stft(stfts, frame_length, frame_step, fft_length=None, window_fn=hann_window, name=None):
    """TensorFlow's ``tf.signal.inverse_stft``: the inverse real FFT of each frame, cropped or
    zero-padded to ``frame_length``, windowed, and overlap-added ``frame_step`` apart. Pass
    ``window_fn=tf.signal.inverse_stft_window_fn(frame_step)`` to invert ``stft`` exactly."""
    what = "tf.signal.inverse_stft"
    x = convert(stfts)
    if x.ndim < 2:
        raise _errors.GradkitValueError(
            f"{what} takes STFTs of rank 2 or more ([..., frames, bins]), but got shape {tuple(x.shape)}. "
            "Add a frames axis: tf.expand_dims(stfts, -2)."
        )
    # TensorFlow checks a float frame_step in Python (ValueError); its kernel refuses a zero one.
    frame_length = static_int(frame_length, what, "frame_length", 1)
    frame_step = static_int(
        frame_step, what, "frame_step", 1, _errors.GradkitValueError, _errors.InvalidArgumentValueError
    )
    fft_length = _fft_length(fft_length, frame_length, what)
    frames = _signal_fft.irfft(x, [fft_length])
    if fft_length > frame_length:
        frames = frames[..., :frame_length]
    elif fft_length < frame_length:
        frames = _array.pad(frames, [[0, 0]] * (frames.ndim - 1) + [[0, frame_length - fft_length]])
    return _signal_frames.overlap_and_add(_windowed(frames, window_fn, frame_length), frame_step)


def _inverse_window(forward, step):
    # Divides the forward window by the sum of its squares over the frames that overlap each
    # sample; 0 where that sum is 0 (the safe divisor keeps the gradient finite there).
    length = forward.shape[0]
    overlaps = -(-length // step)
    squares = jnp.pad(jnp.square(forward), (0, overlaps * step - length))
    denominator = jnp.tile(squares.reshape(overlaps, step).sum(0), overlaps)[:length]
    zero = denominator == 0
    return jnp.where(zero, jnp.zeros_like(forward), forward / jnp.where(zero, 1, denominator))


def inverse_stft_window_fn(frame_step, forward_window_fn=hann_window, name=None):
    """TensorFlow's ``tf.signal.inverse_stft_window_fn``: a ``window_fn(frame_length, dtype)`` for
    ``inverse_stft`` that undoes ``stft`` with ``forward_window_fn`` and ``frame_step``."""
    what = "tf.signal.inverse_stft_window_fn"
    step = static_int(frame_step, what, "frame_step", 1)

    def inverse_stft_window_fn_inner(frame_length, dtype):
        forward = convert(forward_window_fn(frame_length, dtype=dtype))
        return call(_inverse_window, forward, step=step)

    return inverse_stft_window_fn_inner
