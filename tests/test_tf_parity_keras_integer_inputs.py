"""Keras layers given integer inputs, against Keras 3 on TensorFlow: the recurrent layers,
EinsumDense and MultiHeadAttention compute them in float32 (Keras' ops promote them against the
float32 weights); MaxPooling2D keeps the integers. LayerNormalization computes them in float32
too, where Keras' TensorFlow backend takes integer moments (NumPy is its oracle)."""

import numpy as np
import pytest

keras = pytest.importorskip("keras")
pytest.importorskip("tensorflow")

import gradkit.tf as gtf  # noqa: E402

X3 = (np.arange(24, dtype=np.int32).reshape(2, 3, 4) % 5) - 2
X4 = (np.arange(2 * 4 * 4 * 3, dtype=np.int32).reshape(2, 4, 4, 3) % 7) - 3


def _layers(k):
    return {
        "lstm": (lambda: k.layers.LSTM(3, return_sequences=True), X3),
        "gru": (lambda: k.layers.GRU(3), X3),
        "simple_rnn": (lambda: k.layers.SimpleRNN(3), X3),
        "bidirectional": (lambda: k.layers.Bidirectional(k.layers.LSTM(2)), X3),
        "rnn_of_cells": (lambda: k.layers.RNN([k.layers.LSTMCell(2), k.layers.GRUCell(2)]), X3),
        "einsum_dense": (lambda: k.layers.EinsumDense("abc,cd->abd", (3, 2), bias_axes="d"), X3),
        "max_pooling2d": (lambda: k.layers.MaxPooling2D(2), X4),
    }


@pytest.mark.parametrize("name", sorted(_layers(keras)))
def test_integer_inputs_match_keras(name):
    make_theirs, x = _layers(keras)[name]
    make_ours, _ = _layers(gtf.keras)[name]
    theirs, ours = make_theirs(), make_ours()
    expected = theirs(x)
    ours(x)  # builds the weights
    ours.set_weights(theirs.get_weights())
    got = ours(x)
    assert str(got.dtype.name) == str(expected.dtype.name)
    np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=1e-5, atol=1e-5)


def test_multi_head_attention_of_integer_inputs_matches_keras():
    q, v = X3, (X3[:, :2] * 2).astype(np.int32)
    theirs = keras.layers.MultiHeadAttention(num_heads=2, key_dim=2)
    ours = gtf.keras.layers.MultiHeadAttention(num_heads=2, key_dim=2)
    expected = theirs(q, v)
    ours(q, v)
    ours.set_weights(theirs.get_weights())
    got = ours(q, v)
    assert got.dtype.name == "float32"
    np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=1e-5, atol=1e-5)


def test_layer_normalization_of_integer_inputs_is_that_of_their_float32_values():
    got = gtf.keras.layers.LayerNormalization(epsilon=1e-3)(X3)
    x = X3.astype(np.float32)
    mean, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    assert got.dtype.name == "float32"
    np.testing.assert_allclose(np.asarray(got), (x - mean) / np.sqrt(var + 1e-3), rtol=1e-5, atol=1e-5)
