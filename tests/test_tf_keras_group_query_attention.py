"""``tf.keras.layers.GroupQueryAttention`` against a NumPy rewrite of grouped-query attention (each
key and value head shared by a run of query heads; a sliding window; a sigmoid gate) and, where
installed, Keras 3: outputs, scores, gradients, weight paths, configs and ``.keras`` files both ways."""

import numpy as np
import pytest

import gradkit.tf as gtf

RNG = np.random.RandomState(0)
QUERY = RNG.randn(2, 4, 6).astype(np.float32)
VALUE = RNG.randn(2, 5, 6).astype(np.float32)


def _numpy_gqa(weights, kv_heads, query_heads=4, window=None, causal=False, gate=False, mask=None):
    w = [np.asarray(a, np.float64) for a in weights]
    wq, bq, wk, bk = w[:4]
    wg, bg = (w[4], w[5]) if gate else (None, None)
    wv, bv, wo, bo = w[6:] if gate else w[4:]
    q = np.einsum("btf,fnh->btnh", QUERY, wq) + bq
    k = np.einsum("bsf,fnh->bsnh", VALUE, wk) + bk
    v = np.einsum("bsf,fnh->bsnh", VALUE, wv) + bv
    repeats = query_heads // kv_heads
    k, v = np.repeat(k, repeats, axis=2), np.repeat(v, repeats, axis=2)
    logits = np.einsum("btnh,bsnh->bnts", q / np.sqrt(3.0), k)
    keep = np.ones((4, 5), bool)
    if causal:
        keep &= np.tril(np.ones((4, 5), bool))
    if window is not None:
        keep &= np.abs(np.arange(4)[:, None] - np.arange(5)[None, :]) < window
    keep = np.broadcast_to(keep, logits.shape)
    if mask is not None:
        keep = keep & mask[:, None]
    logits = np.where(keep, logits, -1e9)
    probs = np.exp(logits - logits.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    out = np.einsum("bnts,bsnh->btnh", probs, v)
    if gate:
        out = out / (1 + np.exp(-(np.einsum("btf,fnh->btnh", QUERY, wg) + bg)))
    return np.einsum("btnh,nhf->btf", out, wo) + bo, probs


CASES = {
    "two_groups": dict(num_key_value_heads=2),
    "multi_query": dict(num_key_value_heads=1),
    "multi_head": dict(num_key_value_heads=4),
    "window": dict(num_key_value_heads=2, sliding_window=2),
    "gate": dict(num_key_value_heads=2, use_gate=True),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("causal", [False, True])
def test_against_numpy(name, causal):
    options = CASES[name]
    layer = gtf.keras.layers.GroupQueryAttention(head_dim=3, num_query_heads=4, **options)
    out, scores = layer(gtf.constant(QUERY), gtf.constant(VALUE), use_causal_mask=causal, return_attention_scores=True)
    want, probs = _numpy_gqa(
        layer.get_weights(),
        options["num_key_value_heads"],
        window=options.get("sliding_window"),
        causal=causal,
        gate=options.get("use_gate", False),
    )
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.asarray(scores), probs, rtol=1e-4, atol=1e-6)


def _run(keras, tf, weights=None, **call):
    keras.backend.clear_session()
    layer = keras.layers.GroupQueryAttention(head_dim=3, num_query_heads=4, num_key_value_heads=2, use_gate=True)
    layer.build(QUERY.shape, VALUE.shape)
    if weights is not None:
        layer.set_weights(weights)
    query = tf.Variable(QUERY)
    with tf.GradientTape() as tape:
        out = layer(query, tf.constant(VALUE), **call)
        loss = tf.reduce_sum(out**2)
    return layer, np.asarray(out), np.asarray(tape.gradient(loss, query))


def test_masks_gradients_paths_and_config_as_keras():
    mask = RNG.rand(2, 4, 5) > 0.3
    layer, out, grad = _run(gtf.keras, gtf, attention_mask=mask)
    want, _ = _numpy_gqa(layer.get_weights(), 2, gate=True, mask=mask)
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-5)
    assert [w.path for w in layer.weights][::2] == [
        f"grouped_query_attention/{part}/kernel" for part in ("query", "key", "gate", "value", "attention_output")
    ]
    again = gtf.keras.layers.GroupQueryAttention.from_config(layer.get_config())
    assert again.get_config() == layer.get_config()
    keras = pytest.importorskip("keras")
    tf = pytest.importorskip("tensorflow")
    theirs, their_out, their_grad = _run(keras, tf, layer.get_weights(), attention_mask=mask)
    np.testing.assert_allclose(out, their_out, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(grad, their_grad, rtol=1e-4, atol=1e-6)
    assert [w.path for w in layer.weights] == [w.path for w in theirs.weights]
    assert layer.get_config() == theirs.get_config()


def test_keras_files_both_ways(tmp_path):
    keras = pytest.importorskip("keras")
    x = keras.Input((4, 6))
    model = keras.Model(x, keras.layers.GroupQueryAttention(3, 4, 2, name="g")(x, x))
    model.save(tmp_path / "keras.keras")
    ours = gtf.keras.models.load_model(str(tmp_path / "keras.keras"))
    want = model.predict(QUERY, verbose=0)
    np.testing.assert_allclose(np.asarray(ours(gtf.constant(QUERY))), want, rtol=1e-5, atol=1e-6)
    ours.save(str(tmp_path / "ours.keras"))
    back = keras.models.load_model(tmp_path / "ours.keras")
    np.testing.assert_allclose(back.predict(QUERY, verbose=0), want, rtol=1e-5, atol=1e-6)


def test_refusals():
    with pytest.raises(ValueError, match=r"\[gradkit\].*divisible"):
        gtf.keras.layers.GroupQueryAttention(3, 4, 3)
    with pytest.raises(ValueError, match=r"\[gradkit\].*sliding_window"):
        gtf.keras.layers.GroupQueryAttention(3, 4, 2, sliding_window=0)
