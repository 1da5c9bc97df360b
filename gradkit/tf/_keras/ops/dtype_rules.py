"""Keras 3's dtypes: ``standardize_dtype`` and the type promotion of ``keras.backend.result_type``.

Keras promotes as JAX does (its lattice is JAX's), with Python ``int`` and ``float`` weakly
typed: ``int32 + 2`` is int32, ``int8 + 2.5`` float32 (weak floats become ``floatx()``),
``int32 + float16`` float16. Without ``jax_enable_x64`` gradkit has no 64-bit types, so Keras'
``int64``/``float64`` (its TensorFlow backend keeps them) are int32/float32 here, as JAX stores them.

>>> from gradkit.tf._keras.ops.dtype_rules import result_type
>>> result_type("int32", float).name, result_type("int8", "uint8").name, result_type("float16", int).name
('float32', 'int16', 'float16')
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors

FLOATX = "float32"
EPSILON = 1e-7

# Keras' names for Python's types (its PYTHON_DTYPES_MAP; int is int64 on TensorFlow).
_PYTHON = {bool: "bool", int: "int64", float: "float32", complex: "complex128", "int": "int64"}
_ALLOWED = (
    "float16 float32 float64 bfloat16 uint8 uint16 uint32 uint64 int8 int16 int32 int64 bool complex64 complex128"
).split()


def standardize_dtype(dtype) -> np.dtype:
    """``dtype`` (a name, a NumPy or gradkit dtype, ``tf.float32``, a Python type; None: floatx) as
    the NumPy dtype gradkit computes in (64-bit types as their 32-bit forms, as JAX without x64)."""
    if dtype is None:
        dtype = FLOATX
    dtype = _PYTHON.get(dtype, dtype) if isinstance(dtype, (type, str)) else dtype
    if isinstance(dtype, str) and dtype not in _ALLOWED:
        raise _errors.GradkitValueError(
            f"got dtype={dtype!r}, which is not a dtype name Keras knows (Keras raises ValueError: 'Invalid dtype'). "
            f"Pass one of {', '.join(_ALLOWED)}, or a dtype such as tf.float32."
        )
    try:
        found = jnp.dtype(getattr(dtype, "name", dtype) if not isinstance(dtype, np.dtype) else dtype)
    except TypeError as error:
        raise _errors.GradkitValueError(
            f"got dtype={dtype!r}, which is not a dtype Keras knows (Keras raises ValueError: 'Invalid dtype'). "
            "Pass a name such as 'float32', 'int32' or 'bool', or a dtype such as tf.float32."
        ) from error
    if found.kind not in "biufc" and found.name != "bfloat16":
        raise _errors.GradkitValueError(
            f"got dtype={dtype!r}: gradkit's tensors hold numbers and booleans only (no strings or objects). "
            "Pass a numeric dtype such as 'float32'."
        )
    return np.dtype(jax.dtypes.canonicalize_dtype(found))


def dtype_name(dtype) -> str:
    """Keras' ``standardize_dtype`` as it answers: the dtype's name (``'float32'``)."""
    return standardize_dtype(dtype).name


def _entry(item):
    if item is int or item is float:  # weakly typed: they take the other operand's width
        return item
    if item is complex:
        return np.complex64
    return standardize_dtype(item)


def result_type(*dtypes) -> np.dtype:
    """Keras' ``result_type``: the dtype its ops compute ``dtypes`` in (Python ``int``/``float``
    weakly typed, None as ``floatx()``; no dtypes: ``floatx()``)."""
    if not dtypes:
        return np.dtype(FLOATX)
    entries = [_entry(d) for d in dtypes]
    out = np.dtype(jax.dtypes.canonicalize_dtype(jnp.result_type(*entries)))
    # A Python number alone widens nothing: it is floatx / int32 / complex64, also where JAX's
    # 64-bit types are on (jax would make it float64 / int64 there).
    # Strong dtypes that promote to a 64-bit one among themselves keep it (int32 and uint32: int64);
    # Keras' complex results are complex64 always.
    strong = [e for e in entries if e is not int and e is not float]
    if out.name == "complex128":
        return np.dtype("complex64")
    if out.name not in _NARROW or (strong and np.dtype(jax.dtypes.canonicalize_dtype(jnp.result_type(*strong))) == out):
        return out
    return _NARROW[out.name]


_NARROW = {"float64": np.dtype(FLOATX), "int64": np.dtype("int32")}


def dtype_of(x):
    """What Keras promotes ``x`` as: its dtype, or the Python type of a plain number."""
    if isinstance(x, (bool, int, float, complex)):
        return type(x)
    return np.dtype(x.dtype)


def is_float(dtype) -> bool:
    dtype = standardize_dtype(dtype)
    return dtype.kind == "f" or dtype.name == "bfloat16"


def is_int_or_bool(dtype) -> bool:
    return standardize_dtype(dtype).kind in "biu"


def float_of(dtype) -> np.dtype:
    """The float dtype Keras computes an integer or boolean input in (``result_type(dtype, float)``:
    floatx), a float or complex dtype unchanged."""
    return result_type(dtype, float)
