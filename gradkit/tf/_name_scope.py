"""``tf.name_scope``: the scope new Variables' names start with (one thread-local stack).

Eagerly it behaves as TensorFlow 2's eager ``name_scope``: any string is a name, names are
not made unique, ``""`` goes back to the root and a name ending in ``/`` is a whole scope.
While a ``tf.function`` is traced it behaves as TensorFlow's graph scope does: the scope
starts at the root, a name is checked against TensorFlow's pattern, and a name used again
at the same place gets ``_1``, ``_2``, ...

>>> import gradkit.tf as tf
>>> with tf.name_scope("block") as scope:
...     with tf.name_scope("inner") as inner:
...         v = tf.Variable(1.0, name="w")
>>> scope, inner, v.name
('block/', 'block/inner/', 'block/inner/w:0')
"""

from __future__ import annotations

import contextlib
import re
import threading

from gradkit import _errors

# TensorFlow's (ops.py): a scope at the root must start as an op name does.
_ROOT_NAME = re.compile(r"^[A-Za-z0-9.][A-Za-z0-9_.\\/>-]*$")
_NESTED_NAME = re.compile(r"^[A-Za-z0-9_.\\/>-]*$")


class _Scopes(threading.local):
    def __init__(self):
        self.prefix = ""  # the current scope: '' or 'outer/inner/'
        self.used = None  # while a tf.function is traced: its graph's names in use (lower case -> count)
        self.outer = []  # the (prefix, used) each tf.function trace in progress started from


_scopes = _Scopes()


def current() -> str:
    """The current scope (``'outer/inner/'``, or ``''`` at the root)."""
    return _scopes.prefix


def _check(name: str) -> None:
    pattern, where = (_NESTED_NAME, "scope") if _scopes.prefix else (_ROOT_NAME, "root scope")
    if not pattern.match(name):
        raise _errors.GradkitValueError(
            f"{name!r} is not a valid {where} name inside a tf.function: TensorFlow's graph scopes must match "
            f"{pattern.pattern}, and TensorFlow refuses it too. Use letters, digits, '.', '_', '-' and '/'."
        )


def _unique(name: str) -> str:
    """TensorFlow's ``Graph.unique_name``: ``name``, or ``name_1``, ... when already in use."""
    used = _scopes.used
    if _scopes.prefix:
        name = _scopes.prefix + name
    key = name.lower()
    count = used.get(key, 0)
    used[key] = count + 1
    if count == 0:
        return name
    base = key
    while key in used:
        key = f"{base}_{count}"
        count += 1
    used[key] = 1
    return f"{name}_{count - 1}"


def scope_for(name: str) -> str:
    """The scope ``with tf.name_scope(name)`` enters here (inside a trace: the name is then in use)."""
    if _scopes.used is not None and name:
        _check(name)
    if not name:
        return ""
    if name.endswith("/"):
        return name
    if _scopes.used is not None:
        return _unique(name) + "/"
    return _scopes.prefix + name + "/"


def variable_name(name: str) -> str:
    """A new ``tf.Variable``'s name (before ``:0``): its name in the current scope.

    As in TensorFlow, a name ending in ``/`` is taken whole, and inside a ``tf.function`` the
    name is checked and counts as used, though the Variable keeps it as given.
    """
    if name.endswith("/"):
        return name[:-1]
    if _scopes.used is not None:
        _check(name)
        _unique(name)
    return _scopes.prefix + name


class name_scope:  # noqa: N801  (TensorFlow's name)
    """``tf.name_scope(name)``: ``with tf.name_scope("block") as scope:`` gives ``'block/'``, and
    Variables made inside are named ``'block/...'``. One object may be entered again, nested too."""

    __slots__ = ("_name", "_outer")

    def __init__(self, name):
        if not isinstance(name, str):
            raise _errors.GradkitValueError(
                f"tf.name_scope got {name!r} ({type(name).__name__}): the name for name_scope must be a string, "
                "as in TensorFlow. Pass a str ('' for the root scope)."
            )
        self._name = name
        self._outer: list[str] = []

    @property
    def name(self) -> str:
        return self._name

    def __enter__(self) -> str:
        scope = scope_for(self._name)
        self._outer.append(_scopes.prefix)
        _scopes.prefix = scope
        return scope

    def __exit__(self, *exc) -> bool:
        _scopes.prefix = self._outer.pop()
        return False


def in_graph() -> bool:
    """Whether a ``tf.function`` is being traced in this thread (its graph's scopes are active)."""
    return _scopes.used is not None


class graph:
    """While a ``tf.function`` is traced: a fresh graph's scopes (at the root, names unique in it)."""

    __slots__ = ("_outer",)

    def __enter__(self):
        self._outer = (_scopes.prefix, _scopes.used)
        _scopes.outer.append(self._outer)
        _scopes.prefix, _scopes.used = "", {}

    def __exit__(self, *exc) -> None:
        _scopes.outer.pop()
        _scopes.prefix, _scopes.used = self._outer


@contextlib.contextmanager
def outside_graph():
    """While a ``tf.function`` is traced: the eager context around the outermost trace, keeping the
    current scope, as TensorFlow's ``init_scope`` enters the same scope there."""
    inner = _scopes.used
    _scopes.used = _scopes.outer[0][1]
    try:
        yield
    finally:
        _scopes.used = inner
