"""gradkit.tf's Attention and AdditiveAttention against real TensorFlow 2.21 / Keras 3: the same
weights in both; outputs, attention scores, gradients w.r.t. query, value, key and the weights
(with masks, the causal mask and both score modes), weights' names and shapes and
get_config / from_config compared; dropout against Keras' weights without it."""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")

import gradkit.tf as gtf  # noqa: E402

_rs = np.random.RandomState(0)
_Q = _rs.randn(2, 3, 4).astype(np.float32)
_V = _rs.randn(2, 5, 4).astype(np.float32)
_K = _rs.randn(2, 5, 4).astype(np.float32)
_Q_MASK = np.array([[True, False, True], [True, True, True]])
_V_MASK = np.array([[True, True, False, True, False], [False, False, False, False, False]])


def _run(tf, make, inputs, weights, call_kwargs):
    layer = make(tf)
    layer([tf.constant(x) for x in inputs])
    if callable(weights):
        weights = weights([tuple(v.shape) for v in layer.weights])
    for v, w in zip(layer.weights, weights):
        v.assign(w)
    tensors = [tf.constant(x) for x in inputs]
    with tf.GradientTape() as tape:
        for t in tensors:
            tape.watch(t)
        out, scores = layer(tensors, return_attention_scores=True, **call_kwargs)
        cotangent = np.random.RandomState(1).randn(*out.shape).astype(np.float32)
        score_cotangent = np.random.RandomState(2).randn(*scores.shape).astype(np.float32)
        loss = tf.reduce_sum(out * cotangent) + tf.reduce_sum(scores * score_cotangent)
    grads = tape.gradient(loss, [*tensors, *layer.trainable_variables])
    return {
        "out": np.asarray(out),
        "scores": np.asarray(scores),
        "grads": [None if g is None else np.asarray(g) for g in grads],
        "names": [v.name if tf is gtf else v.path + ":0" for v in layer.weights],
        "shapes": [tuple(v.shape) for v in layer.weights],
    }


