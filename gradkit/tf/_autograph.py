"""``tf.autograph``: the switches code written for TensorFlow's AutoGraph sets.

gradkit's ``tf.function`` has no AutoGraph (it traces the Python function as written; see
``_function.py``), so marking a function not to be converted leaves it as it is, and the
verbosity and loop options have nothing to act on. ``to_graph``/``to_code`` (the converted
source) have no gradkit counterpart and stay missing.

>>> import gradkit.tf as tf
>>> @tf.autograph.experimental.do_not_convert
... def double(x):
...     return x * 2
>>> float(tf.function(double)(tf.constant(3.0)))
6.0
"""

from __future__ import annotations

import enum

from ._namespace import Namespace

_settings = {"verbosity": 0}


def do_not_convert(func=None):
    """``@tf.autograph.experimental.do_not_convert``: the function itself (gradkit converts none)."""
    if func is None:
        return do_not_convert
    return func


def set_verbosity(level, alsologtostdout=False):
    """``tf.autograph.set_verbosity``: kept; gradkit's tracing writes no AutoGraph log."""
    _settings["verbosity"] = int(level)


def trace(*args):
    """``tf.autograph.trace(*args)``: prints the values, as TensorFlow's (Python's print of them)."""
    print(*args)


def set_loop_options(parallel_iterations=None, swap_memory=None, maximum_iterations=None, shape_invariants=None):
    """``tf.autograph.experimental.set_loop_options``: options of AutoGraph's loops; gradkit's
    Python loops are unrolled as they trace, so there is nothing to set."""


class Feature(enum.Enum):
    """``tf.autograph.experimental.Feature``: the AutoGraph conversions ``tf.function`` may take."""

    ALL = "ALL"
    AUTO_CONTROL_DEPS = "AUTO_CONTROL_DEPS"
    ASSERT_STATEMENTS = "ASSERT_STATEMENTS"
    BUILTIN_FUNCTIONS = "BUILTIN_FUNCTIONS"
    EQUALITY_OPERATORS = "EQUALITY_OPERATORS"
    LISTS = "LISTS"
    NAME_SCOPES = "NAME_SCOPES"


def namespace() -> Namespace:
    experimental = Namespace(
        "gradkit.tf.autograph.experimental",
        do_not_convert=do_not_convert,
        set_loop_options=set_loop_options,
        Feature=Feature,
    )
    return Namespace("gradkit.tf.autograph", experimental=experimental, set_verbosity=set_verbosity, trace=trace)
