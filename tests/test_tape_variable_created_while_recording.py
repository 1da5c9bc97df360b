"""A Variable made inside a recording tape from a tensor the tape records (``tf.Variable(a + b)``)
threads that value on as an assignment does: nothing cuts the path to ``a`` and ``b``
(SEMANTICS.md: assignment threads state). The value it was created with is its entry value, so
the gradient with respect to the Variable itself exists too, as in TensorFlow. Oracles: the
pure-JAX rewrite, derivatives by hand, TensorFlow for a parity tape."""

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
    np.testing.assert_allclose(tape.gradient(loss, c).numpy(), 2 * (1.0 + 2.0))  # d c^2 / dc at c = a + b
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


def _grads(tf, **kw):
    x = tf.constant(2.0)
    with tf.GradientTape(persistent=True, **kw) as tape:
        tape.watch(x)
        v = tf.Variable(x * 3.0)  # v = 6
        y = v * v
    return [None if g is None else float(g) for g in tape.gradient(y, [v, x])]


def test_created_variable_and_its_history_both_have_gradients():
    # y = v^2 with v = 3x: dy/dv = 2v = 12, dy/dx = 2v * 3 = 36.
    assert _grads(gtf) == [12.0, 36.0]


def test_parity_tape_gradient_for_the_created_variable_matches_tensorflow():
    assert _grads(gtf, track_assignments=False) == [12.0, None]
    tf = pytest.importorskip("tensorflow")
    assert _grads(tf) == [12.0, None]


def test_assigned_after_creation_chains_through_the_assignment():
    x = gtf.constant(2.0)
    with gtf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        v = gtf.Variable(x * 3.0)
        v.assign(v * 2.0)  # v = 12 = 6x
        y = v * v
    # y = (2 v0)^2, v0 = 3x: dy/dv0 = 8 v0 = 48; dy/dx = 8 v0 * 3 = 144.
    np.testing.assert_allclose([float(g) for g in tape.gradient(y, [v, x])], [48.0, 144.0])
    assert float(v.numpy()) == 12.0


def test_nested_tapes_differentiate_the_inner_gradient():
    x = gtf.constant(2.0)
    with gtf.GradientTape(persistent=True) as outer:
        outer.watch(x)
        with gtf.GradientTape() as inner:
            inner.watch(x)
            v = gtf.Variable(x * 3.0)
            y = v * v * v
        g = inner.gradient(y, v)  # 3 v^2 = 108
    # g = 3 v^2 = 27 x^2: dg/dx = 54 x = 108; dg/dv = 6 v = 36.
    np.testing.assert_allclose(
        [float(g), float(outer.gradient(g, x)), float(outer.gradient(g, v))], [108.0, 108.0, 36.0]
    )
