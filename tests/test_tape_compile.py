"""An eager training loop with a fresh tape each step compiles once and keeps memory flat."""

from __future__ import annotations

import gc
import weakref

import jax
import jax.numpy as jnp
import numpy as np

import gradkit as gk
from gradkit._tape import derivatives, graph, record

gnp = gk.numpy

EVENT = "/jax/core/compile/backend_compile_duration"


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

    compiles = []

    def listener(event, duration, **kwargs):
        if event == EVENT:
            compiles.append(event)

    jax.monitoring.register_event_duration_secs_listener(listener)
    try:
        for _ in range(995):
            step()
    finally:
        jax.monitoring.unregister_event_duration_listener(listener)
    gc.collect()
    assert len(derivatives.programs) == n_programs
    assert len(record._forward_cache) == n_forward
    assert compiles == []
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
