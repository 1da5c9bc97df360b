"""Keras fills a layer's mask arguments by its rule (``Layer.__call__`` step 6): ``mask=`` from the
only tensor argument; with several tensor arguments (an RNN given ``initial_state=``), only the
``<name>_mask=`` parameters the call declares. Oracles: hand-computed sums, the same GRU run on an
input that carries no mask, and Keras itself where TensorFlow is installed."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import gradkit.tf as gtf

IDS = np.array([[1, 2, 0, 0], [3, 0, 0, 0]], "int32")  # 0 = padding
H0 = np.random.RandomState(0).randn(2, 3).astype("float32")


def _custom_layers(tf):
    class MaskedSum(tf.keras.layers.Layer):
        def call(self, x, y, mask=None):
            s = x + y
            if mask is not None:
                s = s * tf.cast(mask, s.dtype)[..., None]
            return tf.reduce_sum(s, axis=1)

    class TwoMasks(tf.keras.layers.Layer):
        def call(self, a, b, a_mask=None, b_mask=None):
            s = tf.reduce_sum(a, axis=[1, 2]) * 0
            if a_mask is not None:
                s = s + tf.reduce_sum(tf.cast(a_mask, "float32"), 1)
            if b_mask is not None:
                s = s + 100 * tf.reduce_sum(tf.cast(b_mask, "float32"), 1)
            return s

    x = tf.keras.layers.Embedding(6, 2, mask_zero=True, embeddings_initializer="ones")(tf.constant(IDS))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # Keras: these layers drop the mask
        return np.asarray(MaskedSum()(x, tf.ones_like(x))), np.asarray(TwoMasks()(x, x))


def _decoder(tf, masked):
    emb = tf.keras.layers.Embedding(6, 4, mask_zero=masked, embeddings_initializer="glorot_uniform")
    gru = tf.keras.layers.GRU(3, return_sequences=True)
    emb.build((None, 4))
    gru.build((None, 4, 4))
    rng = np.random.RandomState(1)
    emb.set_weights([rng.randn(6, 4).astype("float32") * 0.5])
    gru.set_weights([rng.randn(*w.shape).astype("float32") * 0.5 for w in gru.get_weights()])
    with tf.GradientTape() as tape:
        y = gru(emb(tf.constant(IDS)), initial_state=tf.constant(H0))
        loss = tf.reduce_sum(y**2)
    return np.asarray(y), [np.asarray(g) for g in tape.gradient(loss, gru.trainable_variables)]


def test_several_tensor_arguments_fill_only_their_named_masks():
    summed, named = _custom_layers(gtf)
    # Unmasked: each of the 4 steps adds (1 + 1) per feature; named: 1 + 100 per kept step.
    np.testing.assert_array_equal(summed, np.full((2, 2), 8.0))
    np.testing.assert_array_equal(named, [2 + 200, 1 + 100])


def test_an_rnn_given_initial_state_runs_unmasked_as_in_keras():
    masked_y, masked_g = _decoder(gtf, masked=True)
    plain_y, plain_g = _decoder(gtf, masked=False)
    np.testing.assert_allclose(masked_y, plain_y, rtol=1e-6)
    for a, b in zip(masked_g, plain_g):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_against_keras():
    tf = pytest.importorskip("tensorflow")
    for ours, theirs in zip(_custom_layers(gtf), _custom_layers(tf)):
        np.testing.assert_allclose(ours, theirs)
    ours_y, ours_g = _decoder(gtf, masked=True)
    theirs_y, theirs_g = _decoder(tf, masked=True)
    np.testing.assert_allclose(ours_y, theirs_y, rtol=1e-5, atol=1e-6)
    for a, b in zip(ours_g, theirs_g):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
