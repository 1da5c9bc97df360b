"""``batch_jacobian`` inside ``gk.jit`` / ``jax.jit``, against pure-JAX oracles.

While a step is traced its values are unknown, so the independence check cannot choose the
algorithm then. A graph proven to compute, run on one example, the batch's rows takes the
per-example Jacobians (``vmap(jacrev)``, hand-written JAX's program) unchecked. Where the
structure proves only that examples do not interact, the compiled program (on a CPU) makes
the check itself at every call: the per-example Jacobians when this call's random JVP
confirms them, TensorFlow's whole-batch algorithm (exact for independent examples) otherwise.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from _oracles import count_compiles

import gradkit as gk

gnp = gk.numpy
B, S, H = 5, 4, 3
X = np.asarray(jax.random.normal(jax.random.PRNGKey(11), (B, S)), np.float32)
W0 = np.asarray(jax.random.normal(jax.random.PRNGKey(12), (S, H)), np.float32) / 2


def diagonal_blocks(f, x):
    """Example i's Jacobian, from the full ``jax.jacrev`` Jacobian of the batch."""
    full = jax.jacrev(f)(jnp.asarray(x))  # (B, *t, B, *s)
    full = jnp.moveaxis(full, full.ndim - x.ndim, 1)  # (B, B, *t, *s)
    return full[jnp.arange(x.shape[0]), jnp.arange(x.shape[0])]


def taped_batch_jacobian(program):
    """A function of x: the batch Jacobian of ``program(gnp, x)`` taken on a tape."""

    def step(x):
        x = gk.Tensor(x)  # a tensor, so that operators on it are recorded too
        with gk.GradientTape() as tape:
            tape.watch(x)
            y = program(gnp, x)
        return tape.batch_jacobian(y, x)

    return step


def mlp(xp, x, w=W0):
    return xp.tanh(x @ w) ** 2


def count_ones(xp, x):
    """Independent examples, but the batch is counted: run on one example, it counts one."""
    return xp.tanh(x) * xp.sum(xp.ones_like(x))


def test_a_proven_graph_takes_per_example_jacobians_compiled_once():
    step = gk.jit(taped_batch_jacobian(mlp))
    want_for = jax.jit(jax.vmap(jax.jacrev(lambda xi: mlp(jnp, xi[None])[0])))
    xs = [X, X * 2 + 1, -X]
    np.testing.assert_allclose(step(jnp.asarray(xs[0])), want_for(xs[0]), rtol=1e-5, atol=1e-6)
    for x in xs[1:]:
        assert count_compiles(lambda x=x: jax.block_until_ready(step(jnp.asarray(x)))) == 0
        np.testing.assert_allclose(step(jnp.asarray(x)), want_for(x), rtol=1e-5, atol=1e-6)
    # Proven: the per-example program alone, with no check to choose by.
    assert "cond" not in str(jax.make_jaxpr(taped_batch_jacobian(mlp))(jnp.asarray(X)))
    # Not proven (it reads the batch's size): on a CPU the program chooses, behind the check.
    if jax.default_backend() == "cpu":
        assert "cond" in str(jax.make_jaxpr(taped_batch_jacobian(count_ones))(jnp.asarray(X)))


