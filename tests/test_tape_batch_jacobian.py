"""``batch_jacobian``: per-example Jacobians, checked against the diagonal blocks of the full
``jax.jacrev`` Jacobian of the same pure-JAX function.

Eagerly, with the independence check on, gradkit runs the graph one example at a time
(``vmap(jacrev(...))``, as hand-written JAX does) and checks the result against a random
JVP of the whole batch; graphs that are not per-example fall back to TensorFlow's
whole-batch algorithm, and graphs whose examples interact raise.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gradkit as gk

gnp = gk.numpy
B, S = 6, 4
X = np.asarray(jax.random.normal(jax.random.PRNGKey(3), (B, S)), np.float32)
W = np.asarray(jax.random.normal(jax.random.PRNGKey(4), (S, 3)), np.float32)
C = np.asarray(jax.random.normal(jax.random.PRNGKey(5), (B, S)), np.float32)


def diagonal_blocks(f, x):
    full = jax.jacrev(f)(jnp.asarray(x))  # (B, *t, B, *s)
    t_ndim = full.ndim - x.ndim
    full = jnp.moveaxis(full, t_ndim, 1)  # (B, B, *t, *s)
    return full[jnp.arange(x.shape[0]), jnp.arange(x.shape[0])]


def _batch_jacobian(program, x=X, **kwargs):
    xt = gk.Tensor(jnp.asarray(x))
    with gk.GradientTape() as tape:
        tape.watch(xt)
        y = program(gnp, xt)
    return tape.batch_jacobian(y, xt, **kwargs)


PER_EXAMPLE = {
    "mlp": lambda xp, x: xp.tanh(x @ W) ** 2,
    "batch_sized_constant": lambda xp, x: xp.sin(x * C) @ W,  # one example does not broadcast to C's batch
    "whole_batch_count": lambda xp, x: x * xp.sum(xp.ones_like(x)),  # one example gives another count
    "outer_product": lambda xp, x: x[:, :, None] * x[:, None, :],
}


@pytest.mark.parametrize("name", sorted(PER_EXAMPLE))
def test_batch_jacobian_equals_diagonal_blocks_of_the_full_jacobian(name):
    program = PER_EXAMPLE[name]
    expected = diagonal_blocks(lambda x: program(jnp, x), X)
    for _ in range(2):  # the second call reuses what the first one learnt about the graph
        got = _batch_jacobian(program)
        np.testing.assert_allclose(np.asarray(got.numpy()), np.asarray(expected), rtol=1e-5, atol=1e-6)


def test_examples_interacting_away_from_example_zero_warn():
    """Example 0 is independent; examples 1.. subtract the mean of examples 1.. ."""

    def program(xp, x):
        rest = xp.mean(x[1:], axis=0, keepdims=True)
        mask = (xp.arange(x.shape[0]) > 0)[:, None]
        return x - xp.where(mask, rest, 0.0)

    with pytest.warns(gk.GradkitWarning, match=r"\[gradkit\].*examples interact"):
        warned = _batch_jacobian(program)
    # TensorFlow's result either way: per target column, the gradient of that column summed
    # over the batch.
    got = _batch_jacobian(program, check_independence=False)
    full = jax.jacrev(lambda x: program(jnp, x))(jnp.asarray(X))
    for result in (got, warned):
        np.testing.assert_allclose(
            np.asarray(result.numpy()), np.asarray(jnp.einsum("bxcy->cxy", full)), rtol=1e-5, atol=1e-6
        )


@pytest.mark.parametrize("dtype", [jnp.bfloat16, jnp.float16])
def test_low_precision_rounding_is_not_taken_for_examples_interacting(dtype):
    """The check compares two computations; in 16-bit floats they differ by rounding alone."""
    x = jax.random.normal(jax.random.PRNGKey(0), (64, 16)).astype(dtype)
    w = jax.random.normal(jax.random.PRNGKey(1), (16, 8)).astype(dtype)

    def program(xp, v):
        return xp.tanh(xp.tanh(v @ w) @ w.T)

    got = _batch_jacobian(program, x=x)
    expected = diagonal_blocks(lambda v: program(jnp, v), x.astype(jnp.float32))
    np.testing.assert_allclose(np.asarray(got.numpy(), np.float32), np.asarray(expected), atol=0.05, rtol=0.05)
