"""The layers of a Sequential with a known input have ``input`` and ``output`` from the start, as
in Keras 3 (which runs such a model as a functional one): the feature-extraction recipe
``Model(model.inputs, [layer.output for layer in model.layers])`` works in any order of reads.
Oracle: the layers applied by hand, and Keras' shapes where installed."""

import copy
import pickle

import numpy as np
import pytest

import gradkit.tf as gtf

K = gtf.keras
X = np.random.default_rng(0).normal(size=(2, 4)).astype(np.float32)


def _declared(keras):
    return keras.Sequential([keras.Input((4,)), keras.layers.Dense(3), keras.layers.Dense(2)])


def _built(keras):
    model = keras.Sequential([keras.layers.Dense(3), keras.layers.Dense(2)])
    model.build((None, 4))
    return model


@pytest.mark.parametrize("make", [_declared, _built])
def test_layer_outputs_before_the_models_inputs_are_read(make):
    model = make(K)
    outputs = [layer.output for layer in model.layers]
    assert [tuple(o.shape) for o in outputs] == [(None, 3), (None, 2)]
    assert tuple(model.layers[0].input.shape) == (None, 4)
    features = K.Model(model.inputs, outputs)(X)
    first = model.layers[0](X)
    np.testing.assert_allclose(features[0].numpy(), first.numpy(), rtol=1e-6)
    np.testing.assert_allclose(features[1].numpy(), model.layers[1](first).numpy(), rtol=1e-6)


@pytest.mark.parametrize("make", [_declared, _built])
def test_shapes_match_keras(make):
    keras = pytest.importorskip("keras")
    assert [tuple(layer.output.shape) for layer in make(keras).layers] == [
        tuple(layer.output.shape) for layer in make(K).layers
    ]


def test_without_an_input_there_is_no_output_and_copies_keep_the_link():
    with pytest.raises(AttributeError, match="never been called on Keras tensors"):
        _ = K.Sequential([K.layers.Dense(3)]).layers[0].output
    model = _declared(K)
    copied = copy.deepcopy(model)
    assert tuple(copied.layers[1].output.shape) == (None, 2)
    restored = pickle.loads(pickle.dumps(model))
    assert len(restored.layers) == 2
