"""A functionalized imperative step composes with jax.lax.scan (and jax.grad through it)."""

import jax
import jax.numpy as jnp
import numpy as np

import gradkit as gk

X = np.array([[1.0, 2.0], [0.5, -1.0], [2.0, 0.3]], np.float32)
Y = np.array([1.0, -0.5, 2.0], np.float32)


def _loss(w):
    return jnp.mean((X @ w - Y) ** 2)


def test_scan_over_a_functionalized_sgd_step_and_its_hypergradient():
    w = gk.Variable(jnp.array([0.1, -0.2]), name="w")
    steps = gk.Variable(0, name="steps")  # an integer counter threaded through the state

    def sgd_step(lr):
        g = gk.grad(lambda: _loss(w.value), wrt=w)()
        w.assign_sub(lr * g)
        steps.assign_add(1)
        return _loss(w.value)

    step = gk.functionalize(sgd_step)

    def train(lr, state):
        state, losses = jax.lax.scan(lambda s, _: step(s, lr)[::-1], state, None, length=5)
        return losses[-1], state

    state0 = gk.State.of([w, steps])
    (final, state), dlr = jax.value_and_grad(train, has_aux=True)(jnp.float32(0.1), state0)

    def oracle(lr):
        wv = jnp.array([0.1, -0.2])
        for _ in range(5):
            wv = wv - lr * jax.grad(_loss)(wv)
        return _loss(wv), wv

    (want_loss, want_w), want_dlr = jax.value_and_grad(oracle, has_aux=True)(jnp.float32(0.1))
    np.testing.assert_allclose(final, want_loss, rtol=1e-5)
    np.testing.assert_allclose(state[w], want_w, rtol=1e-5)
    np.testing.assert_allclose(dlr, want_dlr, rtol=1e-4)
    assert int(state[steps]) == 5
    np.testing.assert_allclose(w.numpy(), [0.1, -0.2])  # nothing changed until a commit
    state.commit()
    np.testing.assert_allclose(w.numpy(), want_w, rtol=1e-5)
    assert int(steps.numpy()) == 5


def test_loop_over_a_functionalized_body_inside_gradkit_transforms():
    # The way a loop body assigns Variables under gk.grad / gk.jit: the body is pure over a State
    # carry, and the final State is committed inside the transform (never to the live Variables
    # under gk.grad, after the call under gk.jit).
    w = gk.Variable(jnp.array([0.5, -1.0]), name="w")
    step = gk.functionalize(lambda lr: w.assign(w - lr * 2.0 * w))

    def loss(lr):
        state = jax.lax.fori_loop(0, 3, lambda i, s: step(s, lr)[1], gk.State.of([w]))
        state.commit()
        return jnp.sum(w.value**2)

    def pure(w0, lr):
        return jnp.sum((w0 * (1.0 - 2.0 * lr) ** 3) ** 2)

    w0 = np.array([0.5, -1.0], np.float32)
    got = gk.grad(loss, argnums=0, wrt=w)(0.1)
    want = jax.grad(pure, argnums=(1, 0))(w0, 0.1)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-5)
    np.testing.assert_array_equal(w.numpy(), w0)
    np.testing.assert_allclose(gk.jit(loss)(0.1), pure(w0, 0.1), rtol=1e-5)
    np.testing.assert_allclose(w.numpy(), w0 * 0.8**3, rtol=1e-5)
