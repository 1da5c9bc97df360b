"""Static arguments that are equal in Python but mean different things to JAX (``True`` and
``1`` in an index, ``1`` and ``1.0``) record different ops: the tape interns ops by their static
arguments, and a key that compared them by value alone handed the first op to the second call
(``t[1, 1]`` after ``t[True, 1]`` had shape (1, 3)). NumPy is the oracle."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

import gradkit as gk
import gradkit.numpy as gnp

X = np.arange(6, dtype=np.float32).reshape(2, 3)

INDEXES = [
    (True, 1),
    (1, 1),
    (1, True),
    (slice(True, 2), 1),
    (slice(1, 2), 1),
    (None, 1),
    (0, slice(None), None),
    (False, 0),
    (0, 0),
]


def test_indexes_equal_in_python_give_numpy_s_results():
    x = gk.Variable(jnp.asarray(X))
    with gk.GradientTape() as tape:
        t = gnp.sin(x)
        outs = [t[index] for index in INDEXES]
        y = gnp.sum(outs[0]) + gnp.sum(outs[1])  # the (True, 1) row and the (1, 1) element
    for index, out in zip(INDEXES, outs):
        want = np.sin(X)[index]
        assert out.shape == want.shape, index
        np.testing.assert_allclose(np.asarray(out), want, rtol=1e-6)
    want = np.zeros_like(X)
    want[1] += np.cos(X[1])
    want[1, 1] += np.cos(X[1, 1])
    np.testing.assert_allclose(np.asarray(tape.gradient(y, x)), want, rtol=1e-6)


def test_int_and_float_static_arguments_record_different_ops():
    x = gk.Variable(jnp.asarray(X))
    with gk.GradientTape():
        a = gnp.full_like(x, 1)
        b = gnp.full_like(x, 1.0)
        c = gnp.full_like(x, True)
    assert a.dtype == np.float32 and b.dtype == np.float32 and c.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(a), np.ones_like(X))
    i = gk.Variable(jnp.arange(3))
    with gk.GradientTape():
        p = gnp.power(i, 2)
        q = gnp.power(i, 2.0)
    assert np.issubdtype(p.dtype, np.integer) and np.issubdtype(q.dtype, np.floating)
