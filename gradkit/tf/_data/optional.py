"""``tf.experimental.Optional``: a value that may be missing, and ``iterator.get_next_as_optional()``.

``Optional.from_value(x)`` holds ``x`` (its lists made tensors, as tf.data makes them);
``Optional.empty(element_spec)`` holds nothing. ``has_value()`` is a boolean tensor and
``get_value()`` raises TensorFlow's InvalidArgumentError on an empty one. Inside a
``tf.function``, an optional read from an iterator made outside has a traced ``has_value()``
(the element is read when the compiled program runs), so it is tested with ``tf.cond``, as in
TensorFlow; its ``get_value()`` there gives zeros when there was no element.

>>> import gradkit.tf as tf
>>> it = iter(tf.data.Dataset.range(1))
>>> first, second = it.get_next_as_optional(), it.get_next_as_optional()
>>> bool(first.has_value()), int(first.get_value()), bool(second.has_value())
(True, 0, False)
"""

from __future__ import annotations

import jax

from gradkit import _errors
from gradkit._tape.tensor import Tensor

from .._convert import convert, wrap
from .._function import TensorSpec


def _is_leaf(x) -> bool:
    # A list is one tensor, as tf.data reads it (tuples and dicts are structure).
    return isinstance(x, (Tensor, TensorSpec, list))


class Optional:
    """``tf.experimental.Optional``; see the module docstring."""

    def __init__(self, value, element_spec, has_value):
        self._value = value
        self._element_spec = element_spec
        self._has_value = has_value  # a Python bool, or a traced boolean tensor

    @staticmethod
    def from_value(value) -> Optional:
        """An Optional holding ``value`` (a tensor or a structure of them)."""
        leaves, structure = jax.tree_util.tree_flatten(value, is_leaf=_is_leaf)
        tensors = [wrap(convert(leaf)) for leaf in leaves]
        specs = [TensorSpec(tuple(t.shape), t.dtype) for t in tensors]
        return Optional(
            jax.tree_util.tree_unflatten(structure, tensors), jax.tree_util.tree_unflatten(structure, specs), True
        )

    @staticmethod
    def empty(element_spec) -> Optional:
        """An Optional of ``element_spec`` holding nothing."""
        return Optional(None, element_spec, False)

    @property
    def element_spec(self):
        return self._element_spec

    def has_value(self, name=None):
        """Whether it holds a value: a boolean tensor."""
        if isinstance(self._has_value, bool):
            return wrap(convert(self._has_value))
        return self._has_value

    def get_value(self, name=None):
        """The value held; TensorFlow's InvalidArgumentError when there is none."""
        if self._has_value is False:
            raise _errors.GradkitInvalidArgumentError(
                "The given optional does not have a value (TensorFlow's error). Test optional.has_value() first "
                "(with tf.cond inside a tf.function)."
            )
        return self._value

    def __repr__(self) -> str:
        return f"<gradkit.tf.experimental.Optional of {self._element_spec!r}>"


class OptionalSpec:
    """``tf.OptionalSpec(element_spec)``: the type of an Optional."""

    def __init__(self, element_spec):
        self.element_spec = element_spec

    @staticmethod
    def from_value(value) -> OptionalSpec:
        return OptionalSpec(value.element_spec)

    def __eq__(self, other):
        return isinstance(other, OptionalSpec) and self.element_spec == other.element_spec

    def __hash__(self):
        return hash(repr(self.element_spec))

    def __repr__(self) -> str:
        return f"OptionalSpec({self.element_spec!r})"
