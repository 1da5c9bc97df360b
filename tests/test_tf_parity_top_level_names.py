"""gradkit.tf's top level has only names TensorFlow's has: tf.log, tf.reduce_std and
tf.reduce_variance (TensorFlow has them under tf.math only) answer as a missing name does,
and dir() lists no internal helpers."""

from __future__ import annotations

import types

import numpy as np
import pytest

import gradkit.tf as gtf

MATH_ONLY = ("log", "reduce_std", "reduce_variance")


@pytest.mark.parametrize("name", MATH_ONLY)
def test_math_only_names_are_missing_at_the_top_level(name):
    with pytest.raises(AttributeError, match=r"^\[gradkit\] gradkit\.tf has no '" + name + "'"):
        getattr(gtf, name)
    assert name not in dir(gtf) and name not in gtf.__all__
    assert callable(getattr(gtf.math, name))


def test_the_math_names_compute():
    x = np.array([1.0, 2.0, 4.0], np.float32)
    np.testing.assert_allclose(gtf.math.log(x).numpy(), np.log(x), rtol=1e-6)
    np.testing.assert_allclose(gtf.math.reduce_std(x).numpy(), np.std(x), rtol=1e-6)
    np.testing.assert_allclose(gtf.math.reduce_variance(x).numpy(), np.var(x), rtol=1e-6)


def test_dir_lists_no_internal_names():
    public = [n for n in dir(gtf) if not n.startswith("_")]
    assert "Namespace" not in public and "missing" not in public
    modules = {n for n in public if isinstance(getattr(gtf, n), types.ModuleType)}
    assert modules <= {"keras", "dtypes"}  # TensorFlow has both as modules too


def test_every_public_name_is_one_tensorflow_has():
    tf = pytest.importorskip("tensorflow")
    for name in MATH_ONLY:
        assert not hasattr(tf, name) and hasattr(tf.math, name)
    extra = {n for n in dir(gtf) if not n.startswith("_")} - set(dir(tf))
    assert not extra, sorted(extra)
