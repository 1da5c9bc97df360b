"""``tf.Module``: gradkit's Module, listing its Variables in TensorFlow's order."""

from __future__ import annotations

import functools
import re

from gradkit import _errors
from gradkit._core.variable import Variable
from gradkit.nn.module import Module as _NnModule

from . import _name_scope
from ._checkpoint import deferred, watched_containers


def _flat(value) -> list:
    """The leaves of ``value`` in ``tf.nest.flatten``'s order: dicts by sorted key."""
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in _flat(item)]
    if isinstance(value, dict):
        try:
            keys = sorted(value)
        except TypeError:  # keys of mixed types: TensorFlow refuses them; keep insertion order
            keys = list(value)
        return [leaf for key in keys for leaf in _flat(value[key])]
    return [value]


def _flatten(module, seen: set[int], variables: list, modules: list) -> None:
    """TensorFlow's ``Module._flatten``: this module's own attributes first, by sorted name
    (a Variable or submodule inside a list or dict counts as its attribute's), then each
    submodule found, recursively, in that order. Each object is listed once."""
    found = []
    for key in sorted(vars(module)):
        if key.startswith("_module_"):
            continue
        for leaf in _flat(vars(module)[key]):
            if id(leaf) in seen or not isinstance(leaf, (Variable, _NnModule)):
                continue
            seen.add(id(leaf))
            if isinstance(leaf, Variable):
                variables.append(leaf)
            else:
                modules.append(leaf)
                found.append(leaf)
    for sub in found:
        if isinstance(sub, Module):
            _flatten(sub, seen, variables, modules)
        else:
            # A layer that is not a tf.Module (gradkit.nn, Keras) lists its own in its own order.
            own_vars, own_modules = sub._collect()
            for obj, into in [(v, variables) for v in own_vars] + [(m, modules) for m in own_modules]:
                if id(obj) not in seen:
                    seen.add(id(obj))
                    into.append(obj)


class Module(_NnModule):
    """``tf.Module``: finds its Variables by walking its attributes, as TensorFlow does.

    ``variables``, ``trainable_variables`` and ``submodules`` come in TensorFlow's order:
    the module's own attributes sorted by name (inside a list in list order, inside a dict
    by sorted key), then each submodule's, recursively, in the order they were found.
    """

    def __init__(self, name=None):
        if name is not None and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", str(name)):
            raise _errors.GradkitValueError(
                f"{name!r} is not a valid module name: tf.Module names must be valid Python identifiers, "
                "as TensorFlow requires. Pass letters, digits and underscores, not starting with a digit."
            )
        super().__init__(name)
        # TensorFlow fixes a module's name scope when it is made (inside another's scope: nested).
        self._module_scope = _name_scope.scope_for(self.name)

    def __setattr__(self, name, value):
        super().__setattr__(name, watched_containers.watched(self, value))
        if deferred.waiting():
            deferred.built(self)  # a checkpoint restored before this attribute held its Variable

    @property
    def name_scope(self) -> _name_scope.name_scope:
        """``tf.Module.name_scope``: ``with module.name_scope:`` names new Variables in the module's scope."""
        return _name_scope.name_scope(self._module_scope)

    @classmethod
    def with_name_scope(cls, method):
        """``tf.Module.with_name_scope``: a decorator for a module's methods; the Variables they
        create are named in the module's scope (``'dense/w:0'``), as in TensorFlow."""

        @functools.wraps(method)
        def scoped(self, *args, **kwargs):
            scope = getattr(self, "_module_scope", None) or _name_scope.scope_for(self.name)
            with _name_scope.name_scope(scope):
                return method(self, *args, **kwargs)

        return scoped

    def _collect(self):
        variables: list = []
        modules: list = []
        _flatten(self, {id(self)}, variables, modules)
        return variables, modules
