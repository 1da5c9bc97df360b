"""``MultiHeadAttention`` on inputs of rank 4 and 5 attending over ``attention_axes`` (the default:
every axis between batch and features; one axis; several, in any order): outputs, attention
scores, gradients with respect to the input and every weight, an ``attention_mask``, dropout's
shape, and the config, against Keras on TensorFlow with the same weights (skipped without it),
and one case against an explicit rewrite in NumPy."""

import numpy as np
import pytest

import gradkit.tf as gtf

_CASES = [
    ((2, 3, 4, 6), None),
    ((2, 3, 4, 6), (2,)),
    ((2, 3, 4, 6), (-2,)),
    ((2, 3, 4, 6), (2, 1)),
    ((2, 2, 3, 2, 6), (1, 3)),
]


def _run(tf, shape, axes, weights=None, mask=None):
    rng = np.random.RandomState(len(shape) + (0 if axes is None else sum(axes)))
    x = rng.randn(*shape).astype(np.float32)
    y = rng.randn(*shape[:-1], 5).astype(np.float32)
    layer = tf.keras.layers.MultiHeadAttention(2, 3, attention_axes=axes)
    layer(x, y)
    if weights is not None:
        layer.set_weights(weights)
    xv = tf.Variable(x)
    with tf.GradientTape() as tape:
        out, scores = layer(xv, y, attention_mask=mask, return_attention_scores=True)
        loss = tf.reduce_sum(tf.sin(out))
    grads = tape.gradient(loss, [xv, *layer.trainable_weights])
    return layer.get_weights(), {
        "out": np.asarray(out),
        "scores": np.asarray(scores),
        "grads": [np.asarray(g) for g in grads],
        "axes": layer.get_config()["attention_axes"],
    }


@pytest.mark.parametrize(("shape", "axes"), _CASES)
def test_attention_axes_as_keras(shape, axes):
    tf = pytest.importorskip("tensorflow")
    weights, want = _run(tf, shape, axes)
    _, got = _run(gtf, shape, axes, weights)
    assert tuple(got["axes"]) == tuple(want["axes"])
    assert got["scores"].shape == want["scores"].shape
    np.testing.assert_allclose(got["out"], want["out"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got["scores"], want["scores"], rtol=1e-5, atol=1e-6)
    for g, w in zip(got["grads"], want["grads"]):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


def test_attention_mask_over_two_axes_as_keras():
    mask = np.random.RandomState(3).rand(2, 3, 4, 3, 4) > 0.3  # (batch, query H, W, key H, W)
    tf = pytest.importorskip("tensorflow")
    weights, want = _run(tf, (2, 3, 4, 6), None, mask=mask)
    _, got = _run(gtf, (2, 3, 4, 6), None, weights, mask=mask)
    np.testing.assert_allclose(got["out"], want["out"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got["scores"], want["scores"], rtol=1e-5, atol=1e-6)


def test_one_attention_axis_by_hand():
    # Attending over axis 2 of (batch, X, T, features) is rank-3 attention of each (batch, x) row.
    weights, got = _run(gtf, (2, 3, 4, 6), (2,))
    wq, bq, wk, bk, wv, bv, wo, bo = weights
    rng = np.random.RandomState(4 + 2)
    x = rng.randn(2, 3, 4, 6).astype(np.float32)
    y = rng.randn(2, 3, 4, 5).astype(np.float32)
    q = (np.einsum("bxtf,fnh->bxtnh", x, wq) + bq) / np.sqrt(3.0)
    k = np.einsum("bxsf,fnh->bxsnh", y, wk) + bk
    v = np.einsum("bxsf,fnh->bxsnh", y, wv) + bv
    logits = np.einsum("bxsnh,bxtnh->bxnts", k, q)
    probs = np.exp(logits - logits.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    out = np.einsum("nvo,bxtnv->bxto", wo, np.einsum("bxnts,bxsnv->bxtnv", probs, v)) + bo
    np.testing.assert_allclose(got["scores"], probs, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got["out"], out, rtol=1e-5, atol=1e-5)


def test_dropout_over_attention_axes_keeps_the_scores_shape():
    layer = gtf.keras.layers.MultiHeadAttention(2, 3, dropout=0.5, attention_axes=(1, 2))
    x = gtf.ones([2, 3, 4, 6])
    out, scores = layer(x, x, training=True, return_attention_scores=True)
    assert out.shape == (2, 3, 4, 6) and scores.shape == (2, 2, 3, 4, 3, 4)
