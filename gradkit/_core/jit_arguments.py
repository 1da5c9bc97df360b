"""Variables passed as arguments of a ``gk.jit`` function.

A Variable is a pytree that flattens to its value, so jax alone would hand the function a
traced copy, with no ``assign``. ``gk.jit`` instead passes each Variable argument as a
``VariableArgument``: its value is the leaf jax traces, the Variable itself is the static
part, compared by identity. The traced function gets the Variable back, its value held by
the call's frame, so it is read and assigned exactly as a Variable the function closes over.

The compiled program is specific to the Variables passed (one trace per distinct
Variable). Reusing it for another Variable of the same shape and dtype, as ``tf.function``
does, is wrong whenever the function also reaches the first Variable some other way (a
closure, an attribute): the trace cannot tell the two paths apart, so the reused program
would read the new argument where the code reads the old Variable.
"""

from __future__ import annotations

import weakref

import jax
import numpy as np

from .. import _errors
from .variable import Variable


class _Same:
    """A Variable as part of a jit cache key: equal only to itself (a Variable's ``==`` is elementwise).

    Also a Variable in a static argument, which jax must hash and a tape must not read as its value.
    Held weakly: jax's caches keep keys, and must not keep alive a Variable created inside a
    traced call (which would then count as kept by something that outlives the call).
    """

    __slots__ = ("_ref", "_hash")

    def __init__(self, var: Variable):
        self._ref = weakref.ref(var)
        self._hash = id(var)

    @property
    def var(self) -> Variable:
        var = self._ref()
        if var is None:
            raise _errors.GradkitRuntimeError(
                "gk.jit: a Variable passed to a compiled function as an argument no longer exists, but the "
                "call's program had to be traced again (for a gradient of a tape that recorded the call). "
                "Keep the Variable alive while its results are in use, e.g. in a Python variable."
            )
        return var

    def __eq__(self, other):
        return isinstance(other, _Same) and (other is self or (other._ref() is self._ref() is not None))

    def __hash__(self):
        return self._hash


class VariableArgument:
    """A Variable argument as the compiled program sees it: its value, and which Variable it is."""

    __slots__ = ("var", "value")

    def __init__(self, var: Variable, value):
        self.var = var
        self.value = value


jax.tree_util.register_pytree_node(
    VariableArgument,
    lambda a: ((a.value,), _Same(a.var)),
    lambda same, children: VariableArgument(same.var, children[0]),
)


def _is_variable_or_value(x) -> bool:
    # A layer above's stand-in for a value (a tape's tensor) is one argument, not a pytree.
    return isinstance(x, Variable) or hasattr(type(x), "__gradkit_value__")


def is_variable_argument(x) -> bool:
    return isinstance(x, VariableArgument)


def _is_argument(x) -> bool:
    return isinstance(x, VariableArgument) or hasattr(type(x), "__gradkit_value__")


# Arguments that hold no Variable, told at a glance: most calls pass only these.
_PLAIN_TYPES = (type(None), bool, int, float, complex, str, np.ndarray, np.generic, jax.Array)


def _holds_variable(x) -> bool:
    if isinstance(x, _PLAIN_TYPES) or hasattr(type(x), "__gradkit_value__"):
        return False
    if isinstance(x, Variable):
        return True
    if type(x) in (list, tuple):
        return any(map(_holds_variable, x))
    if type(x) is dict:
        return any(map(_holds_variable, x.values()))
    return any(isinstance(leaf, Variable) for leaf in jax.tree_util.tree_leaves(x, is_leaf=_is_variable_or_value))


def _order(args: tuple, kwargs: dict, static_argnums, static_argnames) -> tuple:
    """The ``VariableArgument``s in the arguments, one per Variable: non-static positional arguments first,
    then keyword arguments by name (jax may pass them to the trace in another order)."""
    dynamic = [a for i, a in enumerate(args) if i not in static_argnums]
    dynamic += [kwargs[k] for k in sorted(kwargs) if k not in static_argnames]
    found: dict[int, Variable] = {}
    for x in jax.tree_util.tree_leaves(dynamic, is_leaf=_is_argument):
        if isinstance(x, VariableArgument):
            found.setdefault(id(x.var), x)
    return tuple(found.values())


def mark(args: tuple, kwargs: dict, static_argnums, static_argnames, read):
    """``args`` and ``kwargs`` with each Variable in a non-static argument (nested containers
    included) replaced by a ``VariableArgument`` holding ``read(var)``, and the Variables
    marked, each once, in the order the program numbers them (see ``slots``).

    A Variable in a static argument is static by identity, and read as a Variable the function
    closes over.
    """
    if not any(map(_holds_variable, args)) and not any(map(_holds_variable, kwargs.values())):
        return args, kwargs, ()

    def one(x):
        return VariableArgument(x, read(x)) if isinstance(x, Variable) else x

    def static(x):
        return _Same(x) if isinstance(x, Variable) else x

    def tree(x, f=one):
        if not _holds_variable(x):
            return x  # rebuilt only where a Variable is inside
        return jax.tree_util.tree_map(f, x, is_leaf=_is_variable_or_value)

    args = tuple(tree(a, static) if i in static_argnums else tree(a) for i, a in enumerate(args))
    kwargs = {k: tree(a, static) if k in static_argnames else tree(a) for k, a in kwargs.items()}
    marked = _order(args, kwargs, static_argnums, static_argnames)
    return args, kwargs, tuple(a.var for a in marked)


def unmark(args: tuple, kwargs: dict, static_argnums, static_argnames):
    """The arguments the function is called with (each ``VariableArgument`` its Variable again),
    and the ``VariableArgument``s, each Variable once, in ``mark``'s order: the values the
    call's frame starts from."""
    marked = _order(args, kwargs, static_argnums, static_argnames)

    def one(x):
        return x.var if isinstance(x, (VariableArgument, _Same)) else x

    def is_leaf(x):
        return _is_argument(x) or isinstance(x, _Same)

    def tree(x):
        if not any(
            isinstance(leaf, (VariableArgument, _Same)) for leaf in jax.tree_util.tree_leaves(x, is_leaf=is_leaf)
        ):
            return x  # rebuilt only where a Variable is inside
        return jax.tree_util.tree_map(one, x, is_leaf=is_leaf)

    return tuple(map(tree, args)), {k: tree(a) for k, a in kwargs.items()}, marked


def slots(marked) -> dict[int, int]:
    """The int standing for each Variable argument among the assigned values a program returns:
    negative (-1 for the first), so they never meet the slots of the Variables it closes over."""
    return {id(a.var): -1 - j for j, a in enumerate(marked)}
