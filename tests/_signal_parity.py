"""Running a ``tf.signal`` program under real TensorFlow and gradkit.tf, in float32 or float64.

As ``test_tf_parity.run_both`` (values, shapes, None-ness, strings such as dtype names, and
exception classes), but each array is compared with a tolerance relative to its largest entry:
a transform sums many terms, so an entry that nearly cancels carries the rounding of its
neighbours' size. float64 outputs are compared to 1e-10 of that size, float32 ones to 2e-5.
"""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")

import gradkit.tf as gtf  # noqa: E402

TOLERANCE = {"float32": 2e-5, "float64": 1e-10}


def _np(x):
    if x is None or isinstance(x, (str, type)):
        return x
    if isinstance(x, (list, tuple)):
        return [_np(e) for e in x]
    return np.asarray(x.numpy() if hasattr(x, "numpy") else x)


def compare(want, got, tolerance):
    if want is None or got is None:
        assert want is None and got is None, (want, got)
    elif isinstance(want, list):
        assert isinstance(got, list) and len(want) == len(got), (want, got)
        for w, g in zip(want, got):
            compare(w, g, tolerance)
    elif isinstance(want, (str, type)):
        assert want == got
    else:
        assert want.shape == got.shape, (want.shape, got.shape)
        if want.dtype in (np.float16, np.float32, np.complex64):  # a float32 output of a float64 program
            tolerance = max(tolerance, TOLERANCE["float32"])
        scale = float(np.max(np.abs(want), initial=1.0))
        np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance * scale)


def outputs(program, tf, dtype):
    try:
        return _np(program(tf, dtype))
    except Exception as error:  # compared by class
        return error


def run_both(program, dtype="float32"):
    """``program(tf, dtype)`` under both modules, compared; gradkit's outputs."""
    want, got = outputs(program, tf_real, dtype), outputs(program, gtf, dtype)
    if isinstance(want, Exception) or isinstance(got, Exception):
        assert isinstance(want, Exception) and isinstance(got, Exception), (want, got)
        builtin = next(c for c in type(want).__mro__ if c.__module__ == "builtins")
        assert isinstance(got, builtin), (want, got)
        assert str(got).startswith("[gradkit]"), got
        return got
    compare(want, got, TOLERANCE[dtype])
    return got
