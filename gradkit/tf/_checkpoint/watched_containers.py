"""Lists and dicts that hand waiting checkpoint values over as they are filled.

TensorFlow restores a Variable appended to a module's list, or stored in its dict, after
``restore`` at once: its trackable lists and dicts notice ``append`` and item assignment. A list
or dict given to a ``tf.Module``, a ``Checkpoint`` or a Keras layer while values of a restore still
wait becomes one of these, whose changes do the same (``deferred.built`` of its owner), so the
Variable starts from the checkpoint rather than being overwritten by it later. They are a list and
a dict in every other way (``isinstance``, pytrees, pickling as plain ones).
"""

from __future__ import annotations

import weakref

import jax

from . import deferred


def watched(owner, value):
    """``value``, made a watched list or dict when it is a plain one and values wait to be restored."""
    if not deferred.waiting():
        return value
    if type(value) is list:
        return WatchedList(value, owner)
    if type(value) is dict:
        return WatchedDict(value, owner)
    return value


def _changed(container) -> None:
    owner = container._owner()
    if owner is not None and deferred.waiting():
        deferred.built(owner)


class WatchedList(list):
    """A list attribute whose changes give waiting checkpoint values to the Variables put in it."""

    __slots__ = ("_owner",)

    def __init__(self, items, owner):
        super().__init__(items)
        self._owner = weakref.ref(owner)

    def __reduce__(self):
        return (list, (list(self),))

    def append(self, item):
        super().append(item)
        _changed(self)

    def extend(self, items):
        super().extend(items)
        _changed(self)

    def insert(self, index, item):
        super().insert(index, item)
        _changed(self)

    def __setitem__(self, index, item):
        super().__setitem__(index, item)
        _changed(self)

    def __iadd__(self, items):
        super().__iadd__(items)
        _changed(self)
        return self


class WatchedDict(dict):
    """A dict attribute whose changes give waiting checkpoint values to the Variables put in it."""

    __slots__ = ("_owner",)

    def __init__(self, items, owner):
        super().__init__(items)
        self._owner = weakref.ref(owner)

    def __reduce__(self):
        return (dict, (dict(self),))

    def __setitem__(self, key, item):
        super().__setitem__(key, item)
        _changed(self)

    def update(self, *args, **kwargs):
        super().update(*args, **kwargs)
        _changed(self)

    def setdefault(self, key, default=None):
        out = super().setdefault(key, default)
        _changed(self)
        return out


jax.tree_util.register_pytree_node(WatchedList, lambda items: (list(items), None), lambda _, children: list(children))
jax.tree_util.register_pytree_node(
    WatchedDict,
    lambda items: ([items[k] for k in sorted(items)], sorted(items)),
    lambda keys, children: dict(zip(keys, children)),
)
