"""``State``: an immutable pytree mapping Variables to their values.

A State is data. Every method that "changes" one returns a new State and leaves the
original as it was, so a State can be passed through ``jax.jit``, ``jax.grad``,
``jax.vmap``, ``jax.lax.scan`` and optax like any other pytree. It flattens to its
values only; which Variables it holds is static structure.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import jax
import numpy as np

from .. import _errors
from . import frames
from .index_bounds import check_indices
from .index_update import index_update
from .variable import Variable, VariableSlice, check_delta, coerce_to, coerce_update

_NO_DEFAULT = object()


class _Keys:
    """The Variables a State holds, compared by identity (a Variable's ``==`` is elementwise)."""

    __slots__ = ("vars", "index", "_hash")

    def __init__(self, variables: tuple[Variable, ...]):
        self.vars = variables
        self.index = {id(v): i for i, v in enumerate(variables)}
        self._hash = hash(tuple(self.index))

    def __eq__(self, other):
        return (
            isinstance(other, _Keys)
            and len(self.vars) == len(other.vars)
            and all(a is b for a, b in zip(self.vars, other.vars))
        )

    def __hash__(self):
        return self._hash

    def __repr__(self):
        return "(" + ", ".join(v.name for v in self.vars) + ")"


# What each caller of flatten_variables takes, for its error messages.
_TAKES_VARIABLES = {
    "State.of": (
        "gk.State.of takes Variables (or a nested list/tuple/dict of them), but got {what}. To build a State "
        "from values, write gk.State({{variable: value}})."
    ),
    "apply_updates": (
        "apply_updates takes params that are a gk.State or Variables (a Variable or a nested list/tuple/dict "
        "of them), but got {what}. Pass the State or the Variables you gave optimizer.init."
    ),
}

_STATE_AS_WRT = (
    "wrt= takes Variables (or a list/tuple/dict of them), but got a gk.State. A transform differentiates "
    "with respect to the Variables' values when it is entered, not the values a State holds: pass its "
    "Variables, wrt=list(state.variables); to differentiate at the State's own values, use "
    "jax.grad(gk.functionalize(fn))(state, ...)."
)


def flatten_variables(tree, caller: str = "wrt") -> tuple[list[Variable], Any]:
    """The Variables in a (possibly nested) structure and the structure, or a clear error.

    ``caller`` ("wrt", "State.of" or "apply_updates") picks the message of that error.
    """
    # A State is a leaf here: flattened, it would give its values, and the error would
    # describe an array the caller never passed.
    leaves, treedef = jax.tree_util.tree_flatten(tree, is_leaf=lambda x: isinstance(x, (Variable, State)))
    for leaf in leaves:
        if isinstance(leaf, Variable):
            continue
        if caller == "wrt":
            if isinstance(leaf, State):
                raise _errors.GradkitTypeError(_STATE_AS_WRT)
            raise _errors.GradkitTypeError(_errors.MSG_NOT_A_VARIABLE.format(what=_describe(leaf)))
        what = "a gk.State" if isinstance(leaf, State) else _describe(leaf)
        raise _errors.GradkitTypeError(_TAKES_VARIABLES[caller].format(what=what))
    return leaves, treedef


def unique(variables: Iterable[Variable]) -> list[Variable]:
    seen: set[int] = set()
    out = []
    for v in variables:
        if id(v) not in seen:
            seen.add(id(v))
            out.append(v)
    return out


def _describe(x) -> str:
    shape = getattr(x, "shape", None)
    if shape is not None:
        return f"a {type(x).__name__} of shape {tuple(shape)}"
    return f"{type(x).__name__} {x!r}"


class State:
    """An immutable mapping from Variables to values.

    Build one from values (``State({a: 1.0, b: 2.0})``) or from the live Variables
    (``State.of([a, b])``). Read with ``state[a]``. ``assign``, ``assign_add``,
    ``assign_sub`` and ``state.at[v][idx].set(p)`` return a new State; the original is
    left unchanged. :meth:`commit` writes the values back into the live Variables.

    >>> import gradkit as gk
    >>> a = gk.Variable(1.0, name="a")
    >>> s = gk.State.of([a])
    >>> s2 = s.assign(a, 5.0)
    >>> float(s[a]), float(s2[a]), float(a.value)
    (1.0, 5.0, 1.0)
    """

    __slots__ = ("_keys", "_values", "_index", "_is_axes")

    def __init__(self, mapping: Mapping[Variable, Any] | Iterable[tuple[Variable, Any]] = ()):
        pairs = mapping.items() if isinstance(mapping, Mapping) else mapping
        variables, values = [], []
        index: dict[int, int] = {}
        for var, value in pairs:
            if not isinstance(var, Variable):
                raise _errors.GradkitTypeError(
                    f"State keys must be Variables, but got {_describe(var)}. "
                    "Write gk.State({my_variable: value}) or gk.State.of([my_variable])."
                )
            value = _coerce_entry(value, var)
            if id(var) in index:
                values[index[id(var)]] = value
                continue
            index[id(var)] = len(variables)
            variables.append(var)
            values.append(value)
        self._init(tuple(variables), tuple(values), index)

    def _init(self, variables, values, index=None):
        object.__setattr__(self, "_keys", variables if isinstance(variables, _Keys) else _Keys(variables))
        object.__setattr__(self, "_values", tuple(values))
        object.__setattr__(self, "_index", self._keys.index if index is None else index)
        object.__setattr__(self, "_is_axes", False)

    @classmethod
    def _make(cls, keys, values, index=None) -> State:
        # No validation: jax unflattens with tracers, None or sentinel objects as values.
        self = object.__new__(cls)
        self._init(keys, values, index)
        return self

    @classmethod
    def of(cls, variables) -> State:
        """The current values of ``variables`` (a Variable or any nested structure of them).

        A Variable that appears twice is one entry.
        """
        leaves, _ = flatten_variables(variables, "State.of")
        leaves = unique(leaves)
        return cls._make(tuple(leaves), tuple(frames.read(v) for v in leaves))

    def __setattr__(self, name, value):
        raise AttributeError("[gradkit] a State is immutable; state.assign(v, x) returns a new State.")

    def __reduce__(self):
        # pickle, copy and deepcopy would otherwise set the slots one by one (refused above),
        # and the index is keyed by the ids of the Variables, which a copy or an unpickled
        # State does not share: rebuild it from the Variables the copy holds.
        return (_rebuild_state, (self._keys.vars, self._values, self._is_axes))

    # -- mapping ---------------------------------------------------------------------------
    @property
    def variables(self) -> tuple[Variable, ...]:
        return self._keys.vars

    def __getitem__(self, var: Variable):
        i = self._index.get(id(var))
        if i is None:
            self._missing(var)
        return self._values[i]

    def get(self, var: Variable, default=None):
        i = self._index.get(id(var))
        return default if i is None else self._values[i]

    def __contains__(self, var) -> bool:
        return id(var) in self._index and self._keys.vars[self._index[id(var)]] is var

    def __len__(self) -> int:
        return len(self._values)

    def __iter__(self) -> Iterator[Variable]:
        return iter(self._keys.vars)

    def keys(self):
        return self._keys.vars

    def values(self):
        return self._values

    def items(self):
        return zip(self._keys.vars, self._values)

    def _missing(self, var):
        held = ", ".join(v._label() for v in self._keys.vars) or "nothing"
        name = var._label() if isinstance(var, Variable) else _describe(var)
        raise _errors.GradkitValueError(_errors.MSG_NOT_IN_STATE.format(name=name, held=held))

    # -- pure updates ----------------------------------------------------------------------
    def assign(self, var: Variable, value) -> State:
        """A new State in which ``var`` holds ``value``; this State is unchanged."""
        self._refuse_axes("assign")
        i = self._index.get(id(var))
        if i is None:
            self._missing(var)
        value = coerce_to(_held(value), var.shape, var.dtype, var._label())
        values = list(self._values)
        values[i] = value
        return State._make(self._keys, values, self._index)

    def assign_add(self, var: Variable, delta) -> State:
        """A new State in which ``var`` holds ``state[var] + delta``."""
        return self.assign(var, self[var] + check_delta(delta, var, "add"))

    def assign_sub(self, var: Variable, delta) -> State:
        """A new State in which ``var`` holds ``state[var] - delta``."""
        return self.assign(var, self[var] - check_delta(delta, var, "subtract"))

    @property
    def at(self) -> _StateAt:
        """``state.at[v][idx].set(p)`` (also ``.add``, ``.multiply``, ...): a new State
        whose ``v`` is ``state[v].at[idx].set(p)``."""
        return _StateAt(self)

    def replace(self, mapping: Mapping[Variable, Any]) -> State:
        """A new State with several entries replaced at once."""
        out = self
        for var, value in mapping.items():
            out = out.assign(var, value)
        return out

    def __or__(self, other: State) -> State:
        """Merge: the entries of both; where both hold a Variable, ``other``'s value wins."""
        if not isinstance(other, State):
            return NotImplemented
        variables = list(self._keys.vars)
        values = list(self._values)
        index = dict(self._index)
        for var, value in other.items():
            i = index.get(id(var))
            if i is None:
                index[id(var)] = len(variables)
                variables.append(var)
                values.append(value)
            else:
                values[i] = value
        return State._make(tuple(variables), values, index)

    def commit(self) -> None:
        """Write every value back into its live Variable (``v.assign(state[v])`` for each).

        This is the only way a State changes Variables: transforms never do it for you.
        """
        self._refuse_axes("commit")
        # Validate everything first so that a bad value leaves every Variable unchanged.
        checked = [(v, coerce_to(x, v.shape, v.dtype, v._label())) for v, x in self.items()]
        check_live_assignments(checked)
        for var, value in checked:
            frames.assign(var, value)

    # -- axes specs --------------------------------------------------------------------------
    def axes(self, spec: Mapping[Variable, int | None] | int | None = 0, *, default: Any = _NO_DEFAULT) -> State:
        """An ``in_axes``/``out_axes`` spec for ``jax.vmap`` (or ``gk.vmap``) with this State's structure.

        ``jax.vmap`` takes, for a pytree argument, a pytree of the same structure whose leaves
        are ints or None; for a State that is a State holding the same Variables, in the same
        order, with an axis for each. ``gk.State({v: 0})`` is not one: it holds the *value*
        0 of ``v`` (checked against ``v``'s shape and dtype), so build the spec here.

        Args:
          spec: an int or None for every entry, or a mapping ``{variable: int | None}``.
          default: the axis of each Variable the mapping leaves out; without it, the mapping
            must name every Variable of this State.

        Returns:
          A State of axes (not of values): it cannot be assigned or committed.

        >>> import gradkit as gk, jax, jax.numpy as jnp
        >>> a, w = gk.Variable(2.0, name="a"), gk.Variable(jnp.ones(3), name="w")
        >>> state = gk.State.of([a, w])
        >>> batch = state | jax.tree.map(lambda x: jnp.stack([x] * 4), gk.State.of([w]))  # w along axis 0
        >>> spec = batch.axes({w: 0}, default=None)
        >>> spec
        State.axes({a: None, w: 0})
        >>> jax.vmap(lambda s: s[a] * s[w], in_axes=(spec,))(batch).shape
        (4, 3)
        """
        if isinstance(spec, Mapping):
            for var in spec:
                if var not in self:
                    self._missing(var)
            missing = [v for v in self._keys.vars if v not in spec]
            if missing and default is _NO_DEFAULT:
                names = ", ".join(v._label() for v in missing)
                raise _errors.GradkitValueError(
                    f"state.axes got no axis for Variable(s) {names} of this State. Name every Variable, or pass "
                    "default=None (not mapped) or default=0 for the ones left out."
                )
            axes = [spec[v] if v in spec else default for v in self._keys.vars]
        else:
            if default is not _NO_DEFAULT:
                raise _errors.GradkitTypeError(
                    "state.axes(spec, default=...) takes default= only with a mapping spec, {variable: axis}; "
                    f"got spec={spec!r}, which already gives every entry its axis."
                )
            axes = [spec] * len(self._values)
        for var, axis in zip(self._keys.vars, axes):
            if not (axis is None or type(axis) is int):
                raise _errors.GradkitTypeError(
                    f"state.axes: the axis for Variable {var._label()} is {_describe(axis)}, but an axis is an "
                    "int (negative counts from the end) or None (not mapped), as in jax.vmap's in_axes."
                )
        out = State._make(self._keys, axes, self._index)
        object.__setattr__(out, "_is_axes", True)
        return out

    def _refuse_axes(self, what: str) -> None:
        if self._is_axes:
            raise _errors.GradkitTypeError(
                f"cannot {what} a State made by state.axes(...): it holds jax.vmap axes (ints or None), not "
                f"values of its Variables. Call {what} on the State of values you map over."
            )

    # -- printing --------------------------------------------------------------------------
    def __repr__(self) -> str:
        parts = []
        for var, value in self.items():
            try:
                shown = np.array2string(np.asarray(frames.concrete(value)), precision=6, separator=", ")
            except Exception:  # traced or placeholder values while jax transforms the State
                shown = type(value).__name__
            parts.append(f"{var.name}: {shown}")
        return ("State.axes({" if self._is_axes else "State({") + ", ".join(parts) + "})"


def _rebuild_state(variables, values, is_axes) -> State:
    out = State._make(tuple(variables), tuple(values))
    object.__setattr__(out, "_is_axes", is_axes)
    return out


def _held(value):
    """What a State holds for ``value``: outside every frame, a layer's lazy tensor (a tape's
    gradient) is its array, so the State has the same pytree structure as one of arrays (optax's
    updates and parameters must match); under a tape it stays the recorded tensor."""
    return frames.concrete(value) if frames.idle() else value


def _coerce_entry(value, var: Variable):
    """A constructor entry as a value of ``var``; None or a Python int that is not one hints at ``axes``."""
    hint = value is None or type(value) is int
    try:
        return coerce_to(_held(value), var.shape, var.dtype, var._label())
    except (_errors.AssignmentError, _errors.GradkitTypeError):
        if not hint:
            raise
    what = "None" if value is None else f"the int {value}"
    raise _errors.GradkitTypeError(
        _errors.MSG_STATE_AXIS_VALUE.format(what=what, name=var._label(), shape=var.shape, dtype=var.dtype)
    ) from None


def check_live_assignments(pairs) -> None:
    """Refuse, before any is made, assignments of traced values that would land on live Variables.

    With no frame active each assignment replaces a live value, and ``frames.set_live``
    refuses a tracer; checking only there would leave the Variables assigned before it
    changed (``State({a: 5.0, b: x}).commit()`` under ``jax.grad``). Under a frame (a gradkit
    transform, a tape) the frame receives the values, and tracers are its business.
    """
    if not frames.idle():
        return
    for var, value in pairs:
        if isinstance(value, jax.core.Tracer):
            raise _errors.AssignmentError(_errors.MSG_TRACER_INTO_LIVE_VARIABLE.format(name=var._label()))


class _StateAt:
    __slots__ = ("_state",)

    def __init__(self, state):
        self._state = state

    def __getitem__(self, var):
        return _VarAt(self._state, var)


class _VarAt:
    __slots__ = ("_state", "_var")

    def __init__(self, state, var):
        self._state = state
        self._var = var

    def __getitem__(self, index):
        return _IndexAt(self._state, self._var, index)


class _IndexAt:
    __slots__ = ("_state", "_var", "_index")

    def __init__(self, state, var, index):
        self._state = state
        self._var = var
        self._index = _array_index(index, var)

    def _apply(self, how, value, **kwargs):
        current = self._state[self._var]
        if "mode" not in kwargs:  # jax's out-of-range modes, asked for by name, keep jax's rules
            check_indices(self._index, current.shape)
        # The rules of v[idx].assign(p): a slice update may not do what an assignment may not.
        value = coerce_update(value, self._var, self._index)
        new = index_update(current, self._index, value, how, **kwargs)
        return self._state.assign(self._var, new)

    def set(self, value, **kwargs) -> State:
        return self._apply("set", value, **kwargs)

    def add(self, value, **kwargs) -> State:
        return self._apply("add", value, **kwargs)

    def subtract(self, value, **kwargs) -> State:
        return self._apply("subtract", value, **kwargs)

    def multiply(self, value, **kwargs) -> State:
        return self._apply("multiply", value, **kwargs)

    def divide(self, value, **kwargs) -> State:
        if not jax.numpy.issubdtype(self._state[self._var].dtype, jax.numpy.inexact):
            raise _errors.AssignmentError(
                f"state.at[{self._var._label()}][...].divide: the Variable holds integers, and a true division "
                "gives floats it cannot hold without truncating them. Divide a float Variable, or floor-divide "
                "this one: state.at[v][idx].apply(lambda x: x // d)."
            )
        return self._apply("divide", value, **kwargs)

    def power(self, value, **kwargs) -> State:
        return self._apply("power", value, **kwargs)

    def apply(self, func, **kwargs) -> State:
        """``state[v].at[idx].apply(func)``: ``func`` of the selected entries, elementwise."""
        new = index_update(self._state[self._var], self._index, func, "apply", **kwargs)
        return self._state.assign(self._var, new)

    def min(self, value, **kwargs) -> State:
        return self._apply("min", value, **kwargs)

    def max(self, value, **kwargs) -> State:
        return self._apply("max", value, **kwargs)

    def get(self, **kwargs):
        """The selected entries; an integer index outside its axis raises ``IndexError`` unless jax's
        ``mode=`` (with ``fill_value=``) asks for jax's clamped or filled read."""
        current = jax.numpy.asarray(self._state[self._var])
        if "mode" in kwargs:
            return current.at[self._index].get(**kwargs)
        check_indices(self._index, current.shape)
        return current.at[self._index].get(**kwargs)


def _array_index(index, var):
    """``index``, refused when it holds a Variable: a State's update is pure, and whether the index
    means the Variable's live value or its value in a State is the caller's to say."""
    items = index if type(index) is tuple else (index,)
    for item in items:
        bounds = (item.start, item.stop, item.step) if isinstance(item, slice) else (item,)
        handle = next((b for b in bounds if isinstance(b, (Variable, VariableSlice))), None)
        if handle is not None:
            name = (
                f"Variable {handle._label()}"
                if isinstance(handle, Variable)
                else f"a slice of Variable {handle._var._label()}"
            )
            raise _errors.GradkitTypeError(
                f"[gradkit] state.at[{var._label()}][...] got {name} in its index. A State's update "
                "is pure and takes arrays as indices: index with its value in the State, state.at[v][state[k]], "
                "or its live value, state.at[v][k.value]."
            )
    return index


def _flatten_with_keys(state: State):
    return list(zip(_path_keys(state._keys), state._values)), state._keys


def _path_keys(keys: _Keys) -> list:
    """A distinct key path entry for each Variable: its name, numbered where names repeat.

    Names need not be unique (every unnamed Variable is 'Variable'), and a checkpoint keyed
    by paths would keep one value for all the Variables that share one.
    """
    names = [v.name for v in keys.vars]
    counts: dict[str, int] = {}
    for name in names:
        counts[name] = counts.get(name, 0) + 1
    taken = set(names)
    seen: dict[str, int] = {}
    out = []
    for name in names:
        if counts[name] > 1:
            k = seen.get(name, 0)
            label = f"{name}#{k}"
            while label in taken:
                k += 1
                label = f"{name}#{k}"
            seen[name] = k + 1
            taken.add(label)
            name = label
        out.append(jax.tree_util.DictKey(name))
    return out


jax.tree_util.register_pytree_with_keys(
    State,
    _flatten_with_keys,
    lambda keys, values: State._make(keys, values),
    flatten_func=lambda s: (s._values, s._keys),
)
