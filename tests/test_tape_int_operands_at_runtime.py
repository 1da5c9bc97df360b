"""A Python int operand of arithmetic or a comparison on a recorded float tensor (``loss / n``,
``w * step``, ``w < step``, ``gnp.maximum(w, k)``) is a runtime value of the compiled program: a
loop whose step counter enters the loss compiles once. Oracles: the same loss in plain JAX
(values and gradients, step by step) and jax.monitoring's compile events."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from _oracles import compile_counter

import gradkit as gk
import gradkit.numpy as gnp
import gradkit.tf as tf

_W0 = np.random.default_rng(3).normal(size=(4, 3)).astype(np.float32)


def _loss(total, maximum, as_float, w, s):
    return (
        total(w * s) / (s + 1)
        + total(as_float(w < s))
        + total(s - w)
        + total(w // (s + 2))
        + total(w % s)
        + total(w**2)
        + total(maximum(w, s))
    )


def _tf_loss(w, s):
    return _loss(tf.reduce_sum, gnp.maximum, lambda b: tf.cast(b, tf.float32), w, s)


def _jax_loss(w, s):
    return _loss(jnp.sum, jnp.maximum, lambda b: b.astype(jnp.float32), w, s)


def test_a_step_counter_in_the_loss_compiles_once_and_matches_jax():
    w = tf.Variable(_W0)

    def step(s):
        with tf.GradientTape() as tape:
            loss = _tf_loss(w, s)
        return float(loss), tape.gradient(loss, w).numpy()

    # Numbers no other test uses: the warm-up converts new numbers to device scalars too (jax
    # compiles its conversion once), which earlier tests' cached numbers would skip.
    first = 7001
    for s in range(first, first + 3):
        step(s)
    with compile_counter() as compiles:
        results = [step(s) for s in range(first + 3, first + 8)]
    assert len(compiles) == 0
    for s, (value, grad) in zip(range(first + 3, first + 8), results):
        oracle_value, oracle_grad = jax.value_and_grad(_jax_loss)(_W0, s)
        np.testing.assert_allclose(value, float(oracle_value), rtol=1e-5)
        np.testing.assert_allclose(grad, np.asarray(oracle_grad), rtol=1e-5, atol=1e-6)


def test_an_int_operand_keeps_the_tensors_dtype_and_an_int_power_stays_exact():
    """A float16 tensor times an int stays float16 (jax's weak int); ``x ** 3`` of a negative base
    is the integer power (-8, derivative 12), not exp(3 log x)."""
    x = gk.Variable(np.float32(-2.0))
    h = gk.Variable(np.ones(2, np.float16))
    with gk.GradientTape() as tape:
        cube = x**3
        scaled = h * 3
    assert scaled.dtype == np.float16
    np.testing.assert_array_equal(np.asarray(scaled), [3.0, 3.0])
    assert float(cube) == -8.0 and float(tape.gradient(cube, x)) == 12.0


def test_ints_stay_static_beside_integer_tensors():
    """An integer tensor's arithmetic with an int keeps its known value inside tf.function (a
    size computed from tf.shape), which a traced float would lose."""

    @tf.function
    def rows_plus_one(x):
        n = tf.shape(x)[0] + 1
        return tf.zeros([n])

    assert rows_plus_one(tf.ones((3, 2))).shape == (4,)
