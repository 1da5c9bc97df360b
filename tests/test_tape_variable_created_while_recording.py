"""A Variable made inside a recording tape from a tensor the tape records (``tf.Variable(a + b)``)
is that value's assignment: nothing cuts the path to ``a`` and ``b`` (SEMANTICS.md: assignment
threads state). Oracles: the pure-JAX rewrite; TensorFlow's None for a parity tape."""

import jax
import numpy as np
import pytest

import gradkit as gk
import gradkit.tf as gtf


def test_a_variable_made_from_a_sum_passes_the_gradient_on():
    a, b = gtf.Variable(1.0), gtf.Variable(2.0)
    with gtf.GradientTape(persistent=True) as tape:
        c = gtf.Variable(a + b)
        loss = c**2
    want = jax.grad(lambda a, b: (a + b) ** 2, (0, 1))(1.0, 2.0)
    np.testing.assert_allclose([g.numpy() for g in tape.gradient(loss, [a, b])], want)
    assert tape.gradient(loss, c) is None  # its entry value was overwritten before any use
    assert float(c.numpy()) == 3.0


def test_a_chain_of_assignments_after_the_creation():
    a = gtf.Variable(2.0)
    with gtf.GradientTape() as tape:
        v = gtf.Variable(a * 3.0)
        v.assign(v * a)
        loss = v**2
    np.testing.assert_allclose(tape.gradient(loss, a).numpy(), jax.grad(lambda a: (3.0 * a * a) ** 2)(2.0))


def test_the_core_tape_too():
    w = gk.Variable(np.array([1.0, -2.0], np.float32))
    with gk.GradientTape() as tape:
        fast = gk.Variable(w * 2.0)
        fast.assign_sub(0.5 * fast)
        loss = gk.numpy.sum(fast**3)
    want = jax.grad(lambda w: jax.numpy.sum((w * 2.0 * 0.5) ** 3))(np.array([1.0, -2.0], np.float32))
    np.testing.assert_allclose(tape.gradient(loss, w), want, rtol=1e-6)


def test_a_parity_tape_cuts_as_tensorflow():
    a = gtf.Variable(1.0)
    with gtf.GradientTape(track_assignments=False) as tape:
        c = gtf.Variable(a * 2.0)
        loss = c**2
    assert tape.gradient(loss, a) is None


def test_parity_tape_matches_tensorflow():
    rtf = pytest.importorskip("tensorflow")
    a = rtf.Variable(1.0)
    with rtf.GradientTape() as tape:
        c = rtf.Variable(a * 2.0)
        loss = c**2
    assert tape.gradient(loss, a) is None  # TensorFlow's creation cuts, as gradkit's parity tape does
