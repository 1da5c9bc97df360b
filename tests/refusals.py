"""Shared checks that an input is refused with a ``[gradkit]`` error (no TensorFlow needed)."""

from __future__ import annotations

import pytest

import gradkit as gk


def assert_gradkit_refusal(call, error, prefix: str):
    """``call()`` raises ``error``, a gradkit error whose message starts with ``[gradkit] prefix``."""
    with pytest.raises(error, match=r"^\[gradkit\] " + prefix) as info:
        call()
    assert isinstance(info.value, gk.GradkitError)
    return info.value


def assert_refused_like_tensorflow(call, tf_real, gtf, prefix: str):
    """``call(tf)`` raises under TensorFlow and under gradkit.tf, gradkit's error deriving from the
    builtin class of TensorFlow's (Exception for its InvalidArgumentError)."""
    with pytest.raises(Exception) as tf_error:
        call(tf_real)
    mine = assert_gradkit_refusal(lambda: call(gtf), Exception, prefix)
    builtin = next(c for c in type(tf_error.value).__mro__ if c.__module__ == "builtins")
    assert isinstance(mine, builtin)
