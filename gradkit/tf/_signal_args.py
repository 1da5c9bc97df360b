"""The integer arguments of ``tf.signal``'s ops that set a result's shape (frame lengths and steps,
window lengths, ``n``, bin counts): Python ints, or scalar integer tensors whose value is known,
so not tensors traced inside ``tf.function``.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from ._convert import known_value


def static_int(
    value,
    what,
    argument,
    least=None,
    type_error=_errors.GradkitTypeError,
    least_error=_errors.GradkitValueError,
) -> int:
    """A scalar integer argument that sets a shape, as a Python int (of at least ``least``).

    ``type_error`` (a value that is not an integer) and ``least_error`` (one below ``least``) are
    the classes TensorFlow's op raises there eagerly: where its kernel refuses the value, an
    ``InvalidArgumentError`` (``_errors.InvalidArgumentTypeError``/``InvalidArgumentValueError``)."""
    if isinstance(value, (float, np.floating)) or (
        hasattr(value, "dtype") and not jnp.issubdtype(value.dtype, jnp.integer)
    ):
        raise type_error(
            f"{what} takes an integer {argument}, as TensorFlow, but got {value!r:.60}. Pass an int, e.g. int(n)."
        )
    known = known_value(value)
    if known is None:
        raise _errors.GradkitTypeError(
            f"{what} inside tf.function needs {argument} known when tracing: it sets the result's shape. "
            "Pass a Python int or a constant."
        )
    if known.ndim != 0:
        raise _errors.GradkitValueError(
            f"{what} takes a scalar {argument}, but got one of shape {known.shape}. Pass a single int."
        )
    if least is not None and int(known) < least:
        raise least_error(
            f"{what} got {argument}={int(known)}, but it must be at least {least}. Pass a larger {argument}."
        )
    return int(known)
