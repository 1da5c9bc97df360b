"""A layer's ``save_own_variables`` / ``load_own_variables`` (Keras' hooks for the state a layer
keeps in a weights file beyond its weights) are called by ``save_weights``/``load_weights``, and
``add_variable`` is Keras 3's ``add_weight``. Oracle: the state written by hand, and Keras itself
reading gradkit's file and writing one gradkit reads (where Keras is installed)."""

import numpy as np
import pytest

import gradkit.tf as gtf


def _model(keras, ops):
    class WithExtra(keras.layers.Layer):
        def build(self, shape):
            self.w = self.add_variable((shape[-1], 2), initializer="ones", name="w")
            self.extra = np.arange(3.0)

        def call(self, x):
            return ops.matmul(x, self.w)

        def save_own_variables(self, store):
            super().save_own_variables(store)
            store["extra"] = self.extra

        def load_own_variables(self, store):
            self.extra = np.array(store["extra"]) * 10
            super().load_own_variables({"0": store["0"]})

    inputs = keras.Input((3,))
    return keras.Model(inputs, WithExtra(name="with_extra")(inputs))


def _save(model, path):
    model.layers[1].w.assign(np.full((3, 2), 2.0, np.float32))
    model.save_weights(path)


def test_the_hooks_save_and_load_a_layers_own_state(tmp_path):
    path = str(tmp_path / "own.weights.h5")
    _save(_model(gtf.keras, gtf), path)
    loaded = _model(gtf.keras, gtf)
    loaded.load_weights(path)
    np.testing.assert_array_equal(loaded.layers[1].extra, [0.0, 10.0, 20.0])
    np.testing.assert_array_equal(loaded.layers[1].w.numpy(), np.full((3, 2), 2.0))
    assert loaded.layers[1].w.shape == (3, 2) and loaded.layers[1].w.trainable


@pytest.mark.parametrize("direction", ["gradkit to keras", "keras to gradkit"])
def test_the_hooks_match_keras(tmp_path, direction):
    keras = pytest.importorskip("keras")
    tf = pytest.importorskip("tensorflow")
    path = str(tmp_path / "own.weights.h5")
    writer, reader = (
        ((gtf.keras, gtf), (keras, tf)) if direction == "gradkit to keras" else ((keras, tf), (gtf.keras, gtf))
    )
    _save(_model(*writer), path)
    loaded = _model(*reader)
    loaded.load_weights(path)
    np.testing.assert_array_equal(loaded.layers[1].extra, [0.0, 10.0, 20.0])
    np.testing.assert_array_equal(np.asarray(loaded.layers[1].w), np.full((3, 2), 2.0))
