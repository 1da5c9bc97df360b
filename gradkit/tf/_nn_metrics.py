"""``tf.nn.in_top_k`` and ``tf.nn.zero_fraction``: summaries with no gradient in TensorFlow.

``in_top_k(targets, predictions, k)`` is True where fewer than ``k`` classes score strictly
higher than the target (so ties at the boundary count as in the top k), and False for a row
with a non-finite prediction or a target out of range, as TensorFlow's ``InTopKV2``.
``zero_fraction`` is the fraction of zero entries, as float32. Gradients through either are
None, as in TensorFlow.

>>> import gradkit.tf as tf
>>> tf.nn.in_top_k([1, 2], [[0.1, 0.5, 0.4], [0.3, 0.3, 0.3]], k=1).numpy().tolist()
[True, True]
>>> float(tf.nn.zero_fraction([0.0, 1.0, 0.0, 2.0]))
0.5
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from gradkit import _errors
from gradkit._tape import record

from ._convert import call, convert


def _in_top_k(predictions, targets, k):
    classes = predictions.shape[1]
    valid = (targets >= 0) & (targets < classes)
    index = jnp.clip(targets, 0, classes - 1).astype(jnp.int32)
    target = jnp.take_along_axis(predictions, index[:, None], axis=1)
    higher = jnp.sum(predictions > target, axis=1)
    finite = jnp.all(jnp.isfinite(predictions), axis=1)
    return valid & finite & (higher < k)


def _zero_fraction(x):
    # TensorFlow's count over size, in float32 (0 / 0 = NaN for an empty tensor).
    return jnp.sum(x == 0).astype(jnp.float32) / np.float32(x.size)


record.cut_by_design(_zero_fraction, "tf.nn.zero_fraction (it has no gradient in TensorFlow)")


def in_top_k(targets, predictions, k, name=None):
    """``tf.nn.in_top_k``: whether each row's ``targets`` class is among its ``k`` top ``predictions``."""
    what = "tf.nn.in_top_k"
    p, t = convert(predictions), convert(targets)
    if not jnp.issubdtype(p.dtype, jnp.floating):
        raise _errors.GradkitTypeError(
            f"{what} takes floating-point predictions, as TensorFlow does, but got {np.dtype(p.dtype).name}."
        )
    if not jnp.issubdtype(t.dtype, jnp.integer):
        raise _errors.GradkitTypeError(
            f"{what} takes integer class targets (int32 or int64), as TensorFlow does, but got "
            f"{np.dtype(t.dtype).name}. Cast them: tf.cast(targets, tf.int32)."
        )
    if len(p.shape) != 2 or len(t.shape) != 1 or t.shape[0] != p.shape[0]:
        raise _errors.GradkitValueError(
            f"{what} takes predictions of shape [batch, classes] and targets of shape [batch], as TensorFlow "
            f"does, but got predictions of shape {tuple(p.shape)} and targets of shape {tuple(t.shape)}."
        )
    kk = convert(k)
    if len(kk.shape) != 0 or not jnp.issubdtype(kk.dtype, jnp.integer):
        raise _errors.GradkitTypeError(f"{what}: k={k!r}; TensorFlow takes a scalar integer.")
    return call(_in_top_k, p, t, kk)


def zero_fraction(value, name=None):
    """``tf.nn.zero_fraction``: the fraction of ``value``'s entries that are zero, as float32 (NaN for
    an empty tensor)."""
    return call(_zero_fraction, convert(value))
