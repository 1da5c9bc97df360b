"""``clone_model`` of a subclassed model and ``deserialize_keras_object`` of a serialized model:
built (its build_config) and compiled (its compile_config) as Keras makes them, compared with
Keras on TensorFlow where it is installed."""

import numpy as np
import pytest

import gradkit.tf as gtf


def _program(tf, package):
    keras = tf.keras

    @keras.utils.register_keras_serializable(package=package)
    class Sub(keras.Model):
        def __init__(self, units=3, **kw):
            super().__init__(**kw)
            self.units = units
            self.d1 = keras.layers.Dense(units)
            self.d2 = keras.layers.Dense(2)

        def call(self, x):
            return self.d2(self.d1(x))

        def get_config(self):
            return {**super().get_config(), "units": self.units}

    x = np.arange(10, dtype=np.float32).reshape(2, 5) / 10
    m = Sub(4)
    m(x)
    clone = keras.models.clone_model(m)
    out = {"built": clone.built, "weights": len(clone.weights), "units": clone.units}
    clone.set_weights(m.get_weights())
    out["same_prediction"] = bool(np.allclose(clone(x), m(x), atol=1e-6))
    m.compile(optimizer="adam", loss="mse")
    compiled = keras.models.clone_model(m)
    out["compiled"] = compiled.optimizer is not None and type(compiled.optimizer).__name__
    again = keras.utils.deserialize_keras_object(keras.utils.serialize_keras_object(m))
    out["deserialized"] = (again.built, len(again.weights), type(again.optimizer).__name__)
    return out


def test_clone_of_a_subclassed_model_is_built_and_compiled():
    got = _program(gtf, "gk_clone_sub")
    assert got == {
        "built": True,
        "weights": 4,
        "units": 4,
        "same_prediction": True,
        "compiled": "Adam",
        "deserialized": (True, 4, "Adam"),
    }
    tf = pytest.importorskip("tensorflow")
    assert got == _program(tf, "tf_clone_sub")


def _functional_subclass_clone(tf):
    keras = tf.keras
    calls = []

    class FModel(keras.Model):
        def train_step(self, data):
            calls.append(1)
            return super().train_step(data)

        def extra(self):
            return 42

    x = keras.Input((4,))
    clone = keras.models.clone_model(FModel(x, keras.layers.Dense(2)(x)))
    clone.compile("sgd", "mse")
    clone.fit(np.ones((4, 4), "float32"), np.ones((4, 2), "float32"), batch_size=2, epochs=1, verbose=0)
    return type(clone).__name__, clone.extra(), len(calls) > 0


def test_clone_of_a_subclass_made_functional_keeps_its_class():
    got = _functional_subclass_clone(gtf)
    assert got == ("FModel", 42, True)  # its own train_step ran in fit
    tf = pytest.importorskip("tensorflow")
    assert got == _functional_subclass_clone(tf)
