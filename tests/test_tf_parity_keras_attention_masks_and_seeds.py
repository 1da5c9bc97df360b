"""Keras' sequence layers where gradkit once parted from Keras 3: a functional model keeps the
padding mask of a tensor MultiHeadAttention reads (its residual ``Add`` stays masked); a query
row masked whole attends uniformly on Keras' fused path (no dropout, no scores asked) and gives
zeros on the other; layers given a ``seed`` (RNN dropout, attention dropout, the noise layers)
draw from a SeedGenerator of their own; a layer that needs an unknown axis of an even size builds
in a functional model. Oracles: hand computations (masked means, the uniform average), the
rules themselves, and Keras 3 where installed."""

import numpy as np
import pytest

import gradkit.tf as gtf

_TOKENS = np.array([[3, 5, 2, 0, 0], [1, 0, 0, 0, 0]], np.int32)


def _residual_block(K):
    i = K.Input((5,), dtype="int32")
    e = K.layers.Embedding(8, 4, mask_zero=True, embeddings_initializer="glorot_uniform")(i)
    a = K.layers.MultiHeadAttention(2, 2)(e, e)
    s = K.layers.Add()([e, a])
    return K.Model(i, [s, K.layers.GlobalAveragePooling1D()(s)])


def test_a_residual_add_after_attention_keeps_the_padding_mask():
    sequence, pooled = (np.asarray(t) for t in _residual_block(gtf.keras)(gtf.constant(_TOKENS)))
    real = (_TOKENS != 0)[..., None]
    # GlobalAveragePooling1D of a masked sequence: the mean over the real tokens only (by hand).
    np.testing.assert_allclose(pooled, (sequence * real).sum(1) / real.sum(1), rtol=1e-5, atol=1e-7)


def test_the_residual_block_matches_keras():
    keras = pytest.importorskip("keras")
    theirs = _residual_block(keras)
    ours = _residual_block(gtf.keras)
    ours.set_weights(theirs.get_weights())
    real = (_TOKENS != 0)[..., None]
    (ts, tp), (os_, op) = ([np.asarray(t) for t in m(x)] for m, x in ((theirs, _TOKENS), (ours, gtf.constant(_TOKENS))))
    np.testing.assert_allclose(os_ * real, ts * real, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(op, tp, rtol=1e-5, atol=1e-6)


_Q = np.random.default_rng(0).normal(size=(1, 3, 4)).astype(np.float32)
_MASK = np.array([[[True, True, False], [False, False, False], [True, False, True]]])


def _masked_rows(K, convert, **options):
    layer = K.layers.MultiHeadAttention(1, 4, **options)
    out = layer(convert(_Q), convert(_Q), attention_mask=convert(_MASK))
    scores = layer(convert(_Q), convert(_Q), attention_mask=convert(_MASK), return_attention_scores=True)[1]
    return layer, np.asarray(out), np.asarray(scores)


def test_a_query_row_masked_whole_attends_uniformly_on_the_fused_path():
    layer, out, scores = _masked_rows(gtf.keras, gtf.constant)
    v = _Q[0] @ layer.get_weights()[4].reshape(4, 4) + layer.get_weights()[5].reshape(4)  # value projection
    o_kernel, o_bias = layer.get_weights()[6].reshape(4, 4), layer.get_weights()[7]
    # Row 1 masked whole: a uniform average of the values, then the output projection (by hand).
    np.testing.assert_allclose(out[0, 1], v.mean(0) @ o_kernel + o_bias, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(scores[0, 0, 1], np.zeros(3))  # asked for the scores: zeros, as Keras' other path


def test_masked_rows_match_keras_on_both_paths():
    keras = pytest.importorskip("keras")
    for options in ({}, {"dropout": 0.5}):
        theirs = _masked_rows(keras, np.asarray, **options)
        ours_layer = gtf.keras.layers.MultiHeadAttention(1, 4, **options)
        ours_layer(gtf.constant(_Q), gtf.constant(_Q))
        ours_layer.set_weights(theirs[0].get_weights())
        ours = ours_layer(gtf.constant(_Q), gtf.constant(_Q), attention_mask=gtf.constant(_MASK))
        np.testing.assert_allclose(np.asarray(ours), theirs[1], rtol=1e-5, atol=1e-6, err_msg=str(options))


_X = np.random.default_rng(0).normal(size=(4, 5, 6)).astype(np.float32)


def _same_first_draws(K, convert):
    L = K.layers
    makers = {
        "lstm": lambda: L.LSTM(3, dropout=0.5, recurrent_dropout=0.5, seed=7),
        "gru": lambda: L.GRU(3, dropout=0.5, seed=7),
        "mha": lambda: L.MultiHeadAttention(2, 2, dropout=0.5, seed=7),
        "attention": lambda: L.Attention(dropout=0.5, seed=7),
        "gaussian noise": lambda: L.GaussianNoise(0.5, seed=7),
        "spatial dropout": lambda: L.SpatialDropout1D(0.5, seed=7),
    }
    out = {}
    for name, make in makers.items():

        def call(layer, name=name, **kwargs):
            x = convert(_X)
            if name == "mha":
                return np.asarray(layer(x, x, **kwargs))
            if name == "attention":
                return np.asarray(layer([x, x], **kwargs))
            return np.asarray(layer(x, **kwargs))

        first, second = make(), make()
        call(first)
        call(second)
        if first.get_weights():
            second.set_weights(first.get_weights())
        a, b = call(first, training=True), call(second, training=True)
        out[name] = (np.allclose(a, b), np.allclose(a, call(first, training=True)))
    return out


def test_layers_with_one_seed_draw_alike_then_anew():
    # Two layers made with seed=7 draw the same first masks (each from its own SeedGenerator(7)),
    # and a layer's next call draws new ones.
    results = _same_first_draws(gtf.keras, gtf.constant)
    assert len(results) == 6 and all(v == (True, False) for v in results.values()), results


def test_seeded_layers_match_keras():
    keras = pytest.importorskip("keras")
    assert _same_first_draws(gtf.keras, gtf.constant) == _same_first_draws(keras, np.asarray)


def _even_axis_model(K):
    i = K.Input((None, 4))
    return K.Model(i, K.layers.Reshape((-1, 8))(i))


def test_a_layer_needing_an_even_unknown_axis_builds():
    model = _even_axis_model(gtf.keras)
    assert model.output_shape == (None, None, 8)
    np.testing.assert_array_equal(
        np.asarray(model(np.arange(48, dtype=np.float32).reshape(2, 6, 4))), np.arange(48).reshape(2, 3, 8)
    )
    keras = pytest.importorskip("keras")
    assert _even_axis_model(keras).output_shape == model.output_shape
