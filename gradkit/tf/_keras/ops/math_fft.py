"""``keras.ops``' Fourier family: ``fft``, ``fft2``, ``ifft2``, ``rfft``, ``irfft``, ``stft``, ``istft``
and ``extract_sequences``, built on ``gradkit.tf.signal`` as Keras' TensorFlow backend builds them on
``tf.signal`` (so values and gradients are TensorFlow's).

As in Keras, a complex signal travels as a ``(real, imag)`` pair of float tensors of one shape: the
complex transforms take and return such pairs, ``rfft`` and ``stft`` return one from a real signal,
``irfft`` and ``istft`` take one and return a real signal. Each transform runs along the last axis
(``fft2``/``ifft2``: the last two). The lengths set the results' shapes, so they must be Python ints
(or known when ``tf.function`` traces).

>>> import gradkit.tf as tf
>>> ops = tf.keras.ops
>>> real, imag = ops.fft((tf.constant([1.0, 2.0]), tf.constant([0.0, 1.0])))
>>> real.numpy().tolist(), imag.numpy().tolist()
([3.0, -1.0], [1.0, -1.0])
>>> ops.irfft(ops.rfft(tf.constant([1.0, 2.0, 3.0, 4.0]))).numpy().tolist()
[1.0, 2.0, 3.0, 4.0]
"""

from __future__ import annotations

import numpy as np

from gradkit import _errors

from ... import _array, _math, _signal_fft, _signal_frames, _signal_stft, _signal_windows
from ..._convert import _is_python_value
from ..._signal_args import static_int
from .dispatch import keras_op, tensor

NAMES = "fft fft2 ifft2 rfft irfft stft istft extract_sequences"

_FLOATS = ("float32", "float64")
_WINDOWS = {"hann": _signal_windows.hann_window, "hamming": _signal_windows.hamming_window}


# -- arguments --------------------------------------------------------------------------------


class SignalDtypeError(_errors.GradkitTypeError, ValueError):
    """A signal of a dtype the Fourier ops refuse: Keras' TensorFlow backend raises ValueError (``rfft``
    of an int tensor, a complex op's int parts) or TypeError (float16 parts, ``stft``), so both."""


def _float_signal(x, name, what="x", converts=False):
    """``x`` as a float32/float64 tensor. With ``converts`` (``rfft``, which passes ``x`` straight to
    ``tf.signal.rfft``), a Python number or list and a NumPy array of any number dtype become float32
    first, as TensorFlow converts them; otherwise they keep Keras' ``convert_to_tensor`` dtype (a list
    of ints is int32, a NumPy array keeps its dtype) and only float32/float64 pass."""
    python_or_numpy = _is_python_value(x) or isinstance(x, (np.ndarray, np.generic))
    x = tensor(x, "float32") if converts and python_or_numpy and np.asarray(x).dtype.kind in "biuf" else tensor(x)
    dtype = np.dtype(x.dtype).name
    if dtype not in _FLOATS:
        raise SignalDtypeError(
            f"tf.keras.ops.{name} takes {what} as a float32 or float64 tensor (Keras' TensorFlow backend refuses "
            f"other dtypes), but got dtype {dtype}. Cast it first: tf.keras.ops.cast(x, 'float32')."
        )
    return x


def _at_least_rank(x, rank, name, what="x"):
    if x.ndim < rank:
        axes = "last axis" if rank == 1 else f"last {rank} axes"
        raise _errors.GradkitValueError(
            f"tf.keras.ops.{name} transforms the {axes} of {what}, but got shape {tuple(x.shape)} (rank {x.ndim}). "
            f"Give it rank {rank} or more, e.g. with tf.keras.ops.expand_dims(x, 0)."
        )


def _complex_signal(x, name, rank):
    """Keras' ``(real, imag)`` pair ``x`` as one complex tensor (complex64 from float32)."""
    if not isinstance(x, (tuple, list)) or len(x) != 2:
        raise _errors.GradkitValueError(
            f"tf.keras.ops.{name} takes x as a (real, imag) pair of float tensors, as Keras does, but got "
            f"{_errors.describe_value(x)}. Pass a tuple, tf.keras.ops.{name}((real, imag)); for a real signal, "
            "imag = tf.keras.ops.zeros_like(real)."
        )
    real, imag = (_float_signal(part, name, f"x[{i}]") for i, part in enumerate(x))
    if tuple(real.shape) != tuple(imag.shape) or real.dtype != imag.dtype:
        raise _errors.GradkitValueError(
            f"tf.keras.ops.{name} takes real and imaginary parts of one shape and dtype, but got "
            f"{_errors.describe_value(real)} and {_errors.describe_value(imag)}. Broadcast and cast them to match "
            "(tf.keras.ops.broadcast_to, tf.keras.ops.cast)."
        )
    _at_least_rank(real, rank, name, "x's parts")
    return _math.complex(real, imag)


