"""Keras' Multiply, Maximum and Minimum read their inputs' masks (Masking, Embedding(mask_zero)):
a masked entry counts as 1 in a product (0 where every input is masked) and as the other input's
value in a maximum or minimum; SpatialDropout passes the mask on. Oracles: Keras' rules by hand
(NumPy), and Keras itself where TensorFlow is installed."""

import numpy as np
import pytest

import gradkit.tf as gtf

X1 = np.random.RandomState(0).randn(2, 4, 3).astype(np.float32)
X2 = np.random.RandomState(1).randn(2, 4, 3).astype(np.float32)
X1[0, 2:] = 0
X1[1, 3] = 0
X2[0, 1:] = 0
X2[1, :] = 0
W = np.random.RandomState(2).randn(2, 4, 3).astype(np.float32)


def _merged(tf, kind):
    layers = tf.keras.layers
    a, b = tf.constant(X1), tf.constant(X2)
    with tf.GradientTape() as tape:
        tape.watch([a, b])
        z = getattr(layers, kind)()([layers.Masking(0.0)(a), layers.Masking(0.0)(b)])
        loss = tf.reduce_sum(z * W)
    return [np.asarray(v) for v in (z, *tape.gradient(loss, [a, b]))]


def _by_hand(kind):
    m1 = np.any(X1 != 0, axis=-1, keepdims=True) & np.ones_like(X1, bool)
    m2 = np.any(X2 != 0, axis=-1, keepdims=True) & np.ones_like(X2, bool)
    if kind == "Multiply":
        out = np.where(m1, X1, 1) * np.where(m2, X2, 1)
        return np.where(m1 | m2, out, 0)
    op = np.maximum if kind == "Maximum" else np.minimum
    first = np.where(m1, X1, np.where(m2, X2, X1))  # where the first is masked, the second's
    second = np.where(m2, X2, first)
    return op(first, second)


@pytest.mark.parametrize("kind", ["Multiply", "Maximum", "Minimum"])
def test_merges_read_the_masks(kind):
    np.testing.assert_allclose(_merged(gtf, kind)[0], _by_hand(kind), rtol=1e-6)


@pytest.mark.parametrize("kind", ["Multiply", "Maximum", "Minimum", "Add", "Average"])
def test_merges_with_masks_match_keras(kind):
    rtf = pytest.importorskip("tensorflow")
    for ours, theirs in zip(_merged(gtf, kind), _merged(rtf, kind)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)


def test_spatial_dropout_passes_the_mask_on():
    ids = np.array([[3, 5, 0, 0], [2, 0, 0, 0]], np.int32)
    embedded = gtf.keras.layers.Embedding(8, 4, mask_zero=True)(ids)
    dropped = gtf.keras.layers.SpatialDropout1D(0.5, seed=1)(embedded, training=True)
    np.testing.assert_array_equal(np.asarray(dropped._keras_mask), ids != 0)


@pytest.mark.parametrize("mask_zero", [False, True])
def test_embedding_supports_masking_as_keras(mask_zero):
    assert gtf.keras.layers.Embedding(8, 4, mask_zero=mask_zero).supports_masking is mask_zero
