"""``gk.nn.BatchNorm`` at its edges: in inference it is recorded for a raw watched array (the
moving statistics are raw arrays too, so its arithmetic goes through gk.numpy); a call of
another rank than it was built for is refused (its axis is counted for the built rank); a
training flag traced by ``gk.jit`` gets a ``[gradkit]`` error that names static_argnums.
Oracles: a pure-JAX rewrite and a hand derivation."""

import jax.numpy as jnp
import numpy as np
import pytest

import gradkit as gk
from gradkit import nn

gnp = gk.numpy


def test_inference_on_a_raw_watched_array_is_recorded():
    x = jnp.array([[1.0, 2.0], [3.0, 5.0]])
    bn = nn.BatchNorm()
    bn(x)  # built: moving mean 0, moving variance 1
    with gk.GradientTape() as tape:
        tape.watch(x)
        loss = gnp.sum(bn(x, training=False) * jnp.array([[1.0, 2.0], [3.0, 4.0]]))
    # y = (x - 0) / sqrt(1 + eps) (gamma 1, beta 0): dL/dx = w / sqrt(1 + eps) (a hand derivation).
    expected = np.array([[1.0, 2.0], [3.0, 4.0]]) / np.sqrt(1 + bn.epsilon)
    np.testing.assert_allclose(np.asarray(tape.gradient(loss, x)), expected, rtol=1e-6)


def test_a_call_of_another_rank_is_refused():
    bn = nn.BatchNorm(axis=-1)
    bn(jnp.ones((4, 3)))
    with pytest.raises(ValueError, match=r"\[gradkit\] BatchNorm .* built for inputs of rank 2"):
        bn(jnp.ones((2, 3, 3)), training=True)
    np.testing.assert_array_equal(np.asarray(bn.moving_mean.value), np.zeros(3))  # unchanged


def test_a_traced_training_flag_names_static_argnums():
    bn = nn.BatchNorm()
    x = jnp.ones((4, 3))
    bn(x)
    with pytest.raises(TypeError, match=r"\[gradkit\] BatchNorm .* traced training flag.*static_argnums"):
        gk.jit(lambda x, training: bn(x, training=training))(x, True)
    assert gk.jit(lambda x, t: bn(x, training=t), static_argnums=1)(x, True).shape == (4, 3)
