"""``GradientTape.jacobian`` computed a chunk of rows (or columns) at a time.

A chunk is set by ``parallel_iterations`` or chosen for a large Jacobian; either way the
result must be the Jacobian ``jax.jacrev`` / ``jax.jacfwd`` / ``jax.hessian`` give for the
pure-JAX rewrite of the same program, in both modes, nested, under ``gk.jit`` and under an
outer tape that differentiates the Jacobian.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _oracles import assert_close, count_compiles
from hypothesis import given, settings
from hypothesis import strategies as st

import gradkit as gk
from gradkit._tape import chunked_jacobian

gnp = gk.numpy
rng = np.random.default_rng(7)
X = jnp.asarray(rng.standard_normal((5, 6)), jnp.float32)
W0 = (rng.standard_normal((6, 4)) * 0.4).astype(np.float32)
B0 = (rng.standard_normal((1, 4)) * 0.1).astype(np.float32)


def layer(w, b):
    return jnp.tanh(X @ w + b) * w.sum()


def recorded_layer(w, b):
    return gnp.tanh(X @ w + b) * gnp.sum(w)


@pytest.fixture
def chunk_sizes(monkeypatch):
    """The chunk sizes the Jacobians of the test were computed with (None: one vmap)."""
    seen = []
    choose = chunked_jacobian.rows_per_chunk

    def spy(*args):
        seen.append(choose(*args))
        return seen[-1]

    monkeypatch.setattr(chunked_jacobian, "rows_per_chunk", spy)
    return seen


@pytest.mark.parametrize("parallel_iterations", [1, 3, 7, 19, 20, 1000])
def test_reverse_mode_in_chunks_is_jax_jacrev(parallel_iterations, chunk_sizes):
    # Target (5, 4): 20 rows; sources 24 + 4 elements: reverse mode.
    w, b = gk.Variable(W0), gk.Variable(B0)
    with gk.GradientTape() as tape:
        y = recorded_layer(w, b)
    jw, jb = tape.jacobian(y, [w, b], parallel_iterations=parallel_iterations)
    expected = jax.jacrev(layer, argnums=(0, 1))(W0, B0)
    assert_close([np.asarray(jw), np.asarray(jb)], [np.asarray(e) for e in expected], rtol=1e-5, atol=1e-6)
    assert chunk_sizes == [parallel_iterations if parallel_iterations < 20 else None]


@pytest.mark.parametrize("parallel_iterations", [1, 5, 23, 1000])
def test_forward_mode_in_chunks_is_jax_jacfwd(parallel_iterations, chunk_sizes):
    # Target (6, 6): 36 rows; sources 6 + 2 elements: forward mode, 8 columns.
    v0 = jnp.asarray(rng.standard_normal(6), jnp.float32)
    s0 = jnp.asarray([0.5, -1.5], jnp.float32)

    def f(v, s):
        return jnp.sin(jnp.outer(v, v) * s[0]) + s[1] * v[None, :]

    v, s = gk.Variable(v0), gk.Variable(s0)
    with gk.GradientTape() as tape:
        y = gnp.sin(v[:, None] * v[None, :] * s[0]) + s[1] * v[None, :]
    jv, js = tape.jacobian(y, [v, s], parallel_iterations=parallel_iterations)
    expected = jax.jacfwd(f, argnums=(0, 1))(v0, s0)
    assert_close([np.asarray(jv), np.asarray(js)], [np.asarray(e) for e in expected])
    assert chunk_sizes == [parallel_iterations if parallel_iterations < 8 else None]


def test_a_large_jacobian_is_chunked_by_itself_on_a_cpu(monkeypatch, chunk_sizes):
    if jax.default_backend() != "cpu":
        pytest.skip("on an accelerator chunks are made only where parallel_iterations asks")
    # A budget of a few KiB makes this small Jacobian "large": the automatic choice chunks it.
    monkeypatch.setattr(chunked_jacobian, "_CPU_CHUNK_BYTES", 4096)
    w = gk.Variable(W0)
    with gk.GradientTape() as tape:
        y = gnp.sin(X @ w) * 2.0  # a structure of its own: compiled with the small budget
    jw = tape.jacobian(y, w)
    assert chunk_sizes and chunk_sizes[0] is not None and chunk_sizes[0] < 20
    assert_close(np.asarray(jw), np.asarray(jax.jacrev(lambda u: jnp.sin(X @ u) * 2.0)(W0)))


def test_a_small_jacobian_is_one_vmap(chunk_sizes):
    w = gk.Variable(W0)
    with gk.GradientTape() as tape:
        y = gnp.cos(X @ w) * 3.0
    jw = tape.jacobian(y, w)
    assert chunk_sizes == [None]
    assert_close(np.asarray(jw), np.asarray(jax.jacrev(lambda u: jnp.cos(X @ u) * 3.0)(W0)))


def test_nested_tape_hessian_in_chunks_is_jax_hessian(chunk_sizes):
    theta0 = jnp.asarray(rng.standard_normal(9) * 0.5, jnp.float32)

    def loss(t):
        return jnp.sum(jnp.tanh(X[:, :3] @ t.reshape(3, 3)) ** 2)

    theta = gk.Variable(theta0)
    with gk.GradientTape() as outer:
        with gk.GradientTape() as inner:
            ell = gnp.sum(gnp.tanh(X[:, :3] @ gnp.reshape(theta, (3, 3))) ** 2)
        g = inner.gradient(ell, theta)
    h = outer.jacobian(g, theta, parallel_iterations=4)
    assert chunk_sizes == [4]  # forward over the recorded gradient, 9 columns in chunks of 4
    assert_close(np.asarray(h), np.asarray(jax.hessian(loss)(theta0)), rtol=1e-4, atol=1e-5)


def test_a_custom_gradient_in_forward_mode_is_computed_in_reverse_chunks(chunk_sizes):
    @gk.custom_gradient
    def clipped_square(x):
        def grad(dy):
            return dy * jnp.clip(2 * x, -1.0, 1.0)

        return x * x, grad

    v0 = jnp.asarray([0.2, -0.7, 0.4], jnp.float32)
    v = gk.Variable(v0)
    with gk.GradientTape() as tape:
        y = clipped_square(v[:, None] * v[None, :])  # 9 outputs of 3 inputs: forward mode asked
    j = tape.jacobian(y, v, parallel_iterations=2)
    outer = v0[:, None] * v0[None, :]
    dy_dprod = jnp.clip(2 * outer, -1.0, 1.0)
    expected = jax.jacrev(lambda u: u[:, None] * u[None, :])(v0) * dy_dprod[:, :, None]
    assert_close(np.asarray(j), np.asarray(expected))
    assert chunk_sizes == [2]  # the reverse pass: 9 rows, in chunks of 2


def test_an_outer_tape_differentiates_a_chunked_jacobian():
    w = gk.Variable(W0)
    b = gk.Variable(B0)
    with gk.GradientTape() as outer:
        with gk.GradientTape() as inner:
            y = recorded_layer(w, b)
        jw = inner.jacobian(y, w, parallel_iterations=3)
        score = gnp.sum(jw**2)
    expected = jax.grad(lambda ww: jnp.sum(jax.jacrev(layer)(ww, B0) ** 2))(W0)
    assert_close(np.asarray(outer.gradient(score, w)), np.asarray(expected), rtol=1e-4, atol=1e-5)


def test_a_chunked_jacobian_passes_check_grads():
    # The Jacobian as a function of the weights (a watched array), differentiated by finite
    # differences in both modes to order 2.
    def jacobian_of(w):
        with gk.GradientTape() as tape:
            tape.watch(w)
            y = gnp.tanh(gnp.matmul(X, w) + B0) * gnp.sum(w)
        return jnp.asarray(tape.jacobian(y, w, parallel_iterations=6))

    w0 = jnp.asarray(W0)
    assert_close(np.asarray(jacobian_of(w0)), np.asarray(jax.jacrev(layer)(w0, B0)))
    jax.test_util.check_grads(jacobian_of, (w0,), order=2, modes=("fwd", "rev"), atol=1e-2, rtol=1e-2)


def test_under_gk_jit_a_chunked_jacobian_compiles_once():
    w, b = gk.Variable(W0), gk.Variable(B0)

    @gk.jit
    def step():
        with gk.GradientTape() as tape:
            y = recorded_layer(w, b)
        return tape.jacobian(y, w, parallel_iterations=6)

    assert_close(np.asarray(step()), np.asarray(jax.jacrev(layer)(W0, B0)))
    w.assign(W0 * 2)
    assert count_compiles(step) == 0
    assert_close(np.asarray(step()), np.asarray(jax.jacrev(layer)(W0 * 2, B0)))


@pytest.mark.parametrize(
    ("bad", "error"),
    [(0, ValueError), (-2, ValueError), (2.5, TypeError), (True, TypeError)],
)
def test_a_bad_parallel_iterations_is_refused(bad, error):
    w = gk.Variable(W0)
    with gk.GradientTape() as tape:
        y = gnp.tanh(X @ w)
    with pytest.raises(error, match=r"^\[gradkit\] .*parallel_iterations") as info:
        tape.jacobian(y, w, parallel_iterations=bad)
    assert isinstance(info.value, gk.GradkitError)
    assert_close(np.asarray(tape.jacobian(y, w)), np.asarray(jax.jacrev(lambda u: jnp.tanh(X @ u))(W0)))


def test_gradkit_tf_jacobian_with_parallel_iterations_matches_tensorflow():
    tf = pytest.importorskip("tensorflow")
    import gradkit.tf as gtf

    x0 = np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(3, 4)
    results = []
    for module, chunk in ((tf, None), (gtf, 5)):
        # TensorFlow 2.21 fails to vectorise this Jacobian with parallel_iterations < 12, so
        # its side is computed whole; gradkit's in chunks of 5 rows.
        x = module.Variable(x0)
        with module.GradientTape() as tape:
            y = module.tanh(x * x) @ module.transpose(x)
        results.append(np.asarray(tape.jacobian(y, x, parallel_iterations=chunk)))
    np.testing.assert_allclose(results[1], results[0], rtol=1e-5, atol=1e-6)


@settings(max_examples=12, deadline=None, derandomize=True, database=None)
@given(
    n=st.integers(1, 4),
    d=st.integers(1, 5),
    k=st.integers(1, 4),
    square=st.booleans(),
    chunk=st.integers(1, 25),
)
def test_random_jacobians_in_random_chunks_are_jax_jacobians(n, d, k, square, chunk):
    # y = act(x @ w) with x (n, d), w (d, k): reverse mode when y has fewer elements than w,
    # forward mode otherwise; any chunk size, including one that does not divide the rows.
    xs = jnp.linspace(-1.0, 1.0, n * d, dtype=jnp.float32).reshape(n, d)
    w0 = jnp.cos(jnp.arange(d * k, dtype=jnp.float32)).reshape(d, k)

    def pure(u):
        z = xs @ u
        return z * z if square else jnp.tanh(z)

    w = gk.Variable(w0)
    with gk.GradientTape() as tape:
        z = xs @ w
        y = z * z if square else gnp.tanh(z)
    got = tape.jacobian(y, w, parallel_iterations=chunk)
    assert_close(np.asarray(got), np.asarray(jax.jacrev(pure)(w0)), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_a_chunked_jacobian_under_vmap_is_per_example_jacrev(jit):
    def jacobian_of(w):
        with gk.GradientTape() as tape:
            tape.watch(w)
            y = gnp.tanh(gnp.matmul(X[:3, :4], w))
        return jnp.asarray(tape.jacobian(y, w, parallel_iterations=2))

    ws = jnp.stack([jnp.cos(jnp.arange(8.0)).reshape(4, 2) * s for s in (1.0, 0.5, -2.0)])
    batched = jax.vmap(jacobian_of)
    got = (jax.jit(batched) if jit else batched)(ws)
    expected = jax.vmap(jax.jacrev(lambda w: jnp.tanh(X[:3, :4] @ w)))(ws)
    assert_close(np.asarray(got), np.asarray(expected))
