"""``MultiHeadAttention``'s ``attention_mask`` of every rank Keras broadcasts to the scores
``(batch, heads, T, S)``: ``(T, S)``, ``(batch, T, S)``, and ``(batch, heads, T, S)`` (one mask per
head, the padding layout ``(batch, 1, T, S)``), alone, with a causal mask and with a value mask.
Oracles: a NumPy rewrite of the attention with each head's own mask, and Keras 3 where installed."""

import numpy as np
import pytest

import gradkit.tf as gtf

RNG = np.random.RandomState(0)
QUERY = RNG.randn(2, 4, 5).astype(np.float32)
VALUE = RNG.randn(2, 6, 3).astype(np.float32)
MASKS = {
    "per_head": RNG.rand(2, 2, 4, 6) > 0.4,
    "padding": RNG.rand(2, 1, 4, 6) > 0.4,
    "shared": RNG.rand(1, 1, 4, 6) > 0.4,
    "two_axes": RNG.rand(4, 6) > 0.4,
    "three_axes": RNG.rand(2, 4, 6) > 0.3,
}


def _layer(keras, weights=None):
    layer = keras.layers.MultiHeadAttention(2, 3)
    layer.build(QUERY.shape, VALUE.shape)
    if weights is not None:
        layer.set_weights(weights)
    return layer


def _numpy_attention(weights, mask, causal):
    wq, bq, wk, bk, wv, bv, wo, bo = (np.asarray(w, np.float64) for w in weights)
    q = np.einsum("btf,fnh->btnh", QUERY, wq) + bq
    k = np.einsum("bsf,fnh->bsnh", VALUE, wk) + bk
    v = np.einsum("bsf,fnh->bsnh", VALUE, wv) + bv
    logits = np.einsum("bsnh,btnh->bnts", k, q / np.sqrt(3.0))
    keep = mask.reshape((1,) * (4 - mask.ndim) + mask.shape) if mask.ndim != 3 else mask[:, None]
    if causal:
        keep = keep & np.tril(np.ones((4, 6), bool))
    logits = np.where(keep, logits, -1e9)
    probs = np.exp(logits - logits.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    out = np.einsum("bnts,bsnh->btnh", probs, v)
    return np.einsum("btnh,nhf->btf", out, wo) + bo


@pytest.mark.parametrize("name", sorted(MASKS))
@pytest.mark.parametrize("causal", [False, True])
def test_attention_masks_of_every_rank(name, causal):
    layer = _layer(gtf.keras)
    weights = layer.get_weights()
    mask = MASKS[name]
    got = np.asarray(layer(gtf.constant(QUERY), gtf.constant(VALUE), attention_mask=mask, use_causal_mask=causal))
    np.testing.assert_allclose(got, _numpy_attention(weights, mask, causal), rtol=1e-4, atol=1e-5)
    keras = pytest.importorskip("keras")
    want = _layer(keras, weights)(QUERY, VALUE, attention_mask=mask, use_causal_mask=causal)
    np.testing.assert_allclose(got, np.asarray(want), rtol=1e-5, atol=1e-6)


def test_a_per_head_mask_with_a_value_mask_and_scores():
    layer = _layer(gtf.keras)
    weights = layer.get_weights()
    value_mask = RNG.rand(2, 6) > 0.3
    mask = MASKS["per_head"]
    out, scores = layer(
        gtf.constant(QUERY),
        gtf.constant(VALUE),
        attention_mask=mask,
        value_mask=value_mask,
        return_attention_scores=True,
    )
    # Keras combines the value mask, as (batch, 1, S), with the attention mask by NumPy's broadcasting,
    # aligned from the right: against (batch, heads, T, S) its batch axis meets the heads axis.
    combined = mask & value_mask[None, :, None, :]
    np.testing.assert_allclose(np.asarray(out), _numpy_attention(weights, combined, False), rtol=1e-4, atol=1e-5)
    assert np.all(np.asarray(scores)[~np.broadcast_to(combined, scores.shape)] == 0)


def test_a_mask_that_does_not_broadcast_is_refused():
    layer = _layer(gtf.keras)
    with pytest.raises(ValueError, match=r"\[gradkit\].*attention_mask has shape \(2, 3, 4, 6\)"):
        layer(gtf.constant(QUERY), gtf.constant(VALUE), attention_mask=np.ones((2, 3, 4, 6), bool))
