"""``nn.BatchNorm`` in training with a mask, on a raw watched array: the gradient through the
masked batch statistics is recorded (Keras' weighted moments). Oracle: ``jax.grad`` of the same
normalization written in jnp."""

import jax
import jax.numpy as jnp
import numpy as np

import gradkit as gk
from gradkit import nn

gnp = gk.numpy
RNG = np.random.default_rng(0)
X = jnp.asarray(RNG.standard_normal((3, 4, 2)).astype(np.float32))
MASK = jnp.array([[1, 1, 0, 0], [1, 1, 1, 0], [1, 0, 0, 0]], bool)
W = jnp.asarray(RNG.standard_normal(X.shape).astype(np.float32))


def _reference(x):
    w = jnp.broadcast_to(MASK[..., None].astype(x.dtype), x.shape)
    total = w.sum((0, 1), keepdims=True) + 1e-7
    mean = (w * x).sum((0, 1), keepdims=True) / total
    var = (w * jnp.square(w * x - mean)).sum((0, 1), keepdims=True) / total
    return (x - mean) / jnp.sqrt(var + 1e-3)


def test_the_gradient_for_a_raw_watched_array_goes_through_the_masked_statistics():
    want = jax.grad(lambda x: jnp.sum(W * jnp.tanh(_reference(x))))(X)
    layer = nn.BatchNorm()
    with gk.GradientTape() as tape:
        tape.watch(X)
        loss = gnp.sum(W * gnp.tanh(layer(X, training=True, mask=MASK)))
    np.testing.assert_allclose(tape.gradient(loss, X), want, rtol=1e-4, atol=1e-5)
