"""A slice assignment that covers the whole Variable (``v[:]``, ``v[...]``, ``v[:, :]``) replaces its
value as ``v.assign`` does: the gradient with respect to the Variable's entry value is None (zeros
under UnconnectedGradients.ZERO), and the assigned value's gradient is exact. Oracles: the same
program written with ``v.assign`` and jax.grad of the pure rewrite."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gradkit as gk
import gradkit.tf as gtf


@pytest.mark.parametrize("index", [slice(None), Ellipsis, (slice(None), slice(None))], ids=["[:]", "[...]", "[:, :]"])
def test_a_whole_slice_assignment_is_an_assignment(index):
    x = gtf.Variable([0.3, 0.7])
    v = gtf.Variable([[1.0, 1.0], [2.0, 2.0]])
    with gtf.GradientTape(persistent=True) as tape:
        v[index].assign(gtf.stack([x, x]) * 2.0)
        loss = gtf.reduce_sum(v * v)
    assert tape.gradient(loss, v) is None
    zeros = tape.gradient(loss, v, unconnected_gradients=gtf.UnconnectedGradients.ZERO)
    np.testing.assert_array_equal(zeros.numpy(), np.zeros((2, 2)))
    expected = jax.grad(lambda x: jnp.sum((jnp.stack([x, x]) * 2.0) ** 2))(jnp.array([0.3, 0.7]))
    np.testing.assert_allclose(tape.gradient(loss, x).numpy(), expected, rtol=1e-6)


def test_a_whole_slice_assignment_under_gk_grad_and_gk_jit():
    w = gk.Variable(jnp.ones(3))

    def f(a):
        w[:].assign(a * 3.0)
        return jnp.sum(w.value**2)

    expected = jax.grad(lambda a: jnp.sum(jnp.broadcast_to(a * 3.0, (3,)) ** 2))(jnp.float32(1.0))
    np.testing.assert_allclose(gk.grad(f)(jnp.float32(1.0)), expected)
    np.testing.assert_allclose(gk.jit(f)(jnp.float32(2.0)), 108.0)  # 3 * 6^2
    np.testing.assert_array_equal(np.asarray(w.value), [6.0, 6.0, 6.0])
