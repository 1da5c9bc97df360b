"""A loop whose index walks an array (``X[i * 4:(i + 1) * 4]``, ``v[i].assign(row)``,
``tf.slice(x, [i, 0], ...)``, ``tf.roll(x, i)``) compiles its programs once, not once per
position: outside a jax trace the starts are runtime inputs of the program.

Each loop runs a few warm-up steps, then must compile nothing while its index takes new values;
its values and gradients are checked against the same program written in plain JAX with static
slices (the oracle), step by step.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _oracles import compile_counter

import gradkit as gk
import gradkit.numpy as gnp
import gradkit.tf as tf

WARM_UP, STEPS = 4, 5
_X0 = np.random.default_rng(0).normal(size=(12, 3)).astype(np.float32)
_W0 = np.random.default_rng(1).normal(size=(3, 2)).astype(np.float32)


def _run_loop(step):
    """Run ``step(i)`` for the warm-up positions, then for new ones while counting compiles;
    returns the compiles of the second part and every step's result."""
    results = [step(i) for i in range(1, 1 + WARM_UP)]
    with compile_counter() as compiles:
        results += [step(i) for i in range(1 + WARM_UP, 1 + WARM_UP + STEPS)]
    return len(compiles), results


def _close(ours, oracle):
    for a, b in zip(jax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(oracle)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)


def _tape_minibatch():
    X, W = tf.Variable(_X0), tf.Variable(_W0)

    def step(i):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.tanh(tf.matmul(X[i : i + 2], W)))
        return [g.numpy() for g in tape.gradient(loss, [X, W])]

    def oracle(i):
        return jax.grad(lambda x, w: jnp.sum(jnp.tanh(x[i : i + 2] @ w)), argnums=(0, 1))(_X0, _W0)

    return step, oracle


def _tape_row_and_column():
    X = tf.Variable(_X0)

    def step(i):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(X[i] ** 2) + tf.reduce_sum(X[:, i % 3 : i % 3 + 1] * X[i - 10][None, :])
        return tape.gradient(loss, X).numpy()

    def oracle(i):
        return jax.grad(lambda x: jnp.sum(x[i] ** 2) + jnp.sum(x[:, i % 3 : i % 3 + 1] * x[i - 10][None, :]))(_X0)

    return step, oracle


def _tf_slice_and_roll():
    X = tf.Variable(_X0)

    def step(i):
        with tf.GradientTape() as tape:
            rolled = tf.roll(X, i, axis=0) * np.arange(12.0, dtype=np.float32)[:, None]
            loss = tf.reduce_sum(tf.slice(X, [i, 1], [3, -1]) ** 3) + tf.reduce_sum(rolled)
        return tape.gradient(loss, X).numpy()

    def oracle(i):
        def f(x):
            rolled = jnp.roll(x, i, axis=0) * jnp.arange(12.0)[:, None]
            return jnp.sum(x[i : i + 3, 1:] ** 3) + jnp.sum(rolled)

        return jax.grad(f)(_X0)

    return step, oracle


def _row_writes_under_tape():
    """``X[i].assign`` under a tape, the gradient through the write, and the Variable after it."""
    X, W = tf.Variable(_X0), tf.Variable(_W0)

    def step(i):
        with tf.GradientTape() as tape:
            X[i, :].assign(tf.reduce_sum(W, axis=1) * 0.5)
            X[i - 1].assign_add(tf.ones(3) * 0.25)
            loss = tf.reduce_sum(tf.matmul(X, W) ** 2)
        return tape.gradient(loss, W).numpy(), X.numpy()

    state = {"x": _X0}

    def oracle(i):
        def f(w, x):
            x = x.at[i, :].set(jnp.sum(w, axis=1) * 0.5)
            x = x.at[i - 1].add(0.25)
            return jnp.sum((x @ w) ** 2), x

        grad, state["x"] = jax.grad(f, has_aux=True)(_W0, jnp.asarray(state["x"]))
        return grad, state["x"]

    return step, oracle