def check(make, inputs, **call_kwargs):
    weights = []

    def random_weights(shapes):
        weights.extend(np.float32(np.random.RandomState(3 + i).randn(*s)) for i, s in enumerate(shapes))
        return weights

    want = _run(tf_real, make, inputs, random_weights, call_kwargs)
    got = _run(gtf, make, inputs, weights, call_kwargs)
    assert (got["names"], got["shapes"]) == (want["names"], want["shapes"])
    np.testing.assert_allclose(got["out"], want["out"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got["scores"], want["scores"], rtol=1e-5, atol=1e-5)
    assert [g is None for g in got["grads"]] == [w is None for w in want["grads"]]
    for g, w in zip(got["grads"], want["grads"]):
        if w is not None:
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


_LAYERS = {
    "dot": lambda tf: tf.keras.layers.Attention(name="attention"),
    "dot_scaled": lambda tf: tf.keras.layers.Attention(use_scale=True, name="attention"),
    "concat": lambda tf: tf.keras.layers.Attention(score_mode="concat", name="attention"),
    "concat_scaled": lambda tf: tf.keras.layers.Attention(use_scale=True, score_mode="concat", name="attention"),
    "additive": lambda tf: tf.keras.layers.AdditiveAttention(name="additive_attention"),
    "additive_unscaled": lambda tf: tf.keras.layers.AdditiveAttention(use_scale=False, name="additive_attention"),
}
_CALLS = {
    "plain": {},
    "masks": {"mask": [_Q_MASK, _V_MASK]},
    "value_mask_only": {"mask": [None, _V_MASK.astype(np.float32)]},
    "causal": {"use_causal_mask": True},
    "causal_and_masks": {"use_causal_mask": True, "mask": [_Q_MASK, _V_MASK]},
}


@pytest.mark.parametrize("call", sorted(_CALLS))
@pytest.mark.parametrize("kind", sorted(_LAYERS))
def test_attention_matches_keras(kind, call):
    inputs = [_Q, _V[:, :3], _K[:, :3]] if "causal" in call else [_Q, _V, _K]
    kwargs = dict(_CALLS[call])
    if "mask" in kwargs and "causal" in call:
        kwargs["mask"] = [m if m is None else m[:, :3] for m in kwargs["mask"]]
    check(_LAYERS[kind], inputs, **kwargs)


@pytest.mark.parametrize("kind", ["dot_scaled", "additive"])
def test_key_defaults_to_value_as_in_keras(kind):
    check(_LAYERS[kind], [_Q, _V])


def test_dropout_drops_keras_weights_and_rescales_the_rest():
    # The draws differ from TensorFlow's; each kept weight is Keras' weight without dropout / (1 - rate).
    keras_weights = tf_real.keras.layers.Attention()([_Q, _V], return_attention_scores=True)[1].numpy()
    layer = gtf.keras.layers.Attention(dropout=0.5, seed=3)
    out, weights = layer([_Q, _V], return_attention_scores=True, training=True)
    weights = np.asarray(weights)
    kept = weights != 0
    assert 0 < kept.mean() < 1
    np.testing.assert_allclose(weights[kept], keras_weights[kept] / 0.5, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(out), weights @ _V, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(layer([_Q, _V])), tf_real.keras.layers.Attention()([_Q, _V]), atol=1e-6)


def _configured(tf):
    layers = tf.keras.layers
    return [
        layers.Attention(use_scale=True, score_mode="concat", dropout=0.1, seed=2, name="a"),
        layers.Attention(name="b"),
        layers.AdditiveAttention(use_scale=False, dropout=0.2, name="c"),
        layers.AdditiveAttention(name="d"),
    ]


@pytest.mark.parametrize("index", range(4))
def test_configs_match_keras_both_ways(index):
    ours, theirs = _configured(gtf)[index], _configured(tf_real)[index]
    assert ours.get_config() == theirs.get_config()
    assert type(ours).from_config(theirs.get_config()).get_config() == theirs.get_config()
    assert type(theirs).from_config(ours.get_config()).get_config() == theirs.get_config()


def test_compute_output_shape_and_mask_match_keras():
    shapes = [(None, 3, 4), (None, 5, 6)]
    for tf in (gtf, tf_real):
        assert tuple(tf.keras.layers.Attention().compute_output_shape(shapes)) == (None, 3, 6)
    mask = gtf.keras.layers.Attention().compute_mask([_Q, _V], [_Q_MASK, None])
    np.testing.assert_array_equal(np.asarray(mask), _Q_MASK)


@pytest.mark.parametrize(
    "inputs, kwargs",
    [
        (lambda: _Q, {}),  # not a list
        (lambda: [_Q], {}),  # one input
        (lambda: [_Q, _V], {"mask": _V_MASK}),  # a mask that is not a list
    ],
    ids=["tensor", "one_input", "mask_not_a_list"],
)
@pytest.mark.parametrize("layer", ["Attention", "AdditiveAttention"])
def test_bad_calls_raise_value_error_as_keras(inputs, kwargs, layer):
    with pytest.raises(ValueError):
        getattr(tf_real.keras.layers, layer)()(inputs(), **kwargs)
    with pytest.raises(ValueError, match=r"\[gradkit\]"):
        getattr(gtf.keras.layers, layer)()(inputs(), **kwargs)


def test_bad_score_mode_raises_value_error_as_keras():
    with pytest.raises(ValueError):
        tf_real.keras.layers.Attention(score_mode="bilinear")
    with pytest.raises(ValueError, match=r"\[gradkit\].*score_mode"):
        gtf.keras.layers.Attention(score_mode="bilinear")


def test_a_compiled_step_traces_once_and_matches_keras():
    def run(tf):
        query = tf.keras.layers.EinsumDense("abc,cd->abd", (None, 4), bias_axes="d", name="q")
        attention = tf.keras.layers.AdditiveAttention(name="additive_attention")
        query(_Q)
        attention([_Q, _V])
        for layer in (query, attention):
            layer.set_weights(
                [np.float32(0.3 * np.sin(np.arange(np.prod(w.shape)))).reshape(tuple(w.shape)) for w in layer.weights]
            )

        @tf.function
        def step(q, v):
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(attention([query(q), v], mask=[None, _V_MASK[:1].repeat(2, 0)]) ** 2)
            return loss, tape.gradient(loss, [*query.trainable_variables, *attention.trainable_variables])

        results = [step(tf.constant(_Q * k), tf.constant(_V)) for k in (1.0, 2.0)]
        return step.experimental_get_tracing_count(), [
            (float(loss), [np.asarray(g) for g in grads]) for loss, grads in results
        ]

    (got_traces, got), (want_traces, want) = run(gtf), run(tf_real)
    assert got_traces == want_traces == 1
    for (got_loss, got_grads), (want_loss, want_grads) in zip(got, want):
        np.testing.assert_allclose(got_loss, want_loss, rtol=1e-5)
        for g, w in zip(got_grads, want_grads):
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


def test_dropout_in_a_compiled_step_draws_anew_each_call():
    layer = gtf.keras.layers.Attention(dropout=0.5)

    @gtf.function
    def step(q, v):
        return layer([q, v], training=True, return_attention_scores=True)[1]

    first, second = np.asarray(step(_Q, _V)), np.asarray(step(_Q, _V))
    assert (first == 0).any() and not np.array_equal(first == 0, second == 0)