def _parts(z):
    return _math.real(z), _math.imag(z)


def _length(value, name, argument, least=1):
    return static_int(value, f"tf.keras.ops.{name}", argument, least)


def _fft_length(fft_length, default, name):
    """``fft_length`` as an int, ``default`` (the transform's natural length) when None."""
    if fft_length is not None:
        return _length(fft_length, name, "fft_length")
    if default < 1:
        raise _errors.GradkitValueError(
            f"tf.keras.ops.{name} got an input whose last axis gives a transform of length {default}, but a "
            "transform needs at least one sample. Pass fft_length=... or a longer input."
        )
    return default


# -- complex and real FFTs --------------------------------------------------------------------


def _complex_op(name, rank, transform):
    def op(x):
        return _parts(transform(_complex_signal(x, name, rank)))

    op.__name__ = op.__qualname__ = name
    axes = "last axis" if rank == 1 else "last two axes"
    kind = "inverse " if name.startswith("i") else ""
    op.__doc__ = (
        f"``keras.ops.{name}(x)``: the {kind}discrete Fourier transform along the {axes} of the complex "
        "signal ``x = (real, imag)``, returned as ``(real, imag)``."
    )
    return keras_op(op)


fft = _complex_op("fft", 1, _signal_fft.fft)
fft2 = _complex_op("fft2", 2, _signal_fft.fft2d)
ifft2 = _complex_op("ifft2", 2, _signal_fft.ifft2d)


@keras_op
def rfft(x, fft_length=None):
    """``keras.ops.rfft(x, fft_length=None)``: the Fourier transform of the real signal ``x`` along its
    last axis, cropped or zero-padded to ``fft_length`` samples; its ``fft_length // 2 + 1`` unique
    frequencies as ``(real, imag)``."""
    x = _float_signal(x, "rfft", converts=True)
    _at_least_rank(x, 1, "rfft")
    return _parts(_signal_fft.rfft(x, [_fft_length(fft_length, x.shape[-1], "rfft")]))


@keras_op
def irfft(x, fft_length=None):
    """``keras.ops.irfft(x, fft_length=None)``: the real signal of ``fft_length`` samples (by default
    ``2 * (bins - 1)``) whose ``rfft`` is ``x = (real, imag)``, the bins cropped or zero-padded to
    ``fft_length // 2 + 1``."""
    z = _complex_signal(x, "irfft", 1)
    return _signal_fft.irfft(z, [_fft_length(fft_length, 2 * (z.shape[-1] - 1), "irfft")])


# -- short-time transforms --------------------------------------------------------------------


def _frame_lengths(name, sequence_length, sequence_stride, fft_length):
    sequence_length = _length(sequence_length, name, "sequence_length")
    sequence_stride = _length(sequence_stride, name, "sequence_stride")
    fft_length = _length(fft_length, name, "fft_length")
    if fft_length < sequence_length:
        raise _errors.GradkitValueError(
            f"tf.keras.ops.{name} got fft_length={fft_length} < sequence_length={sequence_length}: each sequence "
            "is zero-padded to fft_length, so it must be at least as long (Keras raises ValueError). Pass "
            f"fft_length={sequence_length} or more."
        )
    return sequence_length, sequence_stride, fft_length


def _padded_window(window, name, sequence_length, fft_length, dtype):
    """Keras' ``window`` (``"hann"``, ``"hamming"``, a tensor of ``sequence_length`` values, or None)
    centered in ``fft_length`` samples."""
    if window is None:
        return None
    if isinstance(window, str):
        if window not in _WINDOWS:
            raise _errors.GradkitValueError(
                f"tf.keras.ops.{name} got window={window!r}; Keras names only 'hann' and 'hamming'. Pass one of "
                f"those, a tensor of sequence_length={sequence_length} values, or None."
            )
        values = _WINDOWS[window](sequence_length, periodic=True, dtype=dtype)
    else:
        values = tensor(window, np.dtype(dtype).name)
        if tuple(values.shape) != (sequence_length,):
            raise _errors.GradkitValueError(
                f"tf.keras.ops.{name} takes a window of shape ({sequence_length},) (sequence_length values), but "
                f"got shape {tuple(values.shape)}. Pass sequence_length={values.shape[-1] if values.ndim else 1} "
                "or a window of that length."
            )
    left = (fft_length - sequence_length) // 2
    return _array.pad(values, [[left, fft_length - sequence_length - left]])