def test_where_the_check_is_not_made_in_the_program_the_whole_batch_algorithm_runs(monkeypatch):
    """On a GPU the whole-batch algorithm is the faster one inside a trace: no check, no cond."""
    from gradkit._tape import derivatives

    monkeypatch.setattr(derivatives, "_checks_in_program", lambda: False)
    jaxpr = str(jax.make_jaxpr(taped_batch_jacobian(count_ones))(jnp.asarray(X)))
    assert "cond" not in jaxpr
    want = diagonal_blocks(lambda x: count_ones(jnp, x), X)
    got = jax.jit(taped_batch_jacobian(count_ones))(jnp.asarray(X))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_a_graph_that_reads_the_batch_size_gets_the_batch_s_jacobians():
    """``sum(ones_like(x))`` counts the batch: run on one example it counts one example, so
    the per-example Jacobians would be wrong; the check sends the call to the whole-batch algorithm."""
    program = count_ones

    want = diagonal_blocks(lambda x: program(jnp, x), X)
    one_example = jax.vmap(jax.jacrev(lambda xi: program(jnp, xi[None])[0]))(jnp.asarray(X))
    assert not np.allclose(one_example, want)  # what the per-example algorithm would give
    got = gk.jit(taped_batch_jacobian(program))(jnp.asarray(X))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    got = jax.jit(taped_batch_jacobian(program))(jnp.asarray(X))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_the_check_decides_at_every_call_of_one_compiled_program():
    """Per-example for small values, not for large ones (where the batch's count enters):
    the same compiled program gives each call's exact Jacobians."""

    def program(xp, x):
        return xp.where(x > 5.0, x * xp.sum(xp.ones_like(x)), xp.sin(x))

    step = gk.jit(taped_batch_jacobian(program))
    small, large = X, X + 10.0
    np.testing.assert_allclose(step(jnp.asarray(small)), diagonal_blocks(lambda x: program(jnp, x), small), rtol=1e-5)
    assert count_compiles(lambda: jax.block_until_ready(step(jnp.asarray(large)))) == 0
    np.testing.assert_allclose(step(jnp.asarray(large)), diagonal_blocks(lambda x: program(jnp, x), large), rtol=1e-5)


def test_interacting_examples_keep_tensorflow_s_unchecked_whole_batch_result():
    """Not proven independent: inside a trace, TensorFlow's algorithm as before
    (``result[i] = sum over b of d y[b] / d x[i]``), with no check to raise."""

    def program(xp, x):
        return x - xp.mean(x, axis=0, keepdims=True)

    full = jax.jacrev(lambda x: program(jnp, x))(jnp.asarray(X))  # (B, S, B, S)
    want = jnp.moveaxis(full.sum(axis=0), 1, 0)  # (B, S, S): summed over the target's batch
    got = gk.jit(taped_batch_jacobian(program))(jnp.asarray(X))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert "cond" not in str(jax.make_jaxpr(taped_batch_jacobian(program))(jnp.asarray(X)))


def test_a_variable_read_inside_the_compiled_step_and_its_derivative():
    """Weights in a Variable, and jax.grad through the selecting program (second order)."""
    w = gk.Variable(W0)
    step = gk.jit(taped_batch_jacobian(lambda xp, x: mlp(xp, x, w)))
    single = lambda xi, w: mlp(jnp, xi[None], w)[0]  # noqa: E731
    np.testing.assert_allclose(
        step(jnp.asarray(X)), jax.vmap(jax.jacrev(single), (0, None))(jnp.asarray(X), W0), rtol=1e-5, atol=1e-6
    )
    got = jax.grad(lambda x: jnp.sum(taped_batch_jacobian(lambda xp, x: mlp(xp, x, w))(x) ** 2))(jnp.asarray(X))
    want = jax.grad(lambda x: jnp.sum(jax.vmap(jax.jacrev(single), (0, None))(x, W0) ** 2))(jnp.asarray(X))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_vmap_of_the_compiled_step_over_several_batches():
    xs = jnp.stack([jnp.asarray(X), jnp.asarray(X) * 0.5, jnp.asarray(X) - 1.0])
    got = jax.vmap(jax.jit(taped_batch_jacobian(mlp)))(xs)
    want = jax.vmap(jax.vmap(jax.jacrev(lambda xi: mlp(jnp, xi[None])[0])))(xs)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_a_variable_source_in_a_step_s_first_trace():
    # The step's first trace meets the Variable before it is one of the program's inputs: its
    # value is concrete there, inside a trace, and the check must still be able to read it.
    w = gk.Variable(W0)

    def step():
        with gk.GradientTape() as tape:
            y = gnp.stack([gnp.tanh(w), gnp.maximum(w, 2.0 * w)], axis=1)  # (S, 2, H): per-example
        return tape.batch_jacobian(y, w)

    def pure(wv):
        return jnp.stack([jnp.tanh(wv), jnp.maximum(wv, 2.0 * wv)], axis=1)

    want = diagonal_blocks(pure, W0)
    np.testing.assert_allclose(np.asarray(gk.jit(step)()), want, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(step()), want, rtol=1e-6)
