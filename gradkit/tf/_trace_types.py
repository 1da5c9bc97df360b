"""The traces a ``tf.function`` counts as TensorFlow does (``experimental_get_tracing_count``).

TensorFlow traces the Python function once per *function type* of its calls: the arguments
bound to the function's signature (defaults applied, so ``f(x)`` and ``f(x, y=1)`` are one
type), each tensor, array or Variable a spec of its shape and dtype (a Variable's apart from a
tensor's), every other value (Python floats included) itself. A call whose type fits one traced before (a shape that a
``None`` dimension covers, a ``get_concrete_function`` spec among them) traces nothing; with
an ``input_signature`` every call has that one type. ``reduce_retracing=True`` widens a new
type against the last one traced with the same Python values (a dimension that differs
becomes ``None``, a rank that differs an unknown shape). A call that raises counts nothing.

gradkit compiles with ``jax.jit``, which traces more often than that: once per concrete shape,
once more when the first trace finds the Variables the function reads, and again for a
runtime seed or a call recorded by TensorFlow-parity tapes. Those traces are gradkit's own
(``Function.trace_count`` counts them); this module counts the ones TensorFlow would make.
"""

from __future__ import annotations

import enum
import inspect

import jax
import numpy as np

from gradkit._core.variable import Variable
from gradkit._tape.tensor import Tensor

_TENSORS = (Tensor, Variable, jax.Array, np.ndarray, np.generic)


class Static:
    """A Python argument (a static argument of jax.jit, a part of a function type). A value of
    Python's, NumPy's, an enum's or gradkit's own types (a number, a string, a dtype, a
    TensorShape) is equal by type and ==; an object of a class of yours by identity, as
    TensorFlow keys it (an equal instance with other attributes would otherwise reuse a trace
    that baked in the first one's); and by identity where == fails."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __eq__(self, other):
        if not isinstance(other, Static) or type(self.value) is not type(other.value):
            return False
        if self.value is other.value:
            return True
        if not _by_value(self.value):
            return False
        try:
            return bool(self.value == other.value)
        except Exception:
            return False

    def __hash__(self):
        if not _by_value(self.value):
            return id(self.value)
        try:
            return hash((type(self.value), self.value))
        except TypeError:
            return id(self.value)


_VALUE_MODULES = ("builtins", "numpy", "jax", "jaxlib", "gradkit", "enum", "fractions", "decimal")


def _by_value(x) -> bool:
    """Whether a static argument is a value (compared by ==) rather than an object of a user's
    class (compared by identity)."""
    return isinstance(x, enum.Enum) or type(x).__module__.split(".")[0] in _VALUE_MODULES


def _is_leaf(x) -> bool:
    from ._function import TensorSpec

    return isinstance(x, (*_TENSORS, TensorSpec))


def _spec(x) -> tuple:
    """(shape with None for an unknown dimension, or None for an unknown rank; dtype).

    A SavedModel export traces a signature's None sizes as symbolic ones: unknown here too."""
    shape = None if x.shape is None else tuple(int(d) if isinstance(d, int | np.integer) else None for d in x.shape)
    return shape, np.dtype(x.dtype)


def _kind(x) -> str:
    # A Variable's spec is not a tensor's: TensorFlow traces again for a tensor where a Variable was.
    return "variable" if isinstance(x, Variable) else "tensor"


def _fits(shape, traced) -> bool:
    if traced is None:
        return True
    if shape is None or len(shape) != len(traced):
        return False
    return all(t is None or s == t for s, t in zip(shape, traced))


def _widened(shape, traced):
    if shape is None or traced is None or len(shape) != len(traced):
        return None
    return tuple(s if s == t else None for s, t in zip(shape, traced))


class TraceTypes:
    """The function types one ``tf.function`` has traced, as TensorFlow keeps them."""

    def __init__(self, fn, input_signature, reduce_retracing: bool):
        self._fn = fn
        self._fixed = input_signature is not None
        self._reduce = bool(reduce_retracing)
        self._signature = None
        self._types: list = []  # (Python part, specs) of each type traced
        self._seen: set = set()  # call keys already known to fit one

    def __len__(self) -> int:
        return len(self._types)

    def note_call(self, layout, traced, args, kwargs) -> None:
        """A call that returned, with its ``_Layout`` and traced leaves (a cheap key first)."""
        key = (
            layout,
            tuple((type(x).__name__, x) if type(x) in (float, complex) else (_kind(x), *_spec(x)) for x in traced),
        )
        try:
            if key in self._seen:
                return
            self._seen.add(key)
        except TypeError:  # an unhashable Python argument: the full type below decides
            pass
        self.note(args, kwargs)

    def note(self, args, kwargs) -> None:
        """Arguments (tensors or ``tf.TensorSpec``s) that were traced: their type counts unless
        one traced before covers it."""
        python, specs = self._type(args, kwargs)
        for known_python, known_specs in self._types:
            if known_python == python and all(
                dtype == d and _fits(shape, s) for (shape, dtype), (s, d) in zip(specs, known_specs)
            ):
                return
        if self._reduce:
            for known_python, known_specs in reversed(self._types):
                if known_python == python and [d for _, d in specs] == [d for _, d in known_specs]:
                    specs = tuple((_widened(shape, s), dtype) for (shape, dtype), (s, _) in zip(specs, known_specs))
                    break
        self._types.append((python, specs))

    def examples(self) -> list:
        """Per function type traced, ``(args, kwargs)`` of that type, each tensor a ``TensorSpec``
        (for ``get_concrete_function``); none with an ``input_signature``."""
        from ._function import TensorSpec

        found = []
        for python, specs in self._types:
            if python is None:
                continue
            treedef, kinds = python
            spec_iter = iter(specs)
            leaves = [TensorSpec(*next(spec_iter)) if isinstance(kind, str) else kind.value for kind in kinds]
            bound = jax.tree_util.tree_unflatten(treedef, leaves)
            found.append(((), bound) if isinstance(bound, dict) else bound)
        return found

    def _type(self, args, kwargs):
        if self._fixed:
            return None, ()
        leaves, treedef = jax.tree_util.tree_flatten(self._bound(args, kwargs), is_leaf=_is_leaf)
        python = (treedef, tuple(_kind(x) if _is_leaf(x) else Static(x) for x in leaves))
        return python, tuple(_spec(x) for x in leaves if _is_leaf(x))

    def _bound(self, args, kwargs):
        """The arguments by parameter name, defaults applied (as the call given, without a signature)."""
        if self._signature is None:
            try:
                self._signature = inspect.signature(self._fn)
            except (TypeError, ValueError):
                self._signature = False
        if self._signature is False:
            return args, kwargs
        try:
            bound = self._signature.bind(*args, **kwargs)
        except TypeError:
            return args, kwargs
        bound.apply_defaults()
        return dict(bound.arguments)
