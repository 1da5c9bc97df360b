"""Checkpointed values waiting for the objects they belong to (TensorFlow's deferred restoration).

``restore`` writes each value whose Variable exists. A value whose Variable does not exist yet
(a layer not built, an optimizer before its first step) waits here, kept by the deepest object
of its path that exists (its *anchor*, held weakly: the value goes with it), and is given to the
Variable when it is made, as TensorFlow restores a Variable created after ``restore``:

- a Keras layer's weight takes the value as its initial value (``initial_value``, called by
  ``add_weight``), so a layer built inside a ``tf.function`` starts from the checkpoint too;
- an optimizer's state for a Variable starts from its saved value (``state_value``), so moments
  restored before the first ``apply_gradients`` are the ones it steps from;
- anything else is assigned once its anchor is built or given a new attribute (``built``).

The values are checked (shape and dtype) when they are given, as TensorFlow checks them.
"""

from __future__ import annotations

import threading
import weakref

import jax
import numpy as np

from gradkit import _errors
from gradkit._core import frames
from gradkit._core.jit import VALUE_GIVEN_AT_CREATION

_lock = threading.RLock()
# id(anchor) -> (weak reference to the anchor, [Waiting, ...]); empty when nothing waits.
_waiting: dict = {}


class Entry:
    """One value of a checkpoint being restored: its key, where it goes, its value, and the
    object it was given to (``bound``, a weak reference) once it was."""

    __slots__ = ("key", "path", "slot", "value", "bound", "__weakref__")

    def __init__(self, key: str, path: tuple, slot, value):
        self.key, self.path, self.slot, self.value = key, path, slot, value
        self.bound = None

    @property
    def done(self) -> bool:
        return self.bound is not None

    def bind(self, variable) -> None:
        self.bound = weakref.ref(variable)
        self.value = None  # the Variable holds it now


class Waiting:
    """An entry waiting at an anchor: ``rest``, the names left to follow from the anchor; for an
    optimizer slot, ``variable``, how to find the Variable it belongs to (a weak reference to it,
    or an anchor and names), and ``finding_optimizer``, whether the anchor is on the way to the
    optimizer rather than the optimizer itself."""

    __slots__ = ("entry", "rest", "variable", "finding_optimizer")

    def __init__(self, entry: Entry, rest: tuple = (), variable=None, finding_optimizer: bool = False):
        self.entry, self.rest, self.variable, self.finding_optimizer = entry, rest, variable, finding_optimizer


def waiting() -> bool:
    """Whether any value waits (every hook returns at once when none does)."""
    return bool(_waiting)


def wait(anchor, item: Waiting) -> bool:
    """Keep ``item`` at ``anchor`` until an object is made there; False if ``anchor`` cannot hold it
    (a Variable: nothing is made inside one)."""
    from gradkit._core.variable import Variable

    if isinstance(anchor, Variable):
        return False
    key = id(anchor)
    with _lock:
        hit = _waiting.get(key)
        if hit is None or hit[0]() is not anchor:
            try:
                ref = weakref.ref(anchor, lambda _, key=key: _forget(key))
            except TypeError:
                return False
            hit = _waiting[key] = (ref, [])
        hit[1].append(item)
    return True


def _forget(key) -> None:
    with _lock:
        hit = _waiting.get(key)
        if hit is not None and hit[0]() is None:
            del _waiting[key]


def _items_at(anchor) -> list:
    hit = _waiting.get(id(anchor))
    if hit is None or hit[0]() is not anchor:
        return []
    return hit[1]


def _prune(anchor) -> None:
    with _lock:
        hit = _waiting.get(id(anchor))
        if hit is not None:
            hit[1][:] = [w for w in hit[1] if not w.entry.done]
            if not hit[1]:
                del _waiting[id(anchor)]


