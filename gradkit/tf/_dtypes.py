"""TensorFlow's dtypes: ``tf.DType``, its instances (``tf.float32``, ``tf.double``, ...) and
``tf.as_dtype``.

A ``tf.DType`` stands for one NumPy dtype. It compares equal to that dtype, to its name and to
anything ``tf.as_dtype`` turns into it, hashes as the NumPy dtype, and NumPy and JAX take it
wherever they take a dtype (``np.dtype(tf.float32)``, ``jnp.zeros(2, tf.float32)``).

A tensor's ``.dtype`` is the NumPy dtype itself (``gk.Tensor`` is shared with ``gk.numpy``), so
``x.dtype == tf.float32`` and ``isinstance(x.dtype, tf.DType)`` hold, and
``tf.as_dtype(x.dtype)`` gives TensorFlow's properties (``x.dtype.is_floating`` does not exist).

>>> import gradkit.tf as tf
>>> tf.float32.is_floating, tf.as_dtype("double") is tf.float64, tf.int8.max
(True, True, 127)
>>> tf.constant([1.0]).dtype == tf.float32, isinstance(tf.constant([1.0]).dtype, tf.DType)
(True, True)
>>> tf.as_dtype(tf.constant([1, 2]).dtype).is_integer
True

Without ``jax_enable_x64`` JAX stores float64/int64 values as float32/int32.
"""

from __future__ import annotations

import builtins

import jax.numpy as jnp
import numpy as np

from gradkit import _errors

# TensorFlow's DataType enum values (types.proto), for the dtypes gradkit has.
_ENUMS = {
    "float32": 1,
    "float64": 2,
    "int32": 3,
    "uint8": 4,
    "int16": 5,
    "int8": 6,
    "complex64": 8,
    "int64": 9,
    "bool": 10,
    "bfloat16": 14,
    "uint16": 17,
    "complex128": 18,
    "float16": 19,
    "uint32": 22,
    "uint64": 23,
}
# TensorFlow's dtypes that hold no numbers gradkit can compute with (strings, handles, quantized).
_UNSUPPORTED = {
    "string": 7,
    "qint8": 11,
    "quint8": 12,
    "qint32": 13,
    "qint16": 15,
    "quint16": 16,
    "resource": 20,
    "variant": 21,
}


class _DTypeClass(type):
    """Makes ``isinstance(x.dtype, tf.DType)`` hold for a tensor's NumPy dtype too."""

    def __instancecheck__(cls, obj):
        return type.__instancecheck__(cls, obj) or isinstance(obj, np.dtype) and obj.name in _ENUMS


class DType(metaclass=_DTypeClass):
    """``tf.DType``: one of TensorFlow's element types, with its properties.

    ``tf.DType(type_enum)`` takes TensorFlow's DataType number (``tf.DType(1)`` is float32); the
    usual way to get one is a name (``tf.float32``) or ``tf.as_dtype``.
    """

    def __init__(self, type_enum, handle_data=None):
        if handle_data is not None:
            raise _errors.GradkitNotImplementedError(
                f"tf.DType(handle_data=...) describes resource handles, which gradkit does not have; got "
                f"{handle_data!r}. Call tf.DType({type_enum!r}) or tf.as_dtype(name)."
            )
        self._numpy = _numpy_of_enum(type_enum)

    @property
    def dtype(self) -> np.dtype:
        """The NumPy dtype this stands for (what lets ``np.dtype(tf.float32)`` work)."""
        return self._numpy

    @property
    def name(self) -> str:
        return self._numpy.name

    @property
    def as_numpy_dtype(self) -> type:
        return self._numpy.type

    @property
    def as_datatype_enum(self) -> int:
        return _ENUMS[self.name]

    @property
    def is_floating(self) -> bool:
        return builtins.bool(jnp.issubdtype(self._numpy, jnp.floating))

    @property
    def is_complex(self) -> bool:
        return self._numpy.kind == "c"

    @property
    def is_integer(self) -> bool:
        return self._numpy.kind in "iu"

    @property
    def is_unsigned(self) -> bool:
        return self._numpy.kind == "u"

    @property
    def is_bool(self) -> bool:
        return self._numpy.kind == "b"

    @property
    def is_numeric(self) -> bool:
        return not self.is_bool

    @property
    def is_quantized(self) -> bool:
        return False

    @property
    def is_numpy_compatible(self) -> bool:
        return True

    @property
    def size(self) -> int:
        return self._numpy.itemsize

    @property
    def real_dtype(self) -> DType:
        """The dtype of the real part: float32 for complex64, float64 for complex128, else itself."""
        if self.is_complex:
            return _BY_NAME["float32" if self.name == "complex64" else "float64"]
        return self

    @property
    def base_dtype(self) -> DType:
        return self

    @property
    def min(self):
        """The smallest value of this dtype (a NumPy scalar for floats, a Python int for integers)."""
        return self._limit("min", "minimum")

    @property
    def max(self):
        """The largest value of this dtype (a NumPy scalar for floats, a Python int for integers)."""
        return self._limit("max", "maximum")

    def _limit(self, which: str, word: str):
        if self.is_floating:
            return getattr(jnp.finfo(self._numpy), which)
        if self.is_integer:
            return builtins.int(getattr(np.iinfo(self._numpy), which))
        raise _errors.GradkitTypeError(
            f"tf.{self.name} has no {word} value ({self.name} is not a real number type), as in TensorFlow. "
            "Ask a floating or integer dtype: tf.float32.max, tf.int32.min."
        )

    def is_compatible_with(self, other) -> bool:
        """Whether a value of dtype ``other`` can stand where this dtype is expected (the same dtype)."""
        return self == other

    def __eq__(self, other):
        if other is None:
            return False
        try:
            return self._numpy == as_dtype(other)._numpy
        except (TypeError, NotImplementedError):
            return False

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash(self._numpy)

    def __repr__(self) -> str:
        return f"tf.{self.name}"

    def __str__(self) -> str:
        return f"<dtype: {self.name!r}>"

    def __reduce__(self):
        return as_dtype, (self.name,)


