"""Python operators for things that stand for an array value (a Variable, a slice of one).

Using such a thing in an expression uses its current value; the result is whatever that
value's own operator returns (a JAX array, or a recorded tensor under a tape), never a
Variable.
"""

from __future__ import annotations

import operator
import sys

import numpy as np

from .. import _errors
from . import frames

# Python's binary operators, by dunder name: (function, has a reflected form).
BINARY_OPERATORS = {
    "add": (operator.add, True),
    "sub": (operator.sub, True),
    "mul": (operator.mul, True),
    "truediv": (operator.truediv, True),
    "floordiv": (operator.floordiv, True),
    "mod": (operator.mod, True),
    "pow": (operator.pow, True),
    "matmul": (operator.matmul, True),
    "and": (operator.and_, True),
    "or": (operator.or_, True),
    "xor": (operator.xor, True),
    "lshift": (operator.lshift, True),
    "rshift": (operator.rshift, True),
    "lt": (operator.lt, False),
    "le": (operator.le, False),
    "gt": (operator.gt, False),
    "ge": (operator.ge, False),
    "eq": (operator.eq, False),
    "ne": (operator.ne, False),
}


def install_binary_operators(cls, forward, reflected) -> None:
    """Give ``cls`` every binary operator: ``forward(fn)`` / ``reflected(fn)`` make the methods."""
    for name, (fn, has_reflected) in BINARY_OPERATORS.items():
        setattr(cls, f"__{name}__", forward(fn))
        if has_reflected:
            setattr(cls, f"__r{name}__", reflected(fn))


class ValueOperators:
    """Mixin: subclasses provide ``_read_value()``; everything else reads through it."""

    __slots__ = ()
    # numpy must hand binary operators to us rather than iterate over our elements.
    __array_priority__ = 1000

    def __neg__(self):
        return -self._read_value()

    def __pos__(self):
        return +self._read_value()

    def __abs__(self):
        return abs(self._read_value())

    def __invert__(self):
        return ~self._read_value()

    def __bool__(self):
        return bool(self._read_value())

    def __float__(self):
        return float(self._read_value())

    def __int__(self):
        return int(self._read_value())

    def __index__(self):
        return operator.index(self._read_value())

    def __complex__(self):
        return complex(self._read_value())

    def __round__(self, ndigits=None):
        return round(self._read_value(), ndigits)

    def __divmod__(self, other):
        return divmod(self._read_value(), other)

    def __rdivmod__(self, other):
        return divmod(other, self._read_value())

    def __format__(self, spec):
        # As a jax.Array formats: a format spec applies to the value (f"{v:.2f}" of a scalar).
        return format(self._read_value(), spec) if spec else str(self)

    def __len__(self):
        return len(self._read_value())

    def __iter__(self):
        return iter(self._read_value())

    def __array__(self, dtype=None, copy=None):
        value = self._read_value()
        refuse = getattr(value, "_refuse_jax_conversion", None)
        if refuse is not None and sys._getframe(1).f_globals.get("__name__", "").startswith("jax."):
            # jnp.asarray(v) while a tape records v's read: jax would take the value and lose the
            # gradient silently; the recorded value's own check raises the clear error instead.
            refuse("a jax.numpy function")
        return np.asarray(frames.concrete(value), dtype=dtype)

    @property
    def __jax_array__(self):
        # A property, so that it can be absent: when the current value is one a tape is
        # recording, jax's binary operators then defer to our reflected operators (which
        # record) instead of converting the value and dropping its gradient.
        # jax's own Tracer has the property too, but it gives None when the tracer has no
        # conversion of its own: then the value itself is the array.
        value = self._read_value()
        if getattr(type(value), "__jax_array__", None) is not None:
            inner = value.__jax_array__  # AttributeError while a tape records it: absent here too
            if inner is not None:
                return inner
        return lambda: value

    def numpy(self) -> np.ndarray:
        """The current value as a NumPy array (a copy; changing it changes nothing here)."""
        return np.array(frames.concrete(self._read_value()))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def T(self):
        return self._read_value().T

    def astype(self, dtype, **kwargs):
        return self._read_value().astype(dtype, **kwargs)

    def reshape(self, *shape, **kwargs):
        return _value_for(self, sys._getframe(1)).reshape(*shape, **kwargs)

    def sum(self, *args, **kwargs):
        return _value_for(self, sys._getframe(1)).sum(*args, **kwargs)

    def mean(self, *args, **kwargs):
        return _value_for(self, sys._getframe(1)).mean(*args, **kwargs)


