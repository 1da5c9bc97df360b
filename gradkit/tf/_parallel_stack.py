"""``tf.parallel_stack``: ``tf.stack`` along a new first axis, for graphs only.

TensorFlow refuses it eagerly (RuntimeError) and, inside ``tf.function``, needs every input's
shape known and equal; gradkit does the same. TensorFlow registers no gradient for it
(``tape.gradient`` raises LookupError there); gradkit gives the exact one, that of ``tf.stack``.

>>> import gradkit.tf as tf
>>> f = tf.function(lambda a, b: tf.parallel_stack([a, b]))
>>> f(tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0])).numpy().tolist()
[[1.0, 2.0], [3.0, 4.0]]
"""

from __future__ import annotations

import jax.numpy as jnp

from gradkit import _errors

from ._control import executing_eagerly
from ._convert import call, convert


def _stack(values):
    return jnp.stack(values)


def parallel_stack(values, name="parallel_stack"):
    """``tf.parallel_stack(values)``: the tensors ``values`` (all of one shape and dtype) stacked
    along a new first axis; inside ``tf.function`` only, as in TensorFlow."""
    if executing_eagerly():
        raise _errors.GradkitRuntimeError(
            "tf.parallel_stack() is not compatible with eager execution, as in TensorFlow: it runs inside "
            "tf.function only. Call tf.stack(values) eagerly."
        )
    tensors = [convert(v) for v in values]
    if not tensors:
        raise _errors.GradkitIndexError(
            "tf.parallel_stack got an empty list, and TensorFlow refuses it too (IndexError): it takes at "
            "least one tensor. Pass [x, ...]."
        )
    shapes = {tuple(t.shape) for t in tensors}
    dtypes = {str(t.dtype) for t in tensors}
    if len(dtypes) > 1:
        raise _errors.GradkitTypeError(
            f"tf.parallel_stack takes tensors of one dtype, as TensorFlow does, but got dtypes {sorted(dtypes)}. "
            "Cast them first: tf.cast(x, tf.float32)."
        )
    if len(shapes) > 1:
        raise _errors.GradkitValueError(
            f"tf.parallel_stack takes tensors of one shape, as TensorFlow does, but got shapes {sorted(shapes)}. "
            "Reshape or pad them to one shape first."
        )
    return call(_stack, tensors)
