"""An eager training loop with a fresh tape each step compiles once and keeps memory flat."""

from __future__ import annotations

import gc
import weakref

import jax
import jax.numpy as jnp
import numpy as np
from _oracles import count_compiles as _count_compiles

import gradkit as gk
from gradkit._tape import derivatives, graph, record

gnp = gk.numpy


def _live_nodes() -> int:
    return sum(1 for o in gc.get_objects() if type(o) is graph.Node)


def _init():
    k1, k2 = jax.random.split(jax.random.PRNGKey(0))
    return {
        "w1": np.asarray(jax.random.normal(k1, (3, 8), jnp.float32)) * 0.5,
        "b1": np.zeros(8, np.float32),
        "w2": np.asarray(jax.random.normal(k2, (8, 1), jnp.float32)) * 0.5,
        "b2": np.zeros(1, np.float32),
    }


X = np.asarray(jax.random.normal(jax.random.PRNGKey(1), (16, 3), jnp.float32))
Y = np.sin(X.sum(axis=1, keepdims=True))


def _mlp(p, x):
    h = gnp.tanh(gnp.matmul(x, p["w1"]) + gnp.expand_dims(p["b1"], 0))
    return gnp.matmul(h, p["w2"]) + gnp.expand_dims(p["b2"], 0)


def _pure_loss(p, x, y):
    h = jnp.tanh(x @ p["w1"] + p["b1"][None, :])
    return jnp.mean((h @ p["w2"] + p["b2"][None, :] - y) ** 2)


def test_training_loop_compiles_once_and_memory_is_flat():
    params = {k: gk.Variable(v, name=k) for k, v in _init().items()}
    lr = gk.Variable(0.05, trainable=False)  # an array, not a changing Python float
    names = sorted(params)

    def step():
        with gk.GradientTape() as tape:
            loss = gnp.mean((_mlp(params, X) - Y) ** 2)
        grads = tape.gradient(loss, [params[k] for k in names])
        for k, g in zip(names, grads):
            params[k].assign_sub(lr * g)

    for _ in range(5):  # warm up: every program of the step is compiled here
        step()
    gc.collect()
    n_programs, n_forward = len(derivatives.programs), len(record._forward_cache)
    nodes_early = _live_nodes()

    compiles = _count_compiles(lambda: [step() for _ in range(995)])
    gc.collect()
    assert len(derivatives.programs) == n_programs
    assert len(record._forward_cache) == n_forward
    assert compiles == 0
    assert _live_nodes() <= nodes_early + 10

    # The same 1,000 SGD steps in pure JAX.
    pure_grad = jax.jit(jax.grad(_pure_loss))
    p = {k: jnp.asarray(v) for k, v in _init().items()}
    for _ in range(1000):
        g = pure_grad(p, X, Y)
        p = {k: p[k] - 0.05 * g[k] for k in p}
    for k in names:
        np.testing.assert_allclose(np.asarray(params[k].value), np.asarray(p[k]), rtol=2e-3, atol=2e-4)


def test_non_persistent_tape_releases_graph():
    w = gk.Variable(np.array([0.5, -1.0], np.float32))
    with gk.GradientTape() as tape:
        h = gnp.sin(w) * 2.0
        loss = gnp.sum(h * h)
    ref = weakref.ref(h._node)
    g = tape.gradient(loss, w)
    np.testing.assert_allclose(
        g.numpy(), jax.grad(lambda v: jnp.sum((jnp.sin(v) * 2.0) ** 2))(jnp.array([0.5, -1.0])), rtol=1e-5
    )
    del h, loss
    gc.collect()
    assert ref() is None, gc.get_referrers(ref()) if ref() is not None else None
    del tape, g
    gc.collect()


