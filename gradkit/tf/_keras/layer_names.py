"""Keras 3's default layer names: the class name in Keras' snake case, numbered when taken
(``max_pooling1d``, ``max_pooling1d_1``, ``p_re_lu``, ``up_sampling2d``)."""

from __future__ import annotations

import re

from gradkit.nn.layer import unique_name


def keras_snake(name: str) -> str:
    """Keras' ``to_snake_case``, rule for rule (so ``PReLU`` is ``p_re_lu``, as Keras names it)."""
    name = re.sub(r"\W+", "", name)
    name = re.sub("(.)([A-Z][a-z]+)", r"\1_\2", name)
    name = re.sub("([a-z])([A-Z])", r"\1_\2", name)
    return name.lower()


def default_name(layer, name):
    """``name`` as given, else the next free Keras name for ``layer``'s class."""
    return name if name is not None else unique_name(keras_snake(type(layer).__name__))


class KerasNamedLayer:
    """A mixin for layers without weights: Keras' default name, and built from the start."""

    def __init__(self, name=None, **kwargs):
        super().__init__(name=default_name(self, name), **kwargs)
        self.built = True