def checked(entry: Entry, variable):
    """``entry``'s value for ``variable``, refused when its shape or dtype differ (TensorFlow raises
    ValueError for the shape, InvalidArgumentError for the dtype)."""
    value = entry.value
    dtype = np.dtype(variable.dtype)
    declared = getattr(variable, "__dict__", {}).get("_declared_shape")
    if declared is not None:
        # Declared with a None size (shape=tf.TensorShape([None]) or None): any value of a compatible
        # shape restores into it and gives it that shape, as TensorFlow's restore does.
        from .._variable_shape import compatible

        fits, shape = compatible(declared, tuple(value.shape)), _describe_declared(declared)
    else:
        shape = tuple(variable.shape)
        fits = tuple(value.shape) == shape
    if not fits:
        raise _errors.GradkitValueError(
            f"The checkpoint's value {entry.key!r} has shape {tuple(value.shape)}, but the Variable it restores, "
            f"{variable.name!r}, has shape {shape}: the program builds this object differently from the one that "
            "saved it. Build it as it was saved (same layer sizes), or restore into a model of that shape and "
            "copy what fits."
        )
    if value.dtype != dtype:
        raise _errors.InvalidArgumentValueError(
            f"The checkpoint's value {entry.key!r} has dtype {value.dtype.name}, but the Variable it restores, "
            f"{variable.name!r}, has dtype {dtype.name} (TensorFlow refuses this too). Create the Variable with "
            f"dtype {value.dtype.name}, or read the value with tf.train.load_variable and cast it."
        )
    return value


def _describe_declared(declared) -> str:
    """A declared shape as TensorFlow prints it: ``<unknown>`` for any shape, else ``(None, 3)``."""
    if getattr(declared, "rank", 0) is None:
        return "<unknown> (declared shape=None: any shape)"
    return f"{tuple(declared)} (declared; None is any size)"


def write(variable, value) -> None:
    """Give ``variable`` a restored value: an assignment eagerly; inside a traced call, the live value,
    as TensorFlow restores in ``init_scope`` (outside the function being traced)."""
    if frames.idle():
        variable.assign(value)
    else:
        with frames.Suspend(), jax.ensure_compile_time_eval():
            variable.assign(value)
        # Made by the call being traced, its initial value is computed again outside the call
        # once traced (gk.jit lifts it): the restored value is the one it keeps.
        if hasattr(variable, "__dict__"):
            variable.__dict__[VALUE_GIVEN_AT_CREATION] = np.asarray(value)


def _newest(items: list, match) -> Waiting | None:
    found = None
    for item in items:
        if not item.entry.done and match(item):
            found = item  # later restores come later in the list and win, as in TensorFlow
    return found


def _bind_all(items: list, match, variable) -> None:
    for item in items:
        if not item.entry.done and match(item):
            item.entry.bind(variable)


def initial_value(layer, name: str, value):
    """The initial value of the weight ``layer`` is making under ``name``: a waiting checkpoint
    value for it (``bind_weight`` then marks it given), else ``value``."""
    if not _waiting:
        return value
    from . import object_graph

    with _lock:
        items = _items_at(layer)
        if not items:
            return value
        key = object_graph.next_weight_key(layer, name)
        found = _newest(items, lambda w: w.rest == (key,) and not w.finding_optimizer)
        if found is None:
            return value
        return checked(found.entry, _Unmade(f"{layer.name}/{name}", value))


class _Unmade:
    """The shape, dtype and name of a Variable about to be made from ``value``, for ``checked``."""

    def __init__(self, name: str, value):
        self.name, self.shape, self.dtype = name, tuple(np.shape(value)), np.dtype(value.dtype)


def bind_weight(layer, variable) -> None:
    """After ``layer`` made ``variable`` from a waiting value: the entries waiting for it are done."""
    if not _waiting:
        return
    from . import object_graph

    with _lock:
        key = next((k for k, v in object_graph.keras_weights(layer) if v is variable), None)
        items = _items_at(layer)
        _bind_all(items, lambda w: w.rest == (key,) and not w.finding_optimizer, variable)
        _prune(layer)


