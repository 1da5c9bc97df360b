"""``tf.debugging.check_numerics``: raise on NaN or Inf, else the tensor as it is.

Eagerly the values are known and checked, as TensorFlow checks them. Inside a ``tf.function``
(gradkit compiles it with ``jax.jit``, where Python cannot raise on a value) the tensor
passes through unchecked; call the function eagerly (``tf.config.run_functions_eagerly(True)``)
to have it checked. The gradient passes through unchanged, as TensorFlow's does.

>>> import gradkit.tf as tf
>>> tf.debugging.check_numerics(tf.constant([1.0, 2.0]), "ok").numpy().tolist()
[1.0, 2.0]
"""

from __future__ import annotations

import numpy as np

from gradkit import _errors

from ._convert import convert, known_value


def check_numerics(tensor, message, name=None):
    """``tf.debugging.check_numerics(tensor, message)``; see the module docstring."""
    tensor = convert(tensor)
    if not np.issubdtype(np.dtype(tensor.dtype), np.floating):
        raise _errors.GradkitTypeError(
            f"tf.debugging.check_numerics takes a floating-point tensor, as TensorFlow does, but got dtype "
            f"{np.dtype(tensor.dtype).name}. Integers cannot be NaN or Inf: leave the check out."
        )
    value = known_value(tensor)
    if value is not None and not np.isfinite(value).all():
        kind = "NaN" if np.isnan(value).any() else "Inf"
        raise _errors.GradkitValueError(
            f"tf.debugging.check_numerics: {message} : Tensor had {kind} values (TensorFlow raises "
            "InvalidArgumentError here). Find where the value first becomes non-finite, e.g. a log or a "
            "division of 0."
        )
    return tensor
