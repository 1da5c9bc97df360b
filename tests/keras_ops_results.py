"""Comparing keras.ops results of gradkit and real Keras: as (dtype name, shape, values) trees."""

import numpy as np


def case_ids(cases):
    """``name-1``, ``name-2``, ... for parametrized cases whose first item is the op's name."""
    seen: dict = {}
    out = []
    for name, *_ in cases:
        seen[name] = seen.get(name, 0) + 1
        out.append(f"{name}-{seen[name]}")
    return out


def plain(x, standardize):
    """A result as nested tuples of (dtype name, shape, values), or the Python value itself."""
    if isinstance(x, (tuple, list)):
        return tuple(plain(v, standardize) for v in x)
    if hasattr(x, "dtype") and hasattr(x, "shape"):
        dtype = standardize(x.dtype)
        # gradkit has no 64-bit types (JAX without x64): Keras' int64/float64 are int32/float32 there.
        dtype = {"int64": "int32", "float64": "float32"}.get(dtype, dtype)
        return dtype, tuple(int(d) for d in x.shape), np.asarray(x)
    return x


def assert_same(ours, theirs, where="", tol=2e-5):
    """Same structure, dtypes and shapes; values equal (floats within ``tol``)."""
    if isinstance(theirs, tuple) and not (len(theirs) == 3 and isinstance(theirs[0], str)):
        assert isinstance(ours, tuple) and len(ours) == len(theirs), (where, ours, theirs)
        for i, (a, b) in enumerate(zip(ours, theirs)):
            assert_same(a, b, f"{where}[{i}]", tol)
        return
    (dtype, shape, value), (want_dtype, want_shape, want) = ours, theirs
    assert (dtype, shape) == (want_dtype, want_shape), where
    if want.dtype.kind in "fc":
        wide = np.complex128 if want.dtype.kind == "c" else np.float64
        np.testing.assert_allclose(value.astype(wide), want.astype(wide), rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(value, want)


def assert_matches_keras(case, ours):
    """``(name, args, kwargs)`` called on ``ours`` (gradkit.tf.keras.ops) and on real Keras' ops:
    the same results (skipped where Keras is not installed)."""
    import pytest

    keras = pytest.importorskip("keras")
    name, args, kwargs = case
    want = plain(getattr(keras.ops, name)(*args, **kwargs), keras.backend.standardize_dtype)
    got = plain(getattr(ours, name)(*args, **kwargs), keras.backend.standardize_dtype)
    assert_same(got, want, name)
