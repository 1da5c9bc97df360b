"""custom_gradient (TensorFlow's decorator, seed 001) and stop_gradient."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _oracles import WITH_AND_WITHOUT_JIT, assert_close, maybe_jit

import gradkit as gk


def clip_by_norm(t, clip_norm):
    """tf.clip_by_norm, in jnp."""
    norm = jnp.sqrt(jnp.sum(t**2))
    return jnp.where(norm > clip_norm, t * clip_norm / norm, t)


@gk.custom_gradient
def clip_gradients(y):
    def backward(dy):
        return clip_by_norm(dy, 0.5)

    return y, backward


@WITH_AND_WITHOUT_JIT
def test_seed001_clip_gradients(jit):
    v = gk.Variable(2.0, name="v")
    # Seed 001: the upstream gradient 1 is clipped to norm 0.5, times d(v*v)/dv = 4 -> 2.0.
    assert float(maybe_jit(gk.grad(lambda: clip_gradients(v * v), wrt=v), jit)()) == 2.0
    # The forward value is untouched.
    assert float(clip_gradients(v * v)) == 4.0


def test_clip_gradients_vector_against_jax_custom_vjp():
    @jax.custom_vjp
    def oracle(y):
        return y

    oracle.defvjp(lambda y: (y, None), lambda _, dy: (clip_by_norm(dy, 0.5),))
    w = gk.Variable(np.array([1.0, -2.0, 0.5], np.float32), name="w")
    got = gk.grad(lambda: jnp.sum(clip_gradients(w * w) * jnp.arange(1.0, 4.0)), wrt=w)()
    want = jax.grad(lambda wv: jnp.sum(oracle(wv * wv) * jnp.arange(1.0, 4.0)))(w.numpy())
    assert_close(got, want)


def test_custom_gradient_with_variables_form():
    w = gk.Variable(np.array([1.0, 2.0, 3.0], np.float32), name="w")

    @gk.custom_gradient
    def scaled_dot(x):
        def grad_fn(dy, variables=None):
            # A deliberately non-true gradient, so only the custom rule can produce it.
            assert variables == [w]
            return dy * w.value, [dy * x * 10.0]

        return jnp.sum(w * x), grad_fn

    x = jnp.array([0.5, -1.0, 2.0])
    d_x, (d_w,) = gk.grad(scaled_dot, argnums=0, wrt=[w])(x)
    assert_close(d_x, w.numpy())
    assert_close(d_w, np.asarray(x) * 10.0)
    assert float(scaled_dot(x)) == pytest.approx(float(np.dot(w.numpy(), x)))


def test_custom_gradient_reading_variables_needs_variables_argument():
    w = gk.Variable(2.0, name="w")

    @gk.custom_gradient
    def f(x):
        return x * w, lambda dy: dy

    with pytest.raises(TypeError, match=r"^\[gradkit\] the function decorated with custom_gradient reads Variables"):
        gk.grad(f, argnums=0, wrt=[w])(1.0)


def test_custom_gradient_inside_an_assignment_chain():
    """The custom rule composes with the state threading around it."""
    c = gk.Variable(3.0, name="c")

    def loss():
        c.assign(clip_gradients(c * 2.0))
        return c**2

    # loss = (2c)^2 with the upstream 2(2c) = 12 clipped to 0.5, then times d(2c)/dc = 2.
    assert float(gk.grad(loss, wrt=c)()) == 1.0


@WITH_AND_WITHOUT_JIT
def test_stop_gradient(jit):
    a, b = gk.Variable(1.5, name="a"), gk.Variable(-0.5, name="b")

    def loss():
        b.assign(gk.stop_gradient(a) * b)
        return a * b + gk.stop_gradient(b) * a

    def pure(av, bv):
        bv = jax.lax.stop_gradient(av) * bv
        return av * bv + jax.lax.stop_gradient(bv) * av

    got = maybe_jit(gk.grad(loss, wrt=[a, b]), jit)()
    assert_close(got, list(jax.grad(pure, argnums=(0, 1))(1.5, -0.5)))


def _scaled_reading_w(w):
    """y = x * w with a custom rule whose input gradient reads w itself (the true gradient, dy * w)."""

    @gk.custom_gradient
    def scaled(x):
        def grad_fn(dy, variables=None):
            return dy * w.value, [dy * x]

        return x * w, grad_fn

    return scaled


W_ENTRY = np.array([0.5, -0.3, 1.2], np.float32)


def _oracle(s, w0):
    """The program below in pure JAX: w is doubled before the custom-gradient call reads it."""
    return jnp.sum(s * jnp.ones(3) * (2.0 * w0))


@WITH_AND_WITHOUT_JIT
def test_custom_gradient_grad_fn_reads_the_value_the_forward_saw(jit):
    w = gk.Variable(W_ENTRY, name="w")
    scaled = _scaled_reading_w(w)

    def f(s):
        w.assign(w * 2.0)
        return jnp.sum(scaled(s * jnp.ones(3)))

    got_ds, got_dw = maybe_jit(gk.grad(f, argnums=0, wrt=w), jit)(2.0)
    want_ds, want_dw = jax.grad(_oracle, argnums=(0, 1))(2.0, W_ENTRY)
    assert_close((got_ds, got_dw), (want_ds, want_dw))
    np.testing.assert_array_equal(w.numpy(), W_ENTRY)  # a derivative never changes a Variable


def test_custom_gradient_grad_fn_read_is_differentiable():
    # d/dw_entry of d/ds: exact only if grad_fn's read of w carries w's history.
    w = gk.Variable(W_ENTRY, name="w")
    scaled = _scaled_reading_w(w)

    def f(s):
        w.assign(w * 2.0)
        return jnp.sum(scaled(s * jnp.ones(3)))

    got = gk.grad(lambda: gk.grad(f)(2.0), wrt=w)()
    want = jax.grad(lambda w0: jax.grad(_oracle)(2.0, w0))(W_ENTRY)
    assert_close(got, want)


def test_custom_gradient_after_an_assignment_under_a_tape_repeats():
    # Each step's tape assigns w before the call, so from the second step on the call's probe
    # reads a value the previous tape left pending.
    w = gk.Variable(W_ENTRY, name="w")
    scaled = _scaled_reading_w(w)
    x = gk.Tensor(jnp.ones(3))
    for step in range(3):
        entry = W_ENTRY * 2.0**step
        with gk.GradientTape() as tape:
            w.assign(w * 2.0)
            z = gk.numpy.sum(scaled(x))
        # z = sum(x * 2 w_entry): the rule's variable gradient dy * x, times 2 through the assignment.
        assert_close(np.asarray(tape.gradient(z, w)), jax.grad(lambda w0: _oracle(1.0, w0))(entry))
    np.testing.assert_allclose(w.numpy(), W_ENTRY * 8.0)


def test_custom_gradient_multiple_outputs_take_one_upstream_each_and_keywords_pass_through():
    @gk.custom_gradient
    def two(x, scale=2.0):
        def grad(d1, d2):  # TensorFlow's convention: one upstream per output
            return d1 * scale + d2 * 3.0

        return (x * scale, x * 3.0), grad

    def loss(x, scale):
        y1, y2 = two(x, scale=scale)
        return y1 + 10 * y2

    # d/dx (scale x + 30 x) = scale + 30, with the grad_fn above.
    assert float(jax.grad(loss)(2.0, 2.0)) == 32.0
    assert float(jax.grad(loss)(2.0, 5.0)) == 35.0


def test_custom_gradient_with_python_control_flow_on_values_says_why():
    @gk.custom_gradient
    def branchy(x):
        y = x * 2.0 if x > 0 else -x
        return y, lambda dy: dy * 2.0

    with pytest.raises(TypeError, match=r"^\[gradkit\] a function decorated with custom_gradient is traced"):
        branchy(jnp.float32(1.0))


def test_custom_gradient_sees_python_state_and_variables_of_each_call():
    config = {"scale": 2.0}
    x0 = np.array([1.0, 2.0, 3.0], np.float32)
    x = gk.Variable(x0)

    @gk.custom_gradient
    def scaled(t):
        scale = config["scale"]
        return t * scale, lambda dy: dy * scale

    for scale in (2.0, 5.0):  # as TensorFlow runs the function at each call
        config["scale"] = scale
        with gk.GradientTape() as tape:
            y = gk.numpy.sum(scaled(x * 1.0))
        np.testing.assert_allclose(float(y), scale * x0.sum(), rtol=1e-6)
        np.testing.assert_allclose(np.asarray(tape.gradient(y, x)), np.full(3, scale), rtol=1e-6)