def _eager_row_writes():
    """``v[i].assign``/``assign_sub`` outside any tape, and ``t.at[i].set`` of a recorded tensor."""
    X = tf.Variable(_X0)
    w = gk.Variable(_X0)

    def step(i):
        X[i].assign(np.full(3, float(i), np.float32))
        X[i - 1 : i + 1, 1:].assign_sub(np.ones((2, 2), np.float32))
        with gk.GradientTape() as tape:
            t = w * 1.0
            # A factor no other test uses: its first conversion to a device scalar (jax compiles
            # that once) falls in the warm-up, whatever ran before.
            loss = gnp.sum(t.at[i].set(t[i - 1] * (i + 0.375)) ** 2)
        return X.numpy(), tape.gradient(loss, w)

    state = {"x": _X0}

    def oracle(i):
        x = np.array(state["x"])
        x[i] = float(i)
        x[i - 1 : i + 1, 1:] -= 1.0
        state["x"] = x
        return x, jax.grad(lambda v: jnp.sum(v.at[i].set(v[i - 1] * (i + 0.375)) ** 2))(_X0)

    return step, oracle


def _image_windows_and_strided_slice():
    """A random-crop style window, a pad to a box and tf.strided_slice, under a tape; tf.roll of a
    constant outside it."""
    images = tf.Variable(np.random.default_rng(2).normal(size=(1, 8, 8, 2)).astype(np.float32))
    data = np.arange(12.0, dtype=np.float32)

    def step(i):
        top, left = i % 4, (i + 1) % 4
        with tf.GradientTape() as tape:
            crop = tf.image.crop_to_bounding_box(images, top, left, 4, 4)
            padded = tf.image.pad_to_bounding_box(crop, left, top, 8, 8)
            rows = tf.strided_slice(images, [0, i % 5 + 1, 0, 0], [1, i % 5 + 3, 8, 2])
            loss = tf.reduce_sum(padded**2 * np.arange(8.0, dtype=np.float32).reshape(1, 8, 1, 1)) + tf.reduce_sum(
                rows**3
            )
        return tape.gradient(loss, images).numpy(), tf.roll(data, i, axis=0).numpy()

    def oracle(i):
        top, left = i % 4, (i + 1) % 4
        x0 = images.numpy()

        def f(x):
            crop = x[:, top : top + 4, left : left + 4, :]
            padded = jnp.pad(crop, [(0, 0), (left, 4 - left), (top, 4 - top), (0, 0)])
            return jnp.sum(padded**2 * jnp.arange(8.0).reshape(1, 8, 1, 1)) + jnp.sum(x[:, i % 5 + 1 : i % 5 + 3] ** 3)

        return jax.grad(f)(x0), np.roll(data, i)

    return step, oracle


LOOPS = {
    "image windows, strided_slice and eager roll": _image_windows_and_strided_slice,
    "tape minibatch X[i:i+2]": _tape_minibatch,
    "tape row, column and negative index": _tape_row_and_column,
    "tf.slice and tf.roll": _tf_slice_and_roll,
    "row writes under a tape": _row_writes_under_tape,
    "eager row writes and t.at[i]": _eager_row_writes,
}


@pytest.mark.parametrize("name", sorted(LOOPS))
def test_walking_index_compiles_once_and_matches_jax(name):
    step, oracle = LOOPS[name]()
    compiles, results = _run_loop(step)
    assert compiles == 0, f"{name}: {compiles} compilations while the index walked"
    for i, ours in enumerate(results, start=1):
        _close(ours, oracle(i))


def test_walking_index_inside_gk_jit_matches_numpy():
    """Inside a compiled step the index is a constant of the trace (static): the same values."""
    x = gk.Variable(_X0)
    expected = _X0.copy()
    for i in (3, 7):

        def step(i=i):
            x[i - 1 : i + 1].assign(x[i - 1 : i + 1] * 2.0)
            return gnp.sum(x[i] ** 2)

        out = gk.jit(step)()
        expected[i - 1 : i + 1] *= 2.0
        np.testing.assert_allclose(float(out), np.sum(expected[i] ** 2), rtol=1e-6)
        np.testing.assert_allclose(np.asarray(x), expected, rtol=1e-6)