def _slot_matches(item: Waiting, variable, name: str) -> bool:
    if item.finding_optimizer or item.entry.slot is None or item.entry.slot[2] != name:
        return False
    target = item.variable
    if isinstance(target, weakref.ref):
        return target() is variable
    from . import object_graph

    anchor_ref, rest = target
    anchor = anchor_ref()
    return anchor is not None and object_graph.follow(anchor, rest)[0] is variable


def state_value(optimizer, variable, name: str, value):
    """The initial value of ``optimizer``'s state ``name`` for ``variable``: a waiting checkpoint
    value, else ``value``. The entries it comes from are bound by ``bind_state``."""
    if not _waiting:
        return value
    with _lock:
        found = _newest(_items_at(optimizer), lambda w: _slot_matches(w, variable, name))
        if found is None:
            return value
        return checked(found.entry, _Unmade(f"{variable.name}/{name}", value))


def bind_state(optimizer, variable, name: str, state) -> None:
    """After ``optimizer`` made ``state`` from a waiting value: the entries waiting for it are done."""
    if not _waiting:
        return
    with _lock:
        _bind_all(_items_at(optimizer), lambda w: _slot_matches(w, variable, name), state)
        _prune(optimizer)


def built(anchor) -> None:
    """``anchor`` was built or given an attribute: give the values waiting at it to the Variables
    that exist now, and move the others to the deepest object of their path."""
    if not _waiting:
        return
    from . import object_graph

    with _lock:
        items = [w for w in _items_at(anchor) if not w.entry.done]
        if not items:
            return
        hit = _waiting.pop(id(anchor))
    writes, again = [], []
    for item in items:
        found, deeper, rest = object_graph.follow(anchor, item.rest)
        if item.finding_optimizer:
            if found is not None and hasattr(found, "_slots"):
                state = _slot_state(found, item)
                if state is not None:
                    writes.append((item.entry, state))
                else:
                    again.append((found, Waiting(item.entry, (), item.variable)))
            else:
                again.append((deeper, Waiting(item.entry, rest, item.variable, True)))
        elif item.entry.slot is not None:
            state = _slot_state(anchor, item)
            if state is not None:
                writes.append((item.entry, state))
            else:
                again.append((anchor, item))
        elif found is not None and _is_variable(found):
            writes.append((item.entry, found))
        elif deeper is not anchor:
            again.append((deeper, Waiting(item.entry, rest)))
        else:
            again.append((anchor, item))
    try:
        values = [(variable, checked(entry, variable)) for entry, variable in writes]
    except Exception:
        with _lock:
            _waiting[id(anchor)] = hit
        raise
    for (entry, variable), (_, value) in zip(writes, values):
        write(variable, value)
        entry.bind(variable)
    for where, item in again:
        if not wait(where, item) and where is not anchor:
            wait(anchor, item)


def _slot_state(optimizer, item: Waiting):
    """The state Variable of ``optimizer`` that ``item`` (an optimizer slot) restores, if made."""
    from . import object_graph

    _, _, name = item.entry.slot
    target = item.variable
    if isinstance(target, weakref.ref):
        variable = target()
    else:
        anchor = target[0]()
        variable = None if anchor is None else object_graph.follow(anchor, target[1])[0]
    if variable is None:
        return None
    return object_graph.state_of(optimizer, variable, name)


def _is_variable(obj) -> bool:
    from gradkit._core.variable import Variable

    return isinstance(obj, Variable)


def state_variable(optimizer, variable, name: str, value, variable_name: str):
    """A new non-trainable Variable for ``optimizer``'s state ``name`` of ``variable``, started from a
    waiting checkpoint value instead of ``value`` when there is one."""
    from .._keras.layer_weight import KerasStateVariable  # a Keras variable: arithmetic gives tensors

    state = KerasStateVariable(state_value(optimizer, variable, name, value), name=variable_name, trainable=False)
    bind_state(optimizer, variable, name, state)
    return state
