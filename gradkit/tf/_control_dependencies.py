"""``tf.control_dependencies``: a context whose operations run after ``control_inputs``.

In gradkit nothing needs it to run: a ``tf.debugging`` assertion checks eagerly at once, and
inside ``tf.function`` its runtime check is part of the compiled program and raises from the
call whatever the results depend on, before any assignment is written back. So the context
orders nothing; it takes what TensorFlow takes (an iterable of tensors, the None an assertion
returns in gradkit where TensorFlow's returns an operation, or None to clear).

>>> import gradkit.tf as tf
>>> x = tf.constant([1.0, 2.0])
>>> with tf.control_dependencies([tf.debugging.assert_positive(x)]):
...     y = tf.identity(x)
>>> y.numpy().tolist()
[1.0, 2.0]
"""

from __future__ import annotations

import contextlib

from gradkit import _errors


@contextlib.contextmanager
def control_dependencies(control_inputs):
    """``tf.control_dependencies(control_inputs)``; see the module docstring."""
    if control_inputs is not None:
        try:
            iter(control_inputs)
        except TypeError:
            raise _errors.GradkitTypeError(
                f"tf.control_dependencies takes a list of tensors or operations (or None), but got "
                f"{_errors.describe_value(control_inputs)}, which is not iterable (TensorFlow raises TypeError too). "
                "Wrap it in a list: tf.control_dependencies([x])."
            ) from None
    yield
