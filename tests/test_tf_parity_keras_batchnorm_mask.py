"""Keras' BatchNormalization with a mask (given, or an Embedding's with ``mask_zero`` in a
Sequential) leaves the masked entries out of the batch statistics: outputs, moving statistics
and gradients against Keras 3 on TensorFlow, and the weighted moments by hand. Also SGD's
``momentum`` range."""

import numpy as np
import pytest

import gradkit.tf as gtf

X = np.array(
    [[[1.0, 2.0], [3.0, -1.0], [0.0, 0.0], [0.0, 0.0]], [[2.0, 1.0], [-2.0, 4.0], [5.0, 5.0], [9.0, 9.0]]], np.float32
)
MASK = np.array([[1, 1, 0, 0], [1, 1, 1, 0]], bool)


def test_masked_batch_statistics_by_hand():
    bn = gtf.keras.layers.BatchNormalization(momentum=0.5, epsilon=1e-3)
    y = bn(gtf.constant(X), training=True, mask=gtf.constant(MASK)).numpy()
    kept = X[MASK]  # the 5 unmasked rows
    mean, var = kept.mean(0), kept.var(0)
    np.testing.assert_allclose(y, (X - mean) / np.sqrt(var + 1e-3), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(bn.moving_mean.numpy(), 0.5 * mean, rtol=1e-5)
    np.testing.assert_allclose(bn.moving_variance.numpy(), 0.5 + 0.5 * var, rtol=1e-5)


def _program(tf):
    ids = np.array([[1, 2, 0, 0], [1, 3, 4, 0]])
    table = np.array([[0.0, 0.0], [0.3, -1.0], [2.0, 0.5], [1.0, 1.0], [9.0, 9.0]], np.float32)
    model = tf.keras.Sequential([tf.keras.layers.Embedding(5, 2, mask_zero=True), tf.keras.layers.BatchNormalization()])
    model(tf.constant(ids))
    model.layers[0].set_weights([table])
    with tf.GradientTape() as tape:
        y = model(tf.constant(ids), training=True)
        loss = tf.reduce_sum(y * tf.constant(np.arange(16, dtype=np.float32).reshape(2, 4, 2) / 10))
    grads = tape.gradient(loss, model.trainable_variables)
    return [y.numpy(), model.layers[1].moving_mean.numpy(), *[tf.convert_to_tensor(g).numpy() for g in grads]]


def test_an_embeddings_mask_reaches_batch_normalization_as_in_keras():
    tf_real = pytest.importorskip("tensorflow")
    for got, want in zip(_program(gtf), _program(tf_real)):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_sgd_refuses_momentum_outside_0_1():
    with pytest.raises(ValueError, match=r"^\[gradkit\] SGD got momentum=1.5"):
        gtf.keras.optimizers.SGD(momentum=1.5)
    tf_real = pytest.importorskip("tensorflow")
    with pytest.raises(ValueError):
        tf_real.keras.optimizers.SGD(momentum=1.5)
