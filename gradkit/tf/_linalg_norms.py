"""``tf.linalg.normalize`` and ``tf.linalg.global_norm``; ``tf.linalg``'s names for
``tf.eye`` and ``tf.math.l2_normalize``.

>>> import gradkit.tf as tf
>>> unit, norm = tf.linalg.normalize([3.0, 4.0])
>>> unit.numpy().tolist(), norm.numpy().tolist()
([0.6000000238418579, 0.800000011920929], [5.0])
>>> float(tf.linalg.global_norm([tf.constant([3.0]), None, tf.constant([[4.0]])]))
5.0
"""

from __future__ import annotations

import jax.numpy as jnp

from gradkit import _errors

from . import _array, _math, _nn, _scatter
from . import _linalg_checks as _checks
from ._convert import call, convert

eye = _array.eye
l2_normalize = _nn.l2_normalize

_NORM_DTYPES = ("bfloat16", "float16", "float32", "float64", "complex64", "complex128")
# TensorFlow's L2Loss kernel: real floating types only.
_GLOBAL_NORM_DTYPES = ("bfloat16", "float16", "float32", "float64")


def _divide(x, norm):
    norm = norm.astype(x.dtype)
    return x / norm, norm


def normalize(tensor, ord="euclidean", axis=None, name=None):  # noqa: A002
    """``tf.linalg.normalize``: ``(tensor / norm, norm)`` with ``norm = tf.norm(tensor, ord, axis,
    keepdims=True)`` cast to ``tensor``'s dtype, as TensorFlow returns them."""
    x = convert(tensor)
    _checks.check_dtype("normalize", x, _NORM_DTYPES, "tensor")
    return tuple(call(_divide, x, _math.norm(x, ord=ord, axis=axis, keepdims=True)))


def _global_norm(tensors):
    if not tensors:
        return jnp.zeros((), jnp.float32)
    # TensorFlow: sqrt(2 * sum of L2Loss(t) = sum(t ** 2) / 2).
    half_squared = jnp.stack([jnp.sum(t * t) / 2 for t in tensors])
    return _math._tf_sqrt(jnp.sum(half_squared) * 2)  # TensorFlow's SqrtGrad: 0 for a zero upstream


def global_norm(t_list, name=None):
    """``tf.linalg.global_norm``: ``sqrt(sum(||t||^2 for t in t_list))``; None entries are skipped
    and a ``tf.IndexedSlices`` counts its values, as in TensorFlow."""
    if not isinstance(t_list, (list, tuple)):
        raise _errors.GradkitTypeError(
            f"tf.linalg.global_norm takes a list or tuple of tensors (t_list), but got {type(t_list).__name__}; "
            "for one tensor t write tf.linalg.global_norm([t])."
        )
    tensors = [convert(t.values if isinstance(t, _scatter.IndexedSlices) else t) for t in t_list if t is not None]
    for t in tensors:
        _checks.check_dtype("global_norm", t, _GLOBAL_NORM_DTYPES, "an entry of t_list")
        _checks.check_same_dtype("global_norm", tensors[0], t, "the first entry of t_list", "another entry")
    return call(_global_norm, tensors)
