"""``Layer``: a Module that builds its Variables lazily on its first call."""

from __future__ import annotations

import collections
import itertools

from gradkit import _errors
from gradkit._core.variable import Variable

from . import initializers
from .module import Module, _snake

_name_counts: collections.defaultdict = collections.defaultdict(itertools.count)


def unique_name(base: str) -> str:
    """'dense', 'dense_1', 'dense_2', ... (Keras' naming)."""
    n = next(_name_counts[base])
    return base if n == 0 else f"{base}_{n}"


def reset_unique_names() -> None:
    """Start every name's count again (``tf.keras.backend.clear_session``): the next is 'dense'."""
    _name_counts.clear()


class Layer(Module):
    """Subclasses implement ``build(input_shape)`` and ``call(x, **kwargs)``."""

    def __init__(self, name: str | None = None):
        super().__init__(name if name is not None else unique_name(_snake(type(self).__name__)))
        self.built = False

    def add_weight(self, name: str, shape, initializer="zeros", trainable: bool = True, dtype="float32") -> Variable:
        value = initializers.get(initializer)(initializers.next_key(), tuple(shape), dtype)
        return self._make_variable(value, name, trainable)

    def _make_variable(self, value, name: str, trainable: bool) -> Variable:
        # gradkit.tf overrides this to make TF-named Variables ('dense/kernel:0').
        return Variable(value, name=f"{self.name}/{name}", trainable=trainable)

    def build(self, input_shape) -> None:
        """Make the weights for inputs of ``input_shape``; a layer without weights makes none, and is
        built once this is called (as a Keras layer is)."""
        self.built = True

    def _needs_features(self, input_shape) -> None:
        """A clear error for a scalar input to a layer whose weights follow the last axis."""
        if len(input_shape) == 0:
            raise _errors.GradkitValueError(
                f"{type(self).__name__} '{self.name}' needs inputs with a last (feature) axis, but got a scalar "
                "(shape ()). Pass an array of shape (batch, features), e.g. x.reshape(1, -1)."
            )

    def __call__(self, x, *args, **kwargs):
        shape = getattr(x, "shape", None)
        if shape is None:
            # A Python list or number has no shape: building from () would fail deep in build()
            # with an IndexError that names neither the layer nor the input (and jax.numpy
            # refuses lists anyway, as it does everywhere).
            raise _errors.GradkitTypeError(
                f"{type(self).__name__} '{self.name}' takes an array (a jax or NumPy array, a tensor, a "
                f"Variable), but got {type(x).__name__}. Convert it first: layer(jnp.asarray(x))."
            )
        if not self.built:
            self.build(tuple(shape))
            self.built = True
        return self.call(x, *args, **kwargs)
