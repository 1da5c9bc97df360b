"""``tf.signal.linear_to_mel_weight_matrix``: the ``[num_spectrogram_bins, num_mel_bins]`` matrix
of triangular filters, evenly spaced on HTK's mel scale (``1127 ln(1 + f / 700)``), that maps a
linear-frequency magnitude spectrogram to a mel spectrogram.

TensorFlow's construction: the spectrogram bins at ``linspace(0, sample_rate / 2,
num_spectrogram_bins)`` in mel, the band edges at ``num_mel_bins + 2`` points from the lower to
the upper edge in mel, each filter the rising then falling slope between its edges, and the DC
bin's row zero. ``sample_rate`` and the edges may be tensors (then the matrix is differentiable in
them); Python values are checked as TensorFlow checks them.

>>> import gradkit.tf as tf
>>> m = tf.signal.linear_to_mel_weight_matrix(4, 9, 8000, 125.0, 3800.0)
>>> tuple(m.shape), float(tf.reduce_sum(m[0]))
((9, 4), 0.0)
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from . import _dtypes
from ._convert import call, convert, known_value
from ._signal_args import static_int

_MEL_BREAK_FREQUENCY_HERTZ = 700.0
_MEL_HIGH_FREQUENCY_Q = 1127.0


def _hertz_to_mel(hertz):
    return _MEL_HIGH_FREQUENCY_Q * jnp.log(1.0 + hertz / _MEL_BREAK_FREQUENCY_HERTZ)


def _linspace(start, stop, num):
    # TensorFlow's linspace: start + i * (stop - start) / (num - 1), its last point ``stop`` itself (so
    # a bin at the upper edge's frequency lands on the edge exactly, as in TensorFlow).
    step = (stop - start) / max(num - 1, 1)
    points = start + jnp.arange(num, dtype=start.dtype) * step
    return points if num < 2 else jnp.concatenate([points[:-1], stop[None]])


def _mel_matrix(sample_rate, lower_edge, upper_edge, num_mel_bins, num_spectrogram_bins, dtype):
    sample_rate, lower_edge, upper_edge = (v.astype(dtype) for v in (sample_rate, lower_edge, upper_edge))
    frequencies = _linspace(jnp.zeros([], dtype), sample_rate / 2.0, num_spectrogram_bins)[1:]
    bins_mel = _hertz_to_mel(frequencies)[:, None]
    edges = _linspace(_hertz_to_mel(lower_edge), _hertz_to_mel(upper_edge), num_mel_bins + 2)
    lower, center, upper = edges[None, :-2], edges[None, 1:-1], edges[None, 2:]
    lower_slopes = (bins_mel - lower) / (center - lower)
    upper_slopes = (upper - bins_mel) / (upper - center)
    # TensorFlow's Minimum and Maximum: a tie's gradient goes to the first argument (jax's would split
    # it), so a bin on a band edge (the upper edge at the Nyquist frequency) gives the slope none.
    slopes = jnp.where(lower_slopes <= upper_slopes, lower_slopes, upper_slopes)
    weights = jnp.where(0 >= slopes, jnp.zeros([], dtype), slopes)
    return jnp.pad(weights, [(1, 0), (0, 0)])


def _validate(num_mel_bins, sample_rate, lower_edge, upper_edge, dtype, what):
    if num_mel_bins <= 0:
        raise _errors.GradkitValueError(f"{what} got num_mel_bins={num_mel_bins}; it must be positive.")
    if lower_edge is not None and lower_edge < 0.0:
        raise _errors.GradkitValueError(f"{what} got lower_edge_hertz={lower_edge}; it must be non-negative.")
    if lower_edge is not None and upper_edge is not None and lower_edge >= upper_edge:
        raise _errors.GradkitValueError(
            f"{what} got lower_edge_hertz {lower_edge:.1f} >= upper_edge_hertz {upper_edge:.1f}; the lower "
            "edge must be below the upper one."
        )
    if sample_rate is not None:
        if sample_rate <= 0.0:
            raise _errors.GradkitValueError(f"{what} got sample_rate={sample_rate}; it must be positive.")
        if upper_edge is not None and upper_edge > sample_rate / 2:
            raise _errors.GradkitValueError(
                f"{what} got upper_edge_hertz={upper_edge} for sample_rate={sample_rate}: the upper edge must not "
                "be above the Nyquist frequency (sample_rate / 2). Lower it, or raise the sample rate."
            )
    if not jnp.issubdtype(dtype, jnp.floating):
        raise _errors.GradkitValueError(
            f"{what} builds a matrix of floating dtype, but got dtype={np.dtype(dtype).name}. Pass tf.float32."
        )


def _known_scalar(value):
    known = known_value(value)
    return None if known is None or known.ndim else float(known)


def linear_to_mel_weight_matrix(
    num_mel_bins=20,
    num_spectrogram_bins=129,
    sample_rate=8000,
    lower_edge_hertz=125.0,
    upper_edge_hertz=3800.0,
    dtype=_dtypes.float32,
    name=None,
):
    """TensorFlow's ``tf.signal.linear_to_mel_weight_matrix``: multiply a ``[..., num_spectrogram_bins]``
    magnitude spectrogram by it (``tf.tensordot(spectrogram, matrix, 1)``) to get ``[..., num_mel_bins]``."""
    what = "tf.signal.linear_to_mel_weight_matrix"
    dtype = np.dtype(dtype)
    num_mel_bins = static_int(num_mel_bins, what, "num_mel_bins")
    num_spectrogram_bins = static_int(num_spectrogram_bins, what, "num_spectrogram_bins", 1)
    _validate(
        num_mel_bins,
        _known_scalar(sample_rate),
        _known_scalar(lower_edge_hertz),
        _known_scalar(upper_edge_hertz),
        dtype,
        what,
    )
    arguments = [
        convert(value, None if hasattr(value, "dtype") else dtype)
        for value in (sample_rate, lower_edge_hertz, upper_edge_hertz)
    ]
    return call(
        _mel_matrix, *arguments, num_mel_bins=num_mel_bins, num_spectrogram_bins=num_spectrogram_bins, dtype=dtype
    )
