"""``tf.nn``'s activations take their tensor as ``features=``; a tensor ``epsilon`` of
``l2_normalize`` / ``batch_normalization`` is differentiated (and traced inside tf.function), as in
TensorFlow (compared where installed; the gradient also by central differences)."""

import numpy as np
import pytest

import gradkit.tf as gtf


@pytest.mark.parametrize("name", ["relu", "relu6", "elu", "softplus", "softsign", "selu", "silu"])
def test_activations_take_features_by_keyword(name):
    x = np.array([-1.0, 0.5, 7.0], np.float32)
    got = getattr(gtf.nn, name)(features=gtf.constant(x)).numpy()
    np.testing.assert_allclose(got, getattr(gtf.nn, name)(gtf.constant(x)).numpy())
    tf = pytest.importorskip("tensorflow")
    np.testing.assert_allclose(got, getattr(tf.nn, name)(features=tf.constant(x)).numpy(), rtol=1e-6)


def _loss(tf, eps):
    x = tf.constant([0.01, 0.02])
    return tf.reduce_sum(tf.nn.l2_normalize(x, epsilon=eps)) + tf.reduce_sum(
        tf.nn.batch_normalization(x, 0.0, 0.001, None, None, eps)
    )


def test_a_tensor_epsilon_is_differentiated():
    eps = gtf.Variable(0.1)
    with gtf.GradientTape() as tape:
        loss = _loss(gtf, eps)
    got = float(tape.gradient(loss, eps))
    h = 1e-3
    numeric = (float(_loss(gtf, 0.1 + h)) - float(_loss(gtf, 0.1 - h))) / (2 * h)
    np.testing.assert_allclose(got, numeric, rtol=1e-3)
    traced = gtf.function(lambda e: _loss(gtf, e))
    np.testing.assert_allclose(float(traced(gtf.constant(0.1))), float(_loss(gtf, 0.1)), rtol=1e-6)
    tf = pytest.importorskip("tensorflow")
    teps = tf.Variable(0.1)
    with tf.GradientTape() as tape:
        loss = _loss(tf, teps)
    np.testing.assert_allclose(got, float(tape.gradient(loss, teps)), rtol=1e-5)
