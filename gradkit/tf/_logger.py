"""``tf.get_logger()``: Python's logger named ``"tensorflow"``, the one TensorFlow logs to.

Ported scripts quiet TensorFlow with ``tf.get_logger().setLevel("ERROR")``; gradkit logs
nothing there itself, so the call keeps working and changes nothing else.

>>> import gradkit.tf as tf
>>> tf.get_logger().name
'tensorflow'
"""

from __future__ import annotations

import logging


def get_logger() -> logging.Logger:
    """``tf.get_logger()``: ``logging.getLogger("tensorflow")``."""
    return logging.getLogger("tensorflow")
