"""``tf.bitcast``: the same bits read as another dtype.

>>> import gradkit.tf as tf
>>> tf.bitcast(tf.constant([1.0]), tf.int32).numpy().tolist()
[1065353216]
>>> tf.bitcast(tf.constant([1.0]), tf.uint8).shape
(1, 4)
"""

from __future__ import annotations

import jax
import numpy as np

from gradkit import _errors
from gradkit._tape import record

from ._convert import call, convert


def _bitcast(x, dtype):
    return jax.lax.bitcast_convert_type(x, dtype)


# TensorFlow registers no gradient for Bitcast (tape.gradient raises LookupError there); gradkit
# gives None, as for its other ops without a gradient.
record.cut_by_design(_bitcast, "tf.bitcast (it has no gradient in TensorFlow)")


def bitcast(input, type, name=None):  # noqa: A002  (TensorFlow's argument names)
    """``tf.bitcast(input, type)``: ``input``'s bits as ``type``, as TensorFlow lays them out: to a
    narrower type the result gains a last axis of ``itemsize(input) / itemsize(type)`` entries, to
    a wider one the last axis (of that many entries) is consumed. Real types only: TensorFlow
    refuses bool, and complex types are not done here (bitcast the real and imaginary parts,
    ``tf.math.real`` / ``tf.math.imag``). No gradient."""
    x = convert(input)
    source, target = np.dtype(x.dtype), np.dtype(type)
    if source.kind in "bc" or target.kind in "bc":
        raise _errors.GradkitTypeError(
            f"tf.bitcast from {source.name} to {target.name}: gradkit.tf bitcasts between integer and float types "
            "only (TensorFlow refuses bool; for complex, bitcast tf.math.real(x) and tf.math.imag(x))."
        )
    wide, narrow = max(source.itemsize, target.itemsize), min(source.itemsize, target.itemsize)
    if target.itemsize > source.itemsize and (not x.ndim or x.shape[-1] != wide // narrow):
        raise _errors.GradkitValueError(
            f"tf.bitcast from {source.name} to {target.name} needs a last axis of {wide // narrow} entries, as "
            f"TensorFlow does, but got shape {tuple(x.shape)}."
        )
    return call(_bitcast, x, dtype=target)
