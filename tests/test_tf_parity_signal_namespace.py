"""``gradkit.tf.signal`` has TensorFlow 2.21's ``tf.signal`` names, each with TensorFlow's
argument names and defaults (a default window function compared by its name)."""

import inspect

import numpy as np
import pytest

import gradkit.tf as gtf


def _public(namespace):
    return sorted(n for n in dir(namespace) if not n.startswith("_"))


def _signature(function):
    out = []
    for parameter in inspect.signature(function).parameters.values():
        default = parameter.default
        if callable(default):
            default = default.__name__
        elif hasattr(default, "name") and not isinstance(default, str):  # a dtype
            default = default.name
        elif isinstance(default, np.dtype):
            default = default.name
        out.append((parameter.name, default))
    return out


def test_the_names_are_tensorflows():
    tf = pytest.importorskip("tensorflow")
    assert [n for n in vars(gtf.signal) if not n.startswith("_")] != []
    assert sorted(n for n in vars(gtf.signal) if not n.startswith("_")) == _public(tf.signal)


def test_argument_names_and_defaults_are_tensorflows():
    tf = pytest.importorskip("tensorflow")
    for name in _public(tf.signal):
        assert _signature(getattr(gtf.signal, name)) == _signature(getattr(tf.signal, name)), name


def test_a_missing_name_says_where_to_look():
    with pytest.raises(AttributeError, match=r"^\[gradkit\] gradkit\.tf\.signal has no 'stfft'"):
        gtf.signal.stfft  # noqa: B018


def test_an_op_error_names_the_signal_op():
    with pytest.raises(ValueError, match=r"^\[gradkit\] tf\.signal\.overlap_and_add takes frames of rank 2"):
        gtf.signal.overlap_and_add(gtf.ones([4]), 2)
