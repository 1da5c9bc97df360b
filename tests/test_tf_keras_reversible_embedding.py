"""``ReversibleEmbedding``: the lookup, the reverse projection (tied and untied weights, the soft
cap, reverse_dtype), the gradients with respect to its weights and the hidden states, masks, config,
and ``.keras`` files in both directions, against Keras on TensorFlow (skipped without it) and by
hand."""

import numpy as np
import pytest

import gradkit.tf as gtf

_IDS = np.array([[1, 2, 0], [4, 9, 3]], dtype=np.int32)


def _run(tf, tie_weights, soft_cap, reverse_dtype):
    layer = tf.keras.layers.ReversibleEmbedding(
        10, 4, tie_weights=tie_weights, logit_soft_cap=soft_cap, reverse_dtype=reverse_dtype, mask_zero=True
    )
    layer(_IDS)
    rng = np.random.RandomState(0)
    layer.set_weights([rng.randn(*w.shape).astype(np.float32) for w in layer.weights])
    hidden_in = tf.Variable(rng.randn(2, 3, 4).astype(np.float32))
    with tf.GradientTape() as tape:
        hidden = layer(_IDS)
        logits = layer(hidden * hidden_in, reverse=True)
        loss = tf.reduce_sum(tf.sin(tf.cast(logits, tf.float32)))
    grads = tape.gradient(loss, [*layer.trainable_weights, hidden_in])
    return {
        "hidden": np.asarray(hidden),
        "mask": np.asarray(hidden._keras_mask),
        "reverse_mask": getattr(logits, "_keras_mask", None),
        "logits": np.asarray(logits, np.float32),
        "dtype": logits.dtype.name if hasattr(logits.dtype, "name") else str(logits.dtype),
        "grads": [np.asarray(tf.convert_to_tensor(g)) for g in grads],
        "config": layer.get_config(),
        "shape": tuple(layer.compute_output_shape((2, 3, 4), reverse=True)),
        "weights": [w.path for w in layer.weights],
    }


@pytest.mark.parametrize(
    ("tie_weights", "soft_cap", "reverse_dtype"), [(True, None, None), (False, 2.0, None), (True, 3.0, "float16")]
)
def test_reversible_embedding_as_keras(tie_weights, soft_cap, reverse_dtype):
    got = _run(gtf, tie_weights, soft_cap, reverse_dtype)
    assert got["reverse_mask"] is None and got["shape"] == (2, 3, 10)
    np.testing.assert_array_equal(got["mask"], _IDS != 0)
    tf = pytest.importorskip("tensorflow")
    want = _run(tf, tie_weights, soft_cap, reverse_dtype)
    atol = 1e-2 if reverse_dtype else 1e-5
    np.testing.assert_allclose(got["hidden"], want["hidden"])
    np.testing.assert_allclose(got["logits"], want["logits"], rtol=atol, atol=atol)
    assert got["dtype"] == want["dtype"]
    for g, w in zip(got["grads"], want["grads"]):
        np.testing.assert_allclose(g, w, rtol=10 * atol, atol=10 * atol)
    assert got["config"] == {**want["config"], "name": got["config"]["name"]}
    assert got["weights"] == [p.replace(want["config"]["name"], got["config"]["name"]) for p in want["weights"]]


def test_reverse_projection_by_hand():
    layer = gtf.keras.layers.ReversibleEmbedding(5, 3, logit_soft_cap=1.5)
    layer(_IDS[:, :1] % 5)
    table = np.arange(15, dtype=np.float32).reshape(5, 3) / 10
    layer.embeddings.assign(table)
    hidden = np.array([[0.5, -1.0, 2.0]], np.float32)
    np.testing.assert_allclose(layer(hidden, reverse=True), np.tanh(hidden @ table.T / 1.5) * 1.5, rtol=1e-6)
    with pytest.raises(ValueError, match=r"\[gradkit\].*output_dim=3"):
        layer(np.ones((1, 4), np.float32), reverse=True)
    with pytest.raises(ValueError, match="logit_soft_cap"):
        gtf.keras.layers.ReversibleEmbedding(5, 3, logit_soft_cap=0)


def _tied_language_model(tf):
    ids = tf.keras.Input((3,), dtype="int32")
    embedding = tf.keras.layers.ReversibleEmbedding(10, 4, tie_weights=False, mask_zero=True, name="tokens")
    hidden = tf.keras.layers.Dense(4, activation="tanh", name="mix")(embedding(ids))
    model = tf.keras.Model(ids, embedding(hidden, reverse=True))
    rng = np.random.RandomState(1)
    model.set_weights([rng.randn(*w.shape).astype(np.float32) for w in model.weights])
    return model


@pytest.mark.parametrize("direction", ["gradkit_to_gradkit", "gradkit_to_keras", "keras_to_gradkit"])
def test_reversible_embedding_keras_files(tmp_path, direction):
    writer, reader = {
        "gradkit_to_gradkit": ("gk", "gk"),
        "gradkit_to_keras": ("gk", "tf"),
        "keras_to_gradkit": ("tf", "gk"),
    }[direction]
    sides = {"gk": gtf}
    if "tf" in (writer, reader):
        sides["tf"] = pytest.importorskip("tensorflow")
    model = _tied_language_model(sides[writer])
    path = str(tmp_path / "lm.keras")
    model.save(path)
    loaded = sides[reader].keras.models.load_model(path)
    np.testing.assert_allclose(np.asarray(loaded(_IDS)), np.asarray(model(_IDS)), rtol=1e-5, atol=1e-6)
    assert loaded.output_shape == (None, 3, 10)