def _window_fn(window):
    return None if window is None else (lambda frame_length, dtype: window)


def _reflected(x, half, name):
    """``x`` with its last axis mirrored by ``half`` samples at each end (``center=True``)."""
    if x.shape[-1] <= half:
        raise _errors.GradkitValueError(
            f"tf.keras.ops.{name} with center=True mirrors fft_length // 2 = {half} samples at each end of the "
            f"signal, which needs more than {half} samples, but got shape {tuple(x.shape)}. Pass center=False, "
            "a smaller fft_length, or a longer signal."
        )
    return _array.pad(x, [[0, 0]] * (x.ndim - 1) + [[half, half]], mode="REFLECT")


@keras_op
def stft(x, sequence_length, sequence_stride, fft_length, window="hann", center=True):
    """``keras.ops.stft(x, sequence_length, sequence_stride, fft_length, window="hann", center=True)``:
    the short-time Fourier transform along ``x``'s last axis, ``(real, imag)`` of shape
    ``[..., frames, fft_length // 2 + 1]``. Each sequence of ``sequence_length`` samples, taken every
    ``sequence_stride``, is windowed and zero-padded to ``fft_length`` (both centered); ``center``
    first mirrors ``fft_length // 2`` samples at each end, so frame ``t`` is centered on sample
    ``t * sequence_stride``."""
    x = _float_signal(x, "stft")
    _at_least_rank(x, 1, "stft")
    sequence_length, sequence_stride, fft_length = _frame_lengths("stft", sequence_length, sequence_stride, fft_length)
    window = _padded_window(window, "stft", sequence_length, fft_length, x.dtype)
    if center:
        x = _reflected(x, fft_length // 2, "stft")
    spectra = _signal_stft.stft(x, fft_length, sequence_stride, fft_length, window_fn=_window_fn(window))
    return _parts(spectra)


@keras_op
def istft(x, sequence_length, sequence_stride, fft_length, length=None, window="hann", center=True):
    """``keras.ops.istft(x, sequence_length, sequence_stride, fft_length, length=None, window="hann",
    center=True)``: the signal whose ``stft`` (with the same arguments) is ``x = (real, imag)``,
    overlap-added with the window that inverts ``window``; ``length`` crops it (by default ``center``
    drops the ``fft_length // 2`` mirrored samples at each end)."""
    z = _complex_signal(x, "istft", 2)
    sequence_length, sequence_stride, fft_length = _frame_lengths("istft", sequence_length, sequence_stride, fft_length)
    window = _padded_window(window, "istft", sequence_length, fft_length, np.finfo(np.dtype(z.dtype)).dtype)
    inverse_window = None
    if window is not None:
        inverse_window = _signal_stft.inverse_stft_window_fn(sequence_stride, _window_fn(window))
    signal = _signal_stft.inverse_stft(z, fft_length, sequence_stride, fft_length, window_fn=inverse_window)
    start = fft_length // 2 if center else 0
    if length is not None:
        end = start + _length(length, "istft", "length", 0)
    elif center:
        end = -(fft_length // 2)
    else:
        end = fft_length + sequence_stride * (z.shape[-2] - 1)
    return signal[..., start:end]


@keras_op
def extract_sequences(x, sequence_length, sequence_stride):
    """``keras.ops.extract_sequences(x, sequence_length, sequence_stride)``: ``x``'s last axis cut into
    ``1 + (N - sequence_length) // sequence_stride`` sequences of ``sequence_length`` samples, one every
    ``sequence_stride``: shape ``[..., sequences, sequence_length]``."""
    x = tensor(x)
    if x.ndim < 1:
        raise _errors.GradkitValueError(
            "tf.keras.ops.extract_sequences cuts the last axis of x into sequences, but got a scalar. Pass a "
            "tensor of rank 1 or more, e.g. tf.keras.ops.reshape(x, [-1])."
        )
    sequence_length = _length(sequence_length, "extract_sequences", "sequence_length")
    sequence_stride = _length(sequence_stride, "extract_sequences", "sequence_stride")
    return _signal_frames.frame(x, sequence_length, sequence_stride, axis=-1)
