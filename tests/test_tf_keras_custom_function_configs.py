"""A plain Python function as a layer's activation is written in a saved model (``.keras``,
``to_json``) by its name, as Keras writes it, and found again through ``custom_objects`` (or
the registry); loading without it says what to pass. Oracles: the model's own outputs, and
Keras' files both ways."""

import json

import numpy as np
import pytest

import gradkit.tf as gtf

keras = gtf.keras
X = np.random.RandomState(0).randn(5, 3).astype(np.float32)


def doubled_tanh(x):
    return gtf.tanh(x) * 2.0


def _model(k, activation):
    inputs = k.Input((3,))
    return k.Model(inputs, k.layers.Dense(2, activation=activation)(inputs))


def test_saved_by_name_and_found_through_custom_objects(tmp_path):
    model = _model(keras, doubled_tanh)
    entry = json.loads(model.to_json())["config"]["layers"][1]["config"]["activation"]
    assert entry == {
        "module": "builtins",
        "class_name": "function",
        "config": "doubled_tanh",
        "registered_name": "function",
    }
    model.save(tmp_path / "m.keras")
    loaded = keras.models.load_model(tmp_path / "m.keras", custom_objects={"doubled_tanh": doubled_tanh})
    np.testing.assert_allclose(loaded.predict(X, verbose=0), model.predict(X, verbose=0), rtol=1e-6)
    rebuilt = keras.models.model_from_json(model.to_json(), custom_objects={"doubled_tanh": doubled_tanh})
    assert rebuilt.layers[1].activation is doubled_tanh
    with pytest.raises(TypeError, match=r"\[gradkit\].*custom_objects=\{'doubled_tanh'"):
        keras.models.load_model(tmp_path / "m.keras")


def test_keras_files_both_ways(tmp_path):
    pytest.importorskip("tensorflow")
    import keras as real_keras

    def keras_doubled_tanh(x):
        return real_keras.ops.tanh(x) * 2.0

    keras_doubled_tanh.__name__ = "doubled_tanh"
    theirs = _model(real_keras, keras_doubled_tanh)
    theirs.save(tmp_path / "keras.keras")
    ours = keras.models.load_model(tmp_path / "keras.keras", custom_objects={"doubled_tanh": doubled_tanh})
    np.testing.assert_allclose(ours.predict(X, verbose=0), theirs.predict(X, verbose=0), rtol=1e-5)
    ours.save(tmp_path / "gradkit.keras")
    back = real_keras.models.load_model(tmp_path / "gradkit.keras", custom_objects={"doubled_tanh": keras_doubled_tanh})
    np.testing.assert_allclose(back.predict(X, verbose=0), ours.predict(X, verbose=0), rtol=1e-5)