def test_a_python_float_that_changes_every_step_compiles_nothing_new():
    # KL annealing and a learning-rate schedule inside the tapes: the floats are runtime
    # values of the programs, as jax.jit arguments are, not constants baked into them.
    w0 = np.array([[0.3, -0.2], [0.1, 0.4], [-0.5, 0.2]], np.float32)
    w, lr = gk.Variable(w0), gk.Variable(0.1)

    def meta_step(beta, decay):
        w.assign(w0)
        with gk.GradientTape() as outer:
            with gk.GradientTape() as inner:
                h = gnp.tanh(X @ w)
                loss = gnp.mean((h - Y[:, :1]) ** 2) + beta * gnp.mean(h**2)
            w.assign_sub(decay * lr * inner.gradient(loss, w))
            val = gnp.mean((gnp.tanh(X @ w) - Y[:, :1]) ** 2) / (1.0 + beta)
        return val, outer.gradient(val, lr)

    def pure(lr_, beta, decay):
        def loss(ww):
            h = jnp.tanh(X @ ww)
            return jnp.mean((h - Y[:, :1]) ** 2) + beta * jnp.mean(h**2)

        ww = w0 - decay * lr_ * jax.grad(loss)(w0)
        return jnp.mean((jnp.tanh(X @ ww) - Y[:, :1]) ** 2) / (1.0 + beta)

    schedule = [(min(1.0, i / 10), 0.99**i) for i in range(1, 13)]
    for beta, decay in schedule[:2]:  # warm up
        meta_step(beta, decay)
    results = []
    assert _count_compiles(lambda: results.extend(meta_step(b, d) for b, d in schedule[2:])) == 0
    for (val, g), (beta, decay) in zip(results, schedule[2:]):
        want_val, want_g = jax.value_and_grad(pure)(0.1, beta, decay)
        np.testing.assert_allclose(float(val), want_val, rtol=1e-5)
        np.testing.assert_allclose(float(g), want_g, rtol=1e-4, atol=1e-7)


def test_python_scalar_operands_keep_jax_dtypes_and_integer_powers():
    half = np.array([1.0, -2.0], np.float16)
    v16, vf = gk.Variable(half), gk.Variable(np.array([0.0, 3.0], np.float32))
    with gk.GradientTape() as tape:
        a = v16 * 0.5  # a weak float keeps float16
        b = gk.stop_gradient(vf).astype(jnp.int32) * 0.5  # int * float: float32, as jnp gives
        c = vf * 1j  # complex
        d = vf**2  # an int exponent stays an integer power: its gradient at 0 is exactly 0
        e = 2.0 - vf + 1.0 / (vf + 1.0)
    assert (a.dtype, b.dtype, c.dtype) == (jnp.float16, jnp.float32, jnp.complex64)
    np.testing.assert_array_equal(np.asarray(a), jnp.asarray(half) * 0.5)
    np.testing.assert_array_equal(np.asarray(b), [0.0, 1.5])
    np.testing.assert_allclose(np.asarray(e), [3.0, -0.75], rtol=1e-6)
    assert np.asarray(tape.gradient(d, vf)).tolist() == [0.0, 6.0]


def test_a_variable_only_read_by_nested_tapes_stays_unchanged_and_computes_nothing():
    theta, x0 = gk.Variable(2.0), np.array([0.5, 0.4], np.float32)
    x = gk.Variable(x0)

    def step():
        with gk.GradientTape() as outer:
            y = theta * x  # the outer tape sees theta here
            with gk.GradientTape() as inner:
                z = gnp.sum(theta * y)  # the inner tape first sees theta here
            g = inner.gradient(z, theta)
        return outer.gradient(g, theta)

    def pure(t):
        y = t * x0
        return jax.grad(lambda t2: jnp.sum(t2 * y))(t)

    np.testing.assert_allclose(float(step()), jax.grad(pure)(2.0), rtol=1e-6)
    # After the tapes, theta and x hold their unchanged values: reading them runs nothing,
    # and the next step compiles nothing new.
    got = []
    assert _count_compiles(lambda: got.extend([float(theta), np.asarray(x), float(step())])) == 0
    assert got[0] == 2.0 and np.array_equal(got[1], x0)
    np.testing.assert_allclose(got[2], jax.grad(pure)(2.0), rtol=1e-6)


def test_python_float_arguments_of_elementwise_gk_numpy_functions_compile_nothing_new():
    w0 = np.array([0.5, -1.5, 2.0], np.float32)
    w = gk.Variable(w0)

    def step(beta, lo):
        with gk.GradientTape() as tape:
            y = gnp.sum(gnp.multiply(beta, gnp.clip(w, lo, 1.0)) + gnp.where(w > 0, w, 0.1 * beta))
        return tape.gradient(y, w)

    def pure(ww, beta, lo):
        return jnp.sum(jnp.multiply(beta, jnp.clip(ww, lo, 1.0)) + jnp.where(ww > 0, ww, 0.1 * beta))

    step(0.3, -1.0)  # warm up
    schedule = [(0.5, -1.2), (0.7, 0.0), (1.1, -2.0)]
    got = []
    assert _count_compiles(lambda: got.extend(np.asarray(step(b, lo)) for b, lo in schedule)) == 0
    for g, (b, lo) in zip(got, schedule):
        np.testing.assert_allclose(g, jax.grad(pure)(w0, b, lo), rtol=1e-6)
    h = gk.Variable(np.array([1.0, 2.0], np.float16))
    with gk.GradientTape():
        assert gnp.multiply(h, 0.5).dtype == jnp.float16  # a weak float, as jnp gives
