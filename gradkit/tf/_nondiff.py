"""Ops TensorFlow defines no gradient for: ``round``, ``floor``, ``ceil``, ``rint``, ``floordiv``.

Their derivative is zero almost everywhere, and JAX says so (a zero gradient); TensorFlow
gives None instead (zeros with ``unconnected_gradients=ZERO``). gradkit.tf follows
TensorFlow: each op cuts every tape's path, as ``stop_gradient`` does, and
``tape.explain`` names the op.

>>> import gradkit.tf as tf
>>> x = tf.Variable([0.4, 1.6])
>>> with tf.GradientTape() as t:
...     y = tf.round(x) * x
>>> t.gradient(y, x).numpy().tolist()             # only the path through the factor x
[0.0, 2.0]
"""

from __future__ import annotations

import jax.numpy as jnp

from gradkit import _errors
from gradkit._tape import record

from ._convert import call, convert, convert_like, known_value
from ._kernel_dtypes import REAL, check_dtype


def _round(x):
    return jnp.round(x)  # half to even, as TensorFlow's


def _floor(x):
    return jnp.floor(x)


def _ceil(x):
    return jnp.ceil(x)


def _rint(x):
    return jnp.rint(x)


def _floordiv(x, y):
    if jnp.issubdtype(jnp.result_type(x, y), jnp.inexact):
        # TensorFlow's FloorDiv of floats is floor(x / y); jnp.floor_divide goes through the
        # remainder (NumPy's divmod), which can land one lower: 1.5 // 0.3 is 5 there, 4 here.
        return jnp.floor(x / y)
    return jnp.floor_divide(x, y)


for _fn, _tf_name in ((_round, "round"), (_floor, "floor"), (_ceil, "ceil"), (_rint, "rint"), (_floordiv, "floordiv")):
    record.cut_by_design(_fn, f"tf.math.{_tf_name} (it has no gradient in TensorFlow)")


def round(x, name=None):  # noqa: A001  (TensorFlow's name)
    return call(_round, convert(x))


def floor(x, name=None):
    x = convert(x)
    check_dtype(x, REAL, "tf.math.floor")  # TensorFlow has no integer kernel for it
    return call(_floor, x)


def ceil(x, name=None):
    x = convert(x)
    check_dtype(x, REAL, "tf.math.ceil")  # TensorFlow has no integer kernel for it
    return call(_ceil, x)


def rint(x, name=None):
    x = convert(x)
    check_dtype(x, REAL, "tf.math.rint")  # TensorFlow has no integer kernel for it
    return call(_rint, x)


def refuse_integer_division_by_zero(y, what: str) -> None:
    """TensorFlow's "Integer division by zero" for an integer divisor known to hold a 0 (where
    JAX would give a meaningless number); a traced divisor cannot be checked."""
    divisor = known_value(y) if jnp.issubdtype(y.dtype, jnp.integer) else None
    if divisor is not None and (divisor == 0).any():
        raise _errors.GradkitInvalidArgumentError(
            f"{what} got an integer divisor with a zero in it: Integer division by zero, which TensorFlow "
            f"refuses too. Guard it: {what}(x, tf.where(y == 0, 1, y))."
        )


def floordiv(x, y, name=None):
    """``x // y`` rounded toward minus infinity (also a tf.Variable's ``//``)."""
    x, y = convert_like(x, y, what="tf.math.floordiv")
    refuse_integer_division_by_zero(y, "tf.math.floordiv")
    return call(_floordiv, x, y)
