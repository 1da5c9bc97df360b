"""A model not built yet is saved to ``.keras`` with Keras' warning (not refused) and loads unbuilt,
to be built by its first call, as in Keras 3."""

import os

import numpy as np
import pytest

import gradkit.tf as gtf


def _unbuilt(tf):
    return tf.keras.Sequential([tf.keras.layers.Dense(3, activation="relu"), tf.keras.layers.Dense(2)])


def test_unbuilt_model_saves_with_a_warning_and_loads_unbuilt(tmp_path):
    path = str(tmp_path / "unbuilt.keras")
    with pytest.warns(UserWarning, match="not yet been built"):
        _unbuilt(gtf).save(path)
    loaded = gtf.keras.models.load_model(path)
    assert not loaded.built and loaded.weights == []
    assert tuple(loaded(np.ones((1, 4), "float32")).shape) == (1, 2)
    assert [tuple(w.shape) for w in loaded.weights] == [(4, 3), (3,), (3, 2), (2,)]


def test_weights_alone_still_need_a_built_model(tmp_path):
    with pytest.raises(ValueError, match="not yet been built"):
        _unbuilt(gtf).save_weights(str(tmp_path / "unbuilt.weights.h5"))


def test_unbuilt_model_saved_by_keras_loads(tmp_path):
    tf = pytest.importorskip("tensorflow")
    path = os.path.join(str(tmp_path), "by_keras.keras")
    with pytest.warns(UserWarning):
        _unbuilt(tf).save(path)
    loaded = gtf.keras.models.load_model(path)
    assert not loaded.built
    assert tuple(loaded(np.ones((1, 4), "float32")).shape) == (1, 2)
