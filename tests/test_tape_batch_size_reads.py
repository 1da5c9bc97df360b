"""The proof that a graph run on one example computes the batch's rows (``batch_size_reads``):
sound against the full ``jax.jacrev`` Jacobian's diagonal blocks, for random programs and at
values that switch a step on or off, and proving the usual per-example graphs."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradkit as gk
from gradkit._tape.batch_size_reads import function_reads_no_batch_size

gnp = gk.numpy
B, S = 6, 4
X = np.asarray(jax.random.normal(jax.random.PRNGKey(21), (B, S)), np.float32)
W = np.asarray(jax.random.normal(jax.random.PRNGKey(22), (S, S)), np.float32) / 2
BIAS = np.asarray(jax.random.normal(jax.random.PRNGKey(23), (1, S)), np.float32)
SETTINGS = settings(max_examples=30, deadline=None, derandomize=True, database=None)

# Steps (B, S) -> (B, S) that keep examples apart and read no batch size: proven.
PER_EXAMPLE = {
    "dense_relu": lambda xp, h: xp.maximum(h @ W + BIAS, 0.0),
    "nn_relu": lambda xp, h: jax.nn.relu(h) if xp is jnp else gk.tf.nn.relu(h),
    "tanh": lambda xp, h: xp.tanh(h),
    "softmax_rows": lambda xp, h: xp.exp(h) / xp.sum(xp.exp(h), axis=1, keepdims=True),
    "layer_norm": lambda xp, h: (
        (h - xp.mean(h, axis=1, keepdims=True)) / xp.sqrt(xp.var(h, axis=1, keepdims=True) + 1e-3)
    ),
    "shifted_relu": lambda xp, h: h * (1.0 + xp.maximum(h - 1.0, 0.0)),
}
# Steps that read how many examples there are (for some values only, where behind a relu).
READ_BATCH_SIZE = {
    "count": lambda xp, h: h * xp.sum(xp.ones_like(h)),
    "count_behind_relu": lambda xp, h: h * (1.0 + xp.maximum(h - 1.0, 0.0) * xp.sum(xp.ones_like(h))),
    "cumulative_count": lambda xp, h: h * xp.cumsum(xp.ones_like(h), axis=0),
}
STEPS = {**PER_EXAMPLE, **READ_BATCH_SIZE}
# A small value switches every relu above off, a large one on.
VALUES = (X * 0.1, X, X * 3.0 + 2.0)


def run(xp, names, x):
    for name in names:
        x = STEPS[name](xp, x)
    return x


def proven(f) -> bool:
    return function_reads_no_batch_size(lambda _, x: f(x), [], jax.ShapeDtypeStruct((B, S), jnp.float32))


def diagonal_blocks(f, x):
    full = np.asarray(jax.jacrev(f)(jnp.asarray(x)))  # (B, S, B, S)
    return np.moveaxis(full, 2, 1)[np.arange(B), np.arange(B)]


def one_example_jacobians(f, x):
    return np.asarray(jax.vmap(jax.jacrev(lambda e: f(e[None])[0]))(jnp.asarray(x)))


@SETTINGS
@given(st.lists(st.sampled_from(sorted(STEPS)), min_size=1, max_size=4))
def test_a_proven_graph_run_on_one_example_has_the_batch_s_jacobians(names):
    f = lambda x: run(jnp, names, x)  # noqa: E731
    if proven(f):
        for x in VALUES:
            np.testing.assert_allclose(one_example_jacobians(f, x), diagonal_blocks(f, x), rtol=2e-5, atol=1e-5)
    if any(name in READ_BATCH_SIZE for name in names):
        assert not proven(f)


@pytest.mark.parametrize("name", sorted(PER_EXAMPLE))
def test_per_example_steps_are_proven(name):
    assert proven(lambda x: PER_EXAMPLE[name](jnp, PER_EXAMPLE["dense_relu"](jnp, x)))


REFUSED = {
    **READ_BATCH_SIZE,
    "divide_by_the_batch_size": lambda xp, h: h / h.shape[0],  # a literal from the shape
    "row_index": lambda xp, h: h * xp.arange(h.shape[0])[:, None],
    "numpy_row_index": lambda xp, h: h * np.arange(h.shape[0], dtype=np.float32)[:, None],
    "random_draw": lambda xp, h: h * jax.random.normal(jax.random.PRNGKey(0), h.shape),
    "batch_mean": lambda xp, h: h - xp.mean(h, axis=0, keepdims=True),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_steps_that_read_the_batch_size_or_other_examples_are_refused(name):
    assert not proven(lambda x: REFUSED[name](jnp, x))


def test_the_tape_takes_per_example_jacobians_unchecked_only_where_proven():
    """Eagerly and under gk.jit, a proven graph and one that reads the batch's size behind a
    relu both give the batch's Jacobians at every call, whatever the values."""
    for names in (["dense_relu", "tanh"], ["dense_relu", "count_behind_relu"]):
        f = lambda x, names=names: run(jnp, names, x)  # noqa: E731

        def taped(x, names=names):
            x = gk.Tensor(x)
            with gk.GradientTape() as tape:
                tape.watch(x)
                y = run(gnp, names, x)
            return tape.batch_jacobian(y, x)

        compiled = gk.jit(taped)
        for x in VALUES + VALUES:
            want = diagonal_blocks(f, x)
            np.testing.assert_allclose(np.asarray(taped(jnp.asarray(x)).numpy()), want, rtol=2e-5, atol=1e-5)
            np.testing.assert_allclose(compiled(jnp.asarray(x)), want, rtol=2e-5, atol=1e-5)