def _numpy_of_enum(type_enum) -> np.dtype:
    names = {number: name for name, number in _ENUMS.items()}
    if isinstance(type_enum, builtins.int) and type_enum in names:
        return np.dtype(jnp.bfloat16) if names[type_enum] == "bfloat16" else np.dtype(names[type_enum])
    if isinstance(type_enum, builtins.int) and type_enum in _UNSUPPORTED.values():
        _refuse_unsupported(type_enum)
    raise _errors.GradkitTypeError(
        f"tf.DType takes TensorFlow's DataType number of a dtype (1 for float32, 3 for int32, ...), but got "
        f"{type_enum!r}, which is none. Use tf.as_dtype({type_enum!r}) for names and NumPy dtypes."
    )


def _refuse_unsupported(what):
    raise _errors.GradkitNotImplementedError(
        f"TensorFlow's dtype {what!r} holds strings, resource handles or quantized numbers (or is a TensorFlow 1 "
        "reference type), which gradkit's "
        "tensors do not: they hold bool, integer, floating and complex values. Use one of those "
        "(tf.float32, tf.int32, ...)."
    )


_BY_NAME = {name: DType(number) for name, number in _ENUMS.items()}
# TensorFlow's other names for the same dtypes (as tf.as_dtype reads them).
_ALIASES = {"float": "float32", "double": "float64", "half": "float16"}
# Python types as TensorFlow reads them; int, complex, str and bytes it refuses.
_PYTHON_TYPES = {builtins.float: "float32", builtins.bool: "bool"}


def as_dtype(type_value):
    """``tf.as_dtype``: TensorFlow's DType for ``type_value``: a DType, a name (``"float32"``,
    ``"double"``), a NumPy dtype or scalar type, ``float`` or ``bool``, or a DataType number.

    >>> as_dtype("half"), as_dtype(float), as_dtype(np.int64)
    (tf.float16, tf.float32, tf.int64)
    """
    if isinstance(type_value, DType) and not isinstance(type_value, np.dtype):
        return type_value
    if isinstance(type_value, builtins.str):
        name = _ALIASES.get(type_value, type_value)
        if name in _BY_NAME:
            return _BY_NAME[name]
        if name in _UNSUPPORTED or name.endswith("_ref") and name.removesuffix("_ref") in {**_UNSUPPORTED, **_ENUMS}:
            _refuse_unsupported(type_value)
        _cannot_convert(type_value)
    if isinstance(type_value, builtins.int) and not isinstance(type_value, builtins.bool):
        return _BY_NAME[DType(type_value).name]
    if isinstance(type_value, type) and type_value in _PYTHON_TYPES:
        return _BY_NAME[_PYTHON_TYPES[type_value]]
    if type_value is None or isinstance(type_value, type) and not issubclass(type_value, np.generic):
        if type_value is object:
            _refuse_unsupported("string")
        _cannot_convert(type_value)
    if _is_tensor_like(type_value):
        _cannot_convert(type_value)
    try:
        # An object with a .dtype (a NumPy array) stands for that dtype, as in TensorFlow.
        array_like = hasattr(type_value, "dtype") and not isinstance(type_value, type)
        numpy_dtype = np.dtype(type_value.dtype if array_like else type_value)
    except TypeError:
        _cannot_convert(type_value)
    if numpy_dtype.name in _BY_NAME:
        return _BY_NAME[numpy_dtype.name]
    if numpy_dtype.kind in "OUS":
        _refuse_unsupported("string")
    _cannot_convert(type_value)


def _is_tensor_like(value) -> bool:
    """A gradkit tensor or Variable, which tf.as_dtype refuses as TensorFlow does for its tensors."""
    from gradkit._core.variable import Variable, VariableSlice
    from gradkit._tape.tensor import Tensor

    return isinstance(value, (Tensor, Variable, VariableSlice))


def _cannot_convert(type_value):
    hint = " (for a tensor's dtype, pass x.dtype)" if _is_tensor_like(type_value) else ""
    raise _errors.GradkitTypeError(
        f"tf.as_dtype cannot convert {type_value!r} to a TensorFlow DType{hint}: it takes a DType, a dtype "
        "name such as 'float32' or 'double', a NumPy dtype, float or bool, as TensorFlow does."
    )


float16 = half = _BY_NAME["float16"]
bfloat16 = _BY_NAME["bfloat16"]
float32 = _BY_NAME["float32"]
float64 = double = _BY_NAME["float64"]
int8 = _BY_NAME["int8"]
int16 = _BY_NAME["int16"]
int32 = _BY_NAME["int32"]
int64 = _BY_NAME["int64"]
uint8 = _BY_NAME["uint8"]
uint16 = _BY_NAME["uint16"]
uint32 = _BY_NAME["uint32"]
uint64 = _BY_NAME["uint64"]
bool = _BY_NAME["bool"]  # noqa: A001  (TensorFlow's name)
complex64 = _BY_NAME["complex64"]
complex128 = _BY_NAME["complex128"]


def __getattr__(name):
    from ._namespace import missing

    raise AttributeError(missing("gradkit.tf.dtypes", name))


def __dir__():
    """TensorFlow's names only (as ``dir(tf.dtypes)``), not this module's imports."""
    return list(__all__)


__all__ = [
    "DType",
    "as_dtype",
    "float16",
    "half",
    "bfloat16",
    "float32",
    "float64",
    "double",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "bool",
    "complex64",
    "complex128",
]
