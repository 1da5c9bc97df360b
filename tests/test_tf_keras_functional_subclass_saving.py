"""A registered ``tf.keras.Model`` subclass made functional (``CM(inputs, outputs)``, or one whose
``__init__`` builds its graph and calls ``super().__init__(inputs, outputs)``) serializes under
its registered name, with Keras' config (the graph, or the base config its constructor takes),
and loads back from ``.keras`` files and JSON: gradkit's own files, and Keras' on TensorFlow
(skipped without it), in both directions."""

import numpy as np
import pytest

import gradkit.tf as gtf


def _classes(tf, package):
    keras = tf.keras

    @keras.utils.register_keras_serializable(package=package)
    class CM(keras.Model):
        def extra(self):
            return 1

    @keras.utils.register_keras_serializable(package=package)
    class FS(keras.Model):
        def __init__(self, **kw):
            x = keras.Input((4,))
            super().__init__(x, keras.layers.Dense(2)(keras.layers.Dense(3, activation="relu")(x)), **kw)

    def make_cm():
        x = keras.Input((4,))
        return CM(x, keras.layers.Dense(2)(x))

    return {"CM": (CM, make_cm), "FS": (FS, FS)}


def _describe(tf, package, name, path):
    cls, make = _classes(tf, package)[name]
    m = make()
    s = tf.keras.utils.serialize_keras_object(m)
    m.save(str(path))
    loaded = tf.keras.models.load_model(str(path))
    from_json = tf.keras.models.model_from_json(m.to_json())
    x = np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4)
    return {
        "registered_name": s["registered_name"].split(">")[1],
        "config": sorted(s["config"]),
        "loaded": (isinstance(loaded, cls), len(loaded.weights)),
        "same_prediction": bool(np.allclose(loaded(x), m(x), atol=1e-6)),
        "json": (isinstance(from_json, cls), len(from_json.weights)),
        "from_config": isinstance(cls.from_config(m.get_config()), cls),
    }


@pytest.mark.parametrize("name", ["CM", "FS"])
def test_a_functional_subclass_saves_and_loads(tmp_path, name):
    got = _describe(gtf, "gk_fsub", name, tmp_path / "gk.keras")
    functional_keys = ["input_layers", "layers", "name", "output_layers", "trainable"]
    assert got["registered_name"] == name
    assert got["config"] == (functional_keys if name == "CM" else ["dtype", "name", "trainable"])
    assert got["loaded"] == got["json"] == (True, 2 if name == "CM" else 4)
    assert got["same_prediction"] and got["from_config"]
    tf = pytest.importorskip("tensorflow")
    assert got == _describe(tf, "tf_fsub", name, tmp_path / "tf.keras")


@pytest.mark.parametrize("name", ["CM", "FS"])
def test_functional_subclass_files_cross_load(tmp_path, name):
    tf = pytest.importorskip("tensorflow")
    x = np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4)
    for writer, reader in ((gtf, tf), (tf, gtf)):
        cls_w, make = _classes(writer, "xload")[name]
        cls_r, _ = _classes(reader, "xload")[name]
        m = make()
        path = str(tmp_path / f"{name}_{writer.__name__}.keras")
        m.save(path)
        loaded = reader.keras.models.load_model(path)
        assert isinstance(loaded, cls_r)
        np.testing.assert_allclose(np.asarray(loaded(x)), np.asarray(m(x)), atol=1e-6)
