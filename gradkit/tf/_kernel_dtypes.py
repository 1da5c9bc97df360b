"""Refusing, as TensorFlow does, a tensor of a dtype that an op's kernel does not take.

TensorFlow registers each op's kernel for a list of dtypes (most special functions only for
float32 and float64) and raises for any other; jax would compute in that dtype, or promote it.
gradkit.tf raises too, with a ``[gradkit]`` TypeError that names the dtypes the op takes.
"""

from __future__ import annotations

import jax
import numpy as np

from gradkit import _errors

from ._convert import call, convert

REAL = ("float16", "bfloat16", "float32", "float64")
INEXACT = (*REAL, "complex64", "complex128")
INTEGERS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
# Numbers with an order (TensorFlow's realnumbertypes): comparisons, max/min, relu, sort.
ORDERED = (*INTEGERS, *REAL)


def check_dtype(x, allowed, fn):
    """Raise unless ``x``'s dtype is one of ``allowed`` (names such as ``"float32"``)."""
    name = np.dtype(x.dtype).name
    if name not in allowed:
        raise _errors.InvalidArgumentTypeError(
            f"{fn} takes a tensor of dtype {_either(allowed)}, as in TensorFlow, but got dtype {name}. "
            f"Cast it first: {fn}(tf.cast(x, tf.{'bool' if allowed == ('bool',) else 'float32'}))."
        )


def unary(jfn, tf_name, allowed=None, where="tf.math"):
    """``where.tf_name(x)``: ``jfn`` recorded as one op, for inputs of the dtypes ``allowed``
    (names; None: any dtype)."""
    what = f"{where}.{tf_name}"

    def op(x, name=None):
        x = convert(x)
        if allowed is not None:
            check_dtype(x, allowed, what)
        return call(jfn, x)

    op.__name__ = op.__qualname__ = tf_name
    dtypes = f" (dtypes {', '.join(allowed)})" if allowed is not None else ""
    op.__doc__ = f"``{what}``{dtypes}, recorded by the tape as ``{getattr(jfn, '__name__', tf_name)}``."
    return op


def _either(names) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def index_dtype(dtype, allowed: tuple, what: str, argument: str):
    """An op's index dtype argument (``output_type``, ``index_type``): one of ``allowed`` as
    TensorFlow's kernel takes, int64 computed as int32 unless JAX's 64-bit types are on."""
    found = np.dtype(getattr(dtype, "as_numpy_dtype", dtype))
    if found.name not in allowed:
        raise _errors.InvalidArgumentTypeError(
            f"{what}: {argument}={found.name}; TensorFlow's kernel takes {', '.join(allowed)} there. Pass one of "
            f"those, e.g. {argument}=tf.int32."
        )
    return jax.dtypes.canonicalize_dtype(found)
