"""``tf.function`` on ``gk.jit``, and ``tf.TensorSpec``.

Arguments that are arrays, tensors or Python floats are traced; Python ints, bools,
strings, None, Variables and other objects are static (TensorFlow retraces on them too),
so ``if training:`` and ``for i in range(n):`` work and a Variable argument can be
assigned. A loop of same-shaped calls compiles once.
"""

from __future__ import annotations

import functools
import weakref

import jax
import numpy as np

from gradkit._core.jit import jit as _gk_jit
from gradkit._core.variable import Variable
from gradkit._tape import graph as _graph
from gradkit._tape.tensor import Tensor

from . import _dtypes
from ._convert import TensorShape, wrap


class TensorSpec:
    """``tf.TensorSpec(shape, dtype=tf.float32, name=None)``; ``shape=None`` means any shape."""

    def __init__(self, shape=None, dtype=_dtypes.float32, name=None):
        self.shape = None if shape is None else TensorShape(-1 if d is None else int(d) for d in shape)
        self.dtype = np.dtype(dtype)
        self.name = name

    def __repr__(self) -> str:
        return f"TensorSpec(shape={self.shape}, dtype=tf.{self.dtype.name}, name={self.name!r})"


class _Static:
    """A static argument for jax.jit: Variables compare by identity, other values by ==."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __eq__(self, other):
        if not isinstance(other, _Static) or type(self.value) is not type(other.value):
            return False
        if self.value is other.value:
            return True
        if isinstance(self.value, Variable):
            return False
        try:
            return bool(self.value == other.value)
        except Exception:
            return False

    def __hash__(self):
        if isinstance(self.value, Variable):
            return id(self.value)
        try:
            return hash((type(self.value), self.value))
        except TypeError:
            return id(self.value)


def _is_traced(x) -> bool:
    if isinstance(x, bool):
        return False
    return isinstance(x, (Tensor, jax.Array, np.ndarray, np.generic, float, complex))


def _plain(x):
    # With no tape recording, pass a Tensor's value: gk.jit retraces once more on the
    # second call when given gk.Tensor arguments (see the report); under a tape the Tensor
    # must stay, so that the tape records the call.
    if isinstance(x, Tensor) and _graph.local.session is None:
        return x.__gradkit_value__()
    return x


def _unstatic(x):
    return x.value if isinstance(x, _Static) else x


class Function:
    """A ``tf.function``: call it like the original; ``python_function`` is the original."""

    def __init__(self, fn, input_signature=None, jit_compile=None, reduce_retracing=False, **options):
        self.python_function = fn
        self.input_signature = input_signature
        self._compiled: dict = {}
        self._bound: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        functools.update_wrapper(self, fn)

    def _run(self, *args, **kwargs):
        return self.python_function(*[_unstatic(a) for a in args], **{k: _unstatic(v) for k, v in kwargs.items()})

    def __call__(self, *args, **kwargs):
        static_pos = tuple(i for i, a in enumerate(args) if not _is_traced(a))
        static_kw = tuple(sorted(k for k, a in kwargs.items() if not _is_traced(a)))
        key = (static_pos, static_kw)
        compiled = self._compiled.get(key)
        if compiled is None:
            compiled = self._compiled[key] = _gk_jit(self._run, static_argnums=static_pos, static_argnames=static_kw)
        args = tuple(_Static(a) if i in static_pos else _plain(a) for i, a in enumerate(args))
        kwargs = {k: _Static(v) if k in static_kw else _plain(v) for k, v in kwargs.items()}
        return wrap(compiled(*args, **kwargs))

    @property
    def trace_count(self) -> int:
        """How many times the Python function was traced (all argument kinds together)."""
        return sum(c.trace_count for c in self._compiled.values())

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        bound = self._bound.get(instance)
        if bound is None:
            bound = Function(functools.partial(self.python_function, instance), self.input_signature)
            self._bound[instance] = bound
        return bound


def function(
    func=None,
    input_signature=None,
    autograph=True,
    jit_compile=None,
    reduce_retracing=False,
    experimental_implements=None,
    experimental_autograph_options=None,
    experimental_attributes=None,
    experimental_relax_shapes=None,
    experimental_compile=None,
    experimental_follow_type_hints=None,
):
    """``tf.function``: compile with ``gk.jit`` (Variables read are inputs, assignments outputs).

    >>> import gradkit.tf as tf
    >>> v = tf.Variable(1.0)
    >>> @tf.function
    ... def step(x):
    ...     v.assign_add(x)
    ...     return v * 2
    >>> [float(step(tf.constant(float(i)))) for i in range(3)], float(v.numpy()), step.trace_count <= 2
    ([2.0, 4.0, 8.0], 4.0, True)
    """
    if func is None:
        return functools.partial(
            function, input_signature=input_signature, jit_compile=jit_compile, reduce_retracing=reduce_retracing
        )
    return Function(func, input_signature=input_signature, jit_compile=jit_compile, reduce_retracing=reduce_retracing)
