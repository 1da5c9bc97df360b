"""``jax.Array``'s methods on ``Tensor``, lifted wholesale: ``t.clip(0, 1)``, ``t.cumsum(0)``,
``t.at[i].set(v)``, ``t.real``, ... each one op that a recording tape sees.

A method is lifted when ``jax.Array`` has it and ``jax.numpy`` has the function of the same
name (``a.clip`` is ``jnp.clip(a, ...)``): the array operations, not the buffer and device
queries. Each name gets one function, made once, so the same call records the same op.
"""

from __future__ import annotations

import inspect
import sys

import jax
import jax.numpy as jnp

from .. import _errors
from .._core import dynamic_index
from .._core.index_update import index_update
from .._core.variable import index_for_update
from . import record


def _array_method(name: str):
    def method(a, *args, **kwargs):
        return getattr(a, name)(*args, **kwargs)

    method.__name__ = method.__qualname__ = name
    return method


def _lifted(fn):
    name = fn.__name__

    def method(self, *args, **kwargs):
        if _numpy_calls(sys._getframe(1)):
            # NumPy's own functions (np.mean(t), np.repeat(t, 2)) hand the call to the method: they
            # take the value, which leaves every tape, as np.sin(t) does (and as NumPy does with
            # TensorFlow tensors).
            return getattr(self.numpy(), name)(*args, **kwargs)
        return record.apply(fn, self, *args, **kwargs)

    method.__name__ = fn.__name__
    method.__doc__ = f"Like ``jax.Array.{fn.__name__}``; recorded as one op under a tape."
    return method


def _lifted_property(fn, name):
    def get(self):
        if _numpy_calls(sys._getframe(1)):  # np.real(t): NumPy takes the value
            return getattr(self.numpy(), name)
        return record.apply_unary(fn, self)

    return property(get, doc=f"Like ``jax.Array``'s, by ``{fn.__name__}``.")


def _numpy_calls(frame) -> bool:
    """Whether ``frame`` (a method's caller) is NumPy's own code."""
    return frame.f_globals.get("__name__", "").startswith("numpy")


# ``t.at[index].<update>(...)``: the updates jax's ``.at[]`` offers.
_INDEX_UPDATES = {
    name: _array_method(name)
    for name in ("get", "set", "add", "subtract", "multiply", "divide", "power", "min", "max", "apply")
}


def _index_update(name: str):
    update = _INDEX_UPDATES[name]

    def at_index(a, index, *args, **kwargs):
        if name == "get":
            return update(a.at[index], *args, **kwargs)
        # The tape compiles whole steps: a slice update takes the form XLA cannot miscompile.
        return index_update(a, index, *args, how=name, **kwargs)

    at_index.__name__ = at_index.__qualname__ = f"at_{name}"
    return at_index


_AT_INDEX = {name: _index_update(name) for name in _INDEX_UPDATES}


class IndexUpdates:
    """``t.at``: ``t.at[index].set(v)`` and the other updates of ``jax.Array.at``, recorded."""

    __slots__ = ("_tensor",)

    def __init__(self, tensor):
        self._tensor = tensor

    def __getitem__(self, index):
        return IndexUpdate(self._tensor, index_for_update(index, self._tensor.shape))


class IndexUpdate:
    """``t.at[index]``: its methods return the updated copy (``t`` itself is never changed)."""

    __slots__ = ("_tensor", "_index")

    def __init__(self, tensor, index):
        self._tensor = tensor
        self._index = index

    def __getattr__(self, name):
        fn = _AT_INDEX.get(name)
        if fn is None:
            raise AttributeError(
                f"[gradkit] t.at[...] has no update {name!r}; the updates are {', '.join(sorted(_AT_INDEX))}."
            )
        tensor, index = self._tensor, self._index

        def update(*args, **kwargs):
            try:
                if name in dynamic_index.WRITES and len(args) == 1 and not kwargs and record.is_recorded(tensor):
                    runtime = dynamic_index.runtime_box(index, tuple(tensor.shape))
                    if runtime is not None:  # an eager tape: the starts an input (see dynamic_index)
                        box, starts = runtime
                        return record.apply(dynamic_index.write_compiled, tensor, starts, box, args[0], name)
                return record.apply(fn, tensor, index, *args, **kwargs)
            except (TypeError, ValueError, IndexError) as error:
                raise _errors.bad_op_inputs(error, f"t.at[...].{name}", (tensor, *args)) from error

        return update


# Methods whose float arguments are values (bounds, the values an update writes), never shapes
# or flags: runtime inputs of the program, so a new value compiles nothing new. Not ``get``:
# jax needs its ``fill_value`` known when it traces.
for _name, _fn in _AT_INDEX.items():
    if _name != "get":
        record.floats_are_runtime(_fn)
record.floats_are_runtime(dynamic_index.write_compiled)  # t.at[i].set(0.5), v[i].assign(0.5) under a tape


def install(cls) -> None:
    """Give ``cls`` every ``jax.Array`` method mirroring a ``jax.numpy`` function it lacks, and
    the properties ``real``, ``imag``, ``mT``, ``at``, ``itemsize`` and ``nbytes``."""
    for name in dir(jax.Array):
        if name.startswith("_") or hasattr(cls, name) or not hasattr(jnp, name):
            continue
        if inspect.isfunction(inspect.getattr_static(jax.Array, name)):
            fn = _array_method(name)
            if name == "clip":
                record.floats_are_runtime(fn)
            setattr(cls, name, _lifted(fn))
    cls.real = _lifted_property(jnp.real, "real")
    cls.imag = _lifted_property(jnp.imag, "imag")
    cls.mT = _lifted_property(jnp.matrix_transpose, "mT")
    cls.at = property(IndexUpdates, doc="Like ``jax.Array.at``: ``t.at[i].set(v)`` returns the updated copy.")
    cls.itemsize = property(lambda self: self.dtype.itemsize)
    cls.nbytes = property(lambda self: self.size * self.dtype.itemsize)
