"""Functional models that call Keras operations (``tf.keras.ops.mean(x, axis=1)``, the
``NotEqual`` mask of ``Embedding(mask_zero=True)``) write and read their configs in Keras' form:
the operation's options in its config, its tensors in the call. Oracles: the model itself (same
weights, rebuilt from its config), the config's form by hand, and Keras (files in both
directions)."""

import numpy as np
import pytest

import gradkit.tf as gtf

keras = gtf.keras
X = np.random.RandomState(0).randn(3, 4, 2).astype(np.float32)
TOKENS = np.array([[3, 4, 0, 0], [5, 0, 0, 0]], np.int32)


def _pooled(k):
    inputs = k.Input((4, 2))
    pooled = k.ops.concatenate([k.ops.mean(inputs, axis=1), k.ops.max(inputs, axis=1)], axis=-1)
    return k.Model(inputs, k.layers.Dense(1)(k.ops.tanh(pooled)))


def _masked(k, explicit_mask=False):
    tokens = k.Input((4,), dtype="int32")
    embedded = k.layers.Embedding(10, 3, mask_zero=True)(tokens)
    mask = {"mask": k.ops.not_equal(tokens, 0)} if explicit_mask else {}
    return k.Model(tokens, k.layers.Dense(1)(k.layers.LSTM(2)(embedded, **mask)))


def test_operations_are_written_as_keras_writes_them():
    layers = {entry["class_name"]: entry for entry in _pooled(keras).get_config()["layers"]}
    mean = layers["Mean"]
    assert mean["module"] == "keras.src.ops.numpy" and mean["config"] == {"name": mean["name"], "axis": 1}
    assert len(mean["inbound_nodes"][0]["args"]) == 1 and mean["inbound_nodes"][0]["kwargs"] == {}
    concatenate = layers["Concatenate"]
    assert concatenate["config"]["axis"] == -1 and len(concatenate["inbound_nodes"][0]["args"][0]) == 2


@pytest.mark.parametrize("make", [_pooled, lambda k: _masked(k, explicit_mask=True)], ids=["pooled", "masked"])
def test_a_model_rebuilt_from_its_config_computes_the_same(make):
    model = make(keras)
    rebuilt = keras.Model.from_config(model.get_config())
    rebuilt.set_weights(model.get_weights())
    x = X if model.inputs[0].dtype == "float32" else TOKENS
    np.testing.assert_allclose(rebuilt(x).numpy(), model(x).numpy(), rtol=1e-6)


@pytest.mark.parametrize("make", [_pooled, _masked], ids=["pooled", "masked"])
def test_keras_files_load_both_ways(make, tmp_path):
    pytest.importorskip("tensorflow")
    import keras as real_keras

    theirs = make(real_keras)
    x = X if make is _pooled else TOKENS
    theirs.save(tmp_path / "keras.keras")
    loaded = keras.models.load_model(tmp_path / "keras.keras")
    np.testing.assert_allclose(loaded.predict(x, verbose=0), theirs.predict(x, verbose=0), rtol=1e-5, atol=1e-6)
    ours = make(keras) if make is _pooled else _masked(keras, explicit_mask=True)
    ours.save(tmp_path / "gradkit.keras")
    back = real_keras.models.load_model(tmp_path / "gradkit.keras")
    np.testing.assert_allclose(back.predict(x, verbose=0), ours.predict(x, verbose=0), rtol=1e-5, atol=1e-6)
