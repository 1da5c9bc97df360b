"""A functional model's record of a layer called on a list of tensors (``Attention()([q, v])``)
is Keras 3's: the keyword arguments as written, no training default and no masks. Keras
rebuilding such a model from gradkit.tf's config would otherwise pass ``mask=[None, None]``
explicitly and attend to the steps a ``Masking`` layer hides. Oracle: Keras 3 itself (the
config it writes for the same model, and its outputs for gradkit.tf's saved file)."""

import numpy as np
import pytest

import gradkit.tf as gtf

X = np.random.RandomState(0).randn(2, 6, 4).astype("float32")
X[0, 4:] = 0.0  # masked steps
X[1, 1] = 0.0


def _attention_model(keras, layer, **call):
    inputs = keras.Input((6, 4))
    hidden = keras.layers.Masking()(inputs)
    return keras.Model(inputs, getattr(keras.layers, layer)()([hidden, hidden], **call))


def _node_kwargs(model):
    return model.get_config()["layers"][-1]["inbound_nodes"][0]["kwargs"]


@pytest.mark.parametrize(
    ("layer", "call"),
    [("Attention", {}), ("AdditiveAttention", {}), ("Attention", {"training": True, "use_causal_mask": True})],
    ids=str,
)
def test_a_layer_called_on_a_list_records_the_call_as_keras_does(layer, call):
    keras = pytest.importorskip("keras")
    assert _node_kwargs(_attention_model(gtf.keras, layer, **call)) == _node_kwargs(
        _attention_model(keras, layer, **call)
    )


@pytest.mark.parametrize("layer", ["Attention", "AdditiveAttention"])
def test_keras_loads_the_saved_model_with_its_masks(layer, tmp_path):
    keras = pytest.importorskip("keras")
    model = _attention_model(gtf.keras, layer)
    model.save(tmp_path / "attention.keras")
    loaded = keras.models.load_model(tmp_path / "attention.keras")
    direct = _attention_model(keras, layer)
    direct.set_weights(model.get_weights())
    want = np.asarray(direct(X))
    np.testing.assert_allclose(np.asarray(loaded(X)), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(model(gtf.constant(X))), want, rtol=1e-5, atol=1e-6)
