"""``Module``: a container that finds its Variables by walking its attributes."""

from __future__ import annotations

import re

from gradkit._core.variable import Variable


def _walk(obj, seen: set[int], variables: list, modules: list, top: bool):
    """Depth-first over attributes, lists, tuples and dicts; each object once (by identity)."""
    if id(obj) in seen:
        return
    if isinstance(obj, Variable):
        seen.add(id(obj))
        variables.append(obj)
    elif isinstance(obj, Module):
        seen.add(id(obj))
        if not top:
            modules.append(obj)
        for key, value in vars(obj).items():
            if not key.startswith("_module_"):
                _walk(value, seen, variables, modules, False)
    elif isinstance(obj, (list, tuple)):
        for value in obj:
            _walk(value, seen, variables, modules, False)
    elif isinstance(obj, dict):
        for value in obj.values():
            _walk(value, seen, variables, modules, False)


class Module:
    """Base class of layers and models: ``.variables``, ``.trainable_variables``, ``.submodules``.

    Variables are found by walking the attributes (lists, tuples, dicts and submodules
    included). A Variable reached twice is listed once, so its gradient is one entry.

    >>> import gradkit as gk
    >>> class Affine(Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.w = gk.Variable(2.0, name="w")
    ...         self.parts = [self.w, {"b": gk.Variable(1.0, name="b")}]
    ...         self.count = gk.Variable(0, name="count", trainable=False)
    >>> m = Affine()
    >>> [v.name for v in m.variables], [v.name for v in m.trainable_variables]
    (['w', 'b', 'count'], ['w', 'b'])
    """

    def __init__(self, name: str | None = None):
        self._module_name = name if name is not None else _snake(type(self).__name__)

    @property
    def name(self) -> str:
        return getattr(self, "_module_name", _snake(type(self).__name__))

    def _collect(self):
        variables: list = []
        modules: list = []
        _walk(self, set(), variables, modules, True)
        return variables, modules

    @property
    def variables(self) -> tuple:
        return tuple(self._collect()[0])

    @property
    def trainable_variables(self) -> tuple:
        return tuple(v for v in self._collect()[0] if v.trainable)

    @property
    def non_trainable_variables(self) -> tuple:
        return tuple(v for v in self._collect()[0] if not v.trainable)

    @property
    def submodules(self) -> tuple:
        return tuple(self._collect()[1])


def _snake(name: str) -> str:
    """TensorFlow's module names: a new word at a capital after a lowercase letter or digit, or at
    the last capital of a run that starts a word (``MLPBlock`` is ``mlp_block``)."""
    return re.sub(r"((?<=[a-z0-9])[A-Z]|(?!^)[A-Z](?=[a-z]))", r"_\1", name).lower()
