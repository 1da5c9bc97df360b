"""The process-wide caches stay bounded, and a forgotten entry is rebuilt correctly."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gradkit as gk
from gradkit._tape import bounded, derivatives, graph

gnp = gk.numpy


def test_bounded_dict_forgets_its_oldest_entries():
    d = bounded.BoundedDict(10)
    for i in range(25):
        d[i] = i
        assert len(d) <= 10
    assert 24 in d and 0 not in d
    assert d.setdefault(24, "other") == 24 and d.setdefault(100, "new") == "new" and len(d) <= 10


@pytest.fixture
def small_caches(monkeypatch):
    # Fresh small caches: the process-wide ones may already hold every entry this test
    # needs (from tests run before it in this process), and a cache is trimmed on insert.
    monkeypatch.setattr(derivatives, "programs", bounded.BoundedDict(4))
    monkeypatch.setattr(graph, "_sids", bounded.BoundedDict(50))
    monkeypatch.setattr(graph, "_aval_cache", bounded.BoundedDict(20))


def test_many_structures_keep_the_caches_bounded_and_gradients_exact(small_caches):
    # Graphs whose length grows with the step: each one a new structure.
    w = gk.Variable(np.array([0.3, -0.7], np.float32))

    def pure(v, n):
        for _ in range(n):
            v = jnp.sin(v) * 1.5
        return jnp.sum(v)

    for n in [*range(1, 13), 3, 1]:  # 3 and 1 again: forgotten by then, so rebuilt
        with gk.GradientTape() as tape:
            h = w
            for _ in range(n):
                h = gnp.sin(h) * 1.5
            y = gnp.sum(h)
        np.testing.assert_allclose(tape.gradient(y, w), jax.grad(pure)(w.value, n), rtol=1e-5)
        assert len(derivatives.programs) <= 4
        assert len(graph._sids) <= 50
        assert len(graph._aval_cache) <= 20
