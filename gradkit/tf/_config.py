"""``tf.config.run_functions_eagerly``: make every ``tf.function`` call its Python function
directly (no tracing, no compilation), as TensorFlow does, for debugging with prints,
``.numpy()`` and Python control flow on values."""

from __future__ import annotations

_state = {"eager": False}


def run_functions_eagerly(run_eagerly) -> None:
    """``tf.config.run_functions_eagerly(True)``: ``tf.function`` calls run the Python
    function eagerly until it is set back to False."""
    _state["eager"] = bool(run_eagerly)


def functions_run_eagerly() -> bool:
    return _state["eager"]
