"""``tf.debugging.check_numerics`` and ``assert_all_finite``: raise on NaN or Inf, else the tensor.

Eagerly the values are known and checked at once; inside a ``tf.function`` the check runs with
the compiled program and the call raises (``_assertions``), as TensorFlow's CheckNumerics op
does. Either way the error is ``tf.errors.InvalidArgumentError`` with TensorFlow's message
(``"<message> : Tensor had NaN values"``). The tensor comes back as it is, so the gradient passes
through unchanged. TensorFlow's gradient of CheckNumerics also checks the gradient flowing back
(it raises for a NaN or Inf there); gradkit's does not: a custom gradient would stop forward mode
(``ForwardAccumulator``, ``jacfwd``) through the op. Check a gradient itself where that matters:
``tf.debugging.check_numerics(tape.gradient(loss, x), "gradient")``.

>>> import gradkit.tf as tf
>>> tf.debugging.check_numerics(tf.constant([1.0, 2.0]), "ok").numpy().tolist()
[1.0, 2.0]
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from ._assertions import failed, require
from ._convert import call, convert


def check_numerics(tensor, message, name=None):
    """``tf.debugging.check_numerics(tensor, message)``; see the module docstring."""
    tensor = convert(tensor)
    dtype = np.dtype(tensor.dtype)
    if not jnp.issubdtype(dtype, jnp.floating):
        raise _errors.OpInputError(
            f"tf.debugging.check_numerics takes a floating-point tensor, as TensorFlow does (bfloat16, float16, "
            f"float32, float64), but got dtype {dtype.name}. Integers cannot be NaN or Inf: leave the check out."
        )

    def make_error(ok, values):
        nan, inf = bool(np.isnan(values).any()), bool(np.isinf(values).any())
        kind = "Inf and NaN" if nan and inf else "NaN" if nan else "Inf"  # TensorFlow's three messages
        return failed(f"{message} : Tensor had {kind} values")

    require(call(jnp.isfinite, tensor), make_error, tensor)
    return tensor


def assert_all_finite(x, message, name=None):
    """``tf.debugging.assert_all_finite(x, message)``: ``check_numerics`` under TensorFlow 2's name."""
    return check_numerics(x, message, name=name)
