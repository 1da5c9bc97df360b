"""Whether user code runs where TensorFlow would run it in a graph: a ``tf.function`` being traced,
or a ``tf.data`` pipeline's function (TensorFlow traces those too; gradkit runs them eagerly, one
element at a time). Keras' preprocessing layers read this: in a graph they take their inputs in
their compute dtype (a uint8 image becomes float32), where an eager call keeps the input's dtype.
"""

from __future__ import annotations

import contextlib
import threading

from . import _name_scope

_state = threading.local()


@contextlib.contextmanager
def pipeline_function():
    """While a ``tf.data`` pipeline's function runs."""
    _state.depth = getattr(_state, "depth", 0) + 1
    try:
        yield
    finally:
        _state.depth -= 1


def like_graph() -> bool:
    """Whether TensorFlow would be running this code in a graph."""
    return _name_scope.in_graph() or getattr(_state, "depth", 0) > 0