def _value_for(var, caller):
    """The value a method of ``var`` works on: NumPy's own array when NumPy calls it (``np.sum(v)``
    calls ``v.sum()``; the answer is then a NumPy array, as for a tensor), else the current value."""
    if caller.f_globals.get("__name__", "").startswith("numpy"):
        return np.asarray(var.numpy())
    return var._read_value()


# How an error names each operator.
OPERATOR_SYMBOLS = {
    operator.add: "+",
    operator.sub: "-",
    operator.mul: "*",
    operator.truediv: "/",
    operator.floordiv: "//",
    operator.mod: "%",
    operator.pow: "**",
    operator.matmul: "@",
    operator.and_: "&",
    operator.or_: "|",
    operator.xor: "^",
    operator.lshift: "<<",
    operator.rshift: ">>",
    operator.lt: "<",
    operator.le: "<=",
    operator.gt: ">",
    operator.ge: ">=",
    operator.eq: "==",
    operator.ne: "!=",
}


def outranks(other) -> bool:
    """NumPy's convention: an operand with a higher ``__array_priority__`` than a Variable's or a
    Tensor's (a symbolic tensor of Keras' functional API) applies the operator, through its
    reflected method. (Read from the operand: on NumPy's array and scalar classes it is a
    descriptor.)"""
    if type(other) in (int, float, bool, complex):
        return False
    priority = getattr(other, "__array_priority__", 0)
    return isinstance(priority, (int, float)) and priority > ValueOperators.__array_priority__


def _forward(fn):
    def method(self, other):
        if outranks(other):
            return NotImplemented
        value = self._read_value()
        try:
            return fn(value, other)
        except (TypeError, ValueError, IndexError) as error:
            raise _errors.bad_op_inputs(error, f"the operator {OPERATOR_SYMBOLS[fn]}", (value, other)) from error

    return method


# Value types (the tape's Tensor registers itself) whose reflected operators a Variable calls
# directly: ``x @ v`` with ``x`` a JAX array then costs one call, not ``x.__matmul__`` refusing
# the value first.
DIRECT_REFLECTED: set = set()
_REFLECTED_NAMES = {fn: f"__r{name}__" for name, (fn, has_reflected) in BINARY_OPERATORS.items() if has_reflected}


def _reflected(fn):
    name = _REFLECTED_NAMES[fn]

    def method(self, other):
        value = self._read_value()
        try:
            if type(value) in DIRECT_REFLECTED:
                return getattr(value, name)(other)
            return fn(other, value)
        except (TypeError, ValueError, IndexError) as error:
            raise _errors.bad_op_inputs(error, f"the operator {OPERATOR_SYMBOLS[fn]}", (other, value)) from error

    return method


install_binary_operators(ValueOperators, _forward, _reflected)


# jax.Array's methods that read a value (``w.max()``, ``w.clip(0, 1)``, ``w.transpose()``): on a
# Variable they are its current value's (recorded under a tape, as the value's own methods are).
# ``at`` is left out: on a Variable, ``v[idx].assign`` is the update that changes it.
ARRAY_METHODS = (
    "all any argmax argmin argsort clip conj conjugate cumprod cumsum diagonal dot flatten item max min "
    "nonzero prod ptp ravel repeat round searchsorted sort squeeze std swapaxes take trace transpose var"
).split()


def _value_method(name: str):
    def method(self, *args, **kwargs):
        return getattr(_value_for(self, sys._getframe(1)), name)(*args, **kwargs)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"The current value's ``{name}`` (as ``jax.Array.{name}``)."
    return method


def _value_property(name: str):
    return property(
        lambda self: getattr(_value_for(self, sys._getframe(1)), name), doc=f"The current value's ``{name}``."
    )


for _name in ARRAY_METHODS:
    if not hasattr(ValueOperators, _name):
        setattr(ValueOperators, _name, _value_method(_name))
for _name in ("real", "imag"):
    setattr(ValueOperators, _name, _value_property(_name))
