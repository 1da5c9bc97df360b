"""What every ``tf.keras.ops`` function shares: inputs made tensors as Keras' TensorFlow backend
makes them, one recorded op per computation, and Keras' symbolic calls.

``keras_op`` wraps each public op: called on a ``KerasTensor`` of the functional API it records
a node (as Keras 3 records ``keras.ops`` calls), so ``tf.keras.ops.relu(tf.keras.Input((3,)))``
builds a model; on tensors it runs the op, and an input JAX refuses (shapes that do not
broadcast, an axis out of range) raises a ``[gradkit]`` error naming the op.
"""

from __future__ import annotations

import functools
import inspect

import jax
import numpy as np

from gradkit import _errors
from gradkit._core.variable import Variable
from gradkit._tape.lift import lift_op as lift
from gradkit._tape.tensor import Tensor
from gradkit.nn.layer import unique_name

from ..._array import _cast_to
from ..._convert import convert, known_value, wrap
from .. import functional
from .dtype_rules import dtype_of, float_of, result_type, standardize_dtype


def keras_op(fn, name=None):
    """``fn`` as ``tf.keras.ops.<name>`` (``name``: its own, else ``fn``'s): symbolic on
    KerasTensors, ``[gradkit]`` errors for inputs JAX refuses."""
    name = name or fn.__name__

    @functools.wraps(fn)
    def op(*args, **kwargs):
        if functional.is_symbolic((args, kwargs)):
            return functional.record_call(_OpCall(fn, name), args, kwargs)
        try:
            return fn(*args, **kwargs)
        except (TypeError, ValueError, IndexError) as error:
            _check_call(fn, name, args, kwargs)
            raise _errors.bad_op_inputs(error, f"tf.keras.ops.{name}", args) from error

    op.__name__ = op.__qualname__ = name
    return op


def _check_call(fn, name, args, kwargs) -> None:
    """Raise a ``[gradkit]`` TypeError if ``args``/``kwargs`` do not fit ``fn``'s signature."""
    signature = inspect.signature(fn)
    try:
        signature.bind(*args, **kwargs)
    except TypeError as error:
        raise _errors.GradkitTypeError(
            f"tf.keras.ops.{name} takes {name}{signature}, as Keras does, but {error}. Call it with those arguments."
        ) from None


class _OpCall(functional._OperatorCall):
    """A ``tf.keras.ops`` call on KerasTensors: a node named as Keras names the operation it
    records (``ops.log_softmax`` is Keras' ``LogSoftmax`` operation, named ``log_softmax``)."""

    def __init__(self, fn, name):
        self.fn = fn
        self.class_name = "".join(part[:1].upper() + part[1:] for part in name.split("_"))
        self.name = unique_name(name)


def apply(fn, *args, **static):
    """``fn(*args, **static)`` recorded as one op (``fn`` a module-level JAX function), as a
    ``gk.Tensor``."""
    return wrap(lift(fn)(*args, **static))


def cast(x, dtype):
    """``x`` (a tensor or value) in ``dtype``, recorded; unchanged when it already has it."""
    dtype = standardize_dtype(dtype)
    x = convert(x)
    return x if np.dtype(x.dtype) == dtype else apply(_cast_to, x, dtype=dtype)


def tensor(x, dtype=None):
    """Keras' ``convert_to_tensor``: Python values with TensorFlow's defaults (int32, float32),
    Variables read, then cast to ``dtype`` when given."""
    x = convert(x)
    return x if dtype is None else cast(x, dtype)


def operand(x):
    """A Python number kept as it is (Keras promotes it weakly), anything else a tensor."""
    return x if isinstance(x, (bool, int, float)) else tensor(x)


def promoted(*xs, extra=()):
    """``xs`` made tensors of Keras' ``result_type`` of them (and of ``extra`` dtypes)."""
    xs = [operand(x) for x in xs]
    dtype = result_type(*(dtype_of(x) for x in xs), *extra)
    return [tensor(x, dtype) for x in xs], dtype


def floating(x):
    """``x`` as a tensor, an integer or boolean one cast to floatx (Keras' rule for ``sqrt``,
    ``exp``, ``mean``, ...)."""
    x = tensor(x)
    return cast(x, float_of(x.dtype))


def axes(axis):
    """An ``axis`` argument as JAX takes it: None, an int, or a tuple of ints."""
    if axis is None:
        return None
    if isinstance(axis, (list, tuple)):
        return tuple(int(a) for a in axis)
    return int(axis)


def known(x):
    """``x``'s value as a NumPy array (Python and NumPy values as they are), or None when it is a
    tensor traced inside ``tf.function``."""
    if isinstance(x, (bool, int, float, np.ndarray, np.generic)):
        return np.asarray(x)
    if isinstance(x, (list, tuple)) and not any(isinstance(v, (Tensor, Variable, jax.Array)) for v in x):
        return np.asarray(x)
    return known_value(convert(x))


def value_of(x, what="this argument"):
    """``x``'s value for an argument that fixes a shape, which must be known when tracing."""
    value = known(x)
    if value is None:
        raise _errors.TracedValueNeededError(
            f"{what} got a tensor traced inside tf.function, but its value sets a shape, which must be known "
            "when tracing. Pass a Python number or list (or a NumPy array) instead."
        )
    return value
