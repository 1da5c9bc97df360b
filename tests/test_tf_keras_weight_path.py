"""A Keras layer's weight has ``path`` (Keras 3's key for a weight): ``'layer/name'``, which ends
Keras' own path of it (compared with Keras on TensorFlow where installed)."""

import pytest

import gradkit.tf as gtf


def _paths(tf):
    layer = tf.keras.layers.Dense(2, name="dense_path")
    layer.build((None, 3))
    return [w.path for w in layer.weights], {w.path: w.shape for w in layer.weights}


def test_layer_weights_have_a_path():
    paths, by_path = _paths(gtf)
    assert paths == ["dense_path/kernel", "dense_path/bias"]
    assert tuple(by_path["dense_path/kernel"]) == (3, 2)
    tf = pytest.importorskip("tensorflow")
    want, _ = _paths(tf)
    assert [w.split("/")[-2:] for w in want] == [p.split("/") for p in paths]
