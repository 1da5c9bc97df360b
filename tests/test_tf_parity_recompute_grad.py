"""tf.recompute_grad: the values and gradients of the function it wraps (to its positional
arguments and the Variables it reads; None to keyword arguments; zero, not None, to an unused
input), under GradientTape and inside tf.function, against real TensorFlow and jax.grad; and the
backward pass recomputes the forward one (jax.checkpoint)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gradkit as gk
import gradkit.tf as gtf

X = np.array([0.3, -0.7, 1.9], np.float32)
W = np.array([1.0, 2.0, -0.5], np.float32)


def _tf():
    return pytest.importorskip("tensorflow")


def _numpy(values):
    return [None if v is None else np.asarray(v.numpy()) for v in values]


def _block_gradients(lib):
    """y = recompute_grad(f)(x) for f reading a Variable w: y and its gradients to x and w."""
    w = lib.Variable(W)

    def f(x):
        return lib.reduce_sum(lib.sin(x * w) ** 2)

    x = lib.Variable(X)
    with lib.GradientTape() as tape:
        y = lib.recompute_grad(f)(x)
    return _numpy([y, *tape.gradient(y, [x, w])])


def _pure(x, w):
    return jnp.sum(jnp.sin(x * w) ** 2)


def test_gradients_match_jax_grad():
    y, gx, gw = _block_gradients(gtf)
    np.testing.assert_allclose(y, _pure(X, W), rtol=1e-6)
    np.testing.assert_allclose(gx, jax.grad(_pure, 0)(X, W), rtol=1e-5)
    np.testing.assert_allclose(gw, jax.grad(_pure, 1)(X, W), rtol=1e-5)


def test_second_derivative_matches_jax():
    # TensorFlow raises NotImplementedError here (its recompute_grad has no second derivative).
    x = gtf.Variable(X)
    block = gtf.recompute_grad(lambda x: gtf.reduce_sum(gtf.sin(x) ** 3))
    with gtf.GradientTape() as outer:
        with gtf.GradientTape() as inner:
            y = block(x)
        g = inner.gradient(y, x)
    hessian_diagonal = outer.gradient(g, x).numpy()
    expected = jnp.diag(jax.hessian(lambda v: jnp.sum(jnp.sin(v) ** 3))(X))
    np.testing.assert_allclose(hessian_diagonal, expected, rtol=1e-5)


def test_backward_pass_recomputes_the_forward_pass():
    block = gtf.recompute_grad(lambda x: gtf.reduce_sum(gtf.sin(x) ** 2))
    jaxpr = str(jax.make_jaxpr(gk.grad(block))(jnp.asarray(X)))
    assert "remat" in jaxpr or "checkpoint" in jaxpr
    np.testing.assert_allclose(gk.grad(block)(jnp.asarray(X)), 2 * np.sin(X) * np.cos(X), rtol=1e-6)


def test_without_a_tape_it_is_the_function():
    out = gtf.recompute_grad(lambda x, n: x * n)(gtf.constant(2.0), 3)
    assert float(out.numpy()) == 6.0


def test_a_keras_layer_built_inside_under_a_tape():
    layer = gtf.keras.layers.Dense(2)
    block = gtf.recompute_grad(layer)
    x = np.arange(6, dtype=np.float32).reshape(2, 3) / 6
    with gtf.GradientTape() as tape:
        y = gtf.reduce_sum(block(gtf.constant(x)) ** 2)
    g_kernel, g_bias = tape.gradient(y, layer.trainable_variables)
    out = x @ layer.kernel.numpy() + layer.bias.numpy()
    np.testing.assert_allclose(g_kernel.numpy(), x.T @ (2 * out), rtol=1e-5)
    np.testing.assert_allclose(g_bias.numpy(), (2 * out).sum(0), rtol=1e-5)


def test_assigning_a_variable_inside_is_refused_under_a_tape():
    v = gtf.Variable(1.0)

    def f(x):
        v.assign_add(1.0)
        return x * v

    with pytest.raises(TypeError, match=r"\[gradkit\] tf.recompute_grad: the function assigns Variable"):
        with gtf.GradientTape():
            gtf.recompute_grad(f)(gtf.constant(2.0))
    assert float(v.numpy()) == 1.0


# -- against TensorFlow ----------------------------------------------------------------------------


def test_gradients_match_tensorflow():
    tf = _tf()
    for ours, theirs in zip(_block_gradients(gtf), _block_gradients(tf)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5)


def _unused_and_keyword(lib):
    a, b, k = lib.Variable(2.0), lib.Variable(3.0), lib.Variable(4.0)
    w, u = lib.Variable(5.0), lib.Variable(7.0)
    with lib.GradientTape(persistent=True) as tape:
        r = lib.recompute_grad(lambda x, y, k=1.0: x * w * k)(a, b, k=k)
        r1, r2 = lib.recompute_grad(lambda x: (x * 2.0, x * w))(a)
    return [tape.gradient(r, [a, b, k, w, u]), tape.gradient(r1, [a, w])]


def test_unused_inputs_keywords_and_variables_match_tensorflow():
    tf = _tf()
    for ours, theirs in zip(_unused_and_keyword(gtf), _unused_and_keyword(tf)):
        assert [g is None for g in ours] == [g is None for g in theirs]
        for o, t in zip(ours, theirs):
            if t is not None:
                np.testing.assert_allclose(o.numpy(), t.numpy())


def _in_function(lib):
    w = lib.Variable(W)
    block = lib.recompute_grad(lambda x: lib.reduce_sum(lib.tanh(x * w)))

    @lib.function
    def step(x):
        with lib.GradientTape() as tape:
            y = block(x)
        return y, tape.gradient(y, [x, w])

    x = lib.Variable(X)
    y, (gx, gw) = step(x)
    return _numpy([y, gx, gw])


def test_inside_tf_function_matches_tensorflow_and_eager():
    tf = _tf()
    ours, theirs = _in_function(gtf), _in_function(tf)
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o, t, rtol=1e-5)
    np.testing.assert_allclose(ours[0], np.sum(np.tanh(X * W)), rtol=1e-6)
