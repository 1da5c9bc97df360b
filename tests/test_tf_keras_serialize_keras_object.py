"""``tf.keras.saving.serialize_keras_object`` / ``deserialize_keras_object`` and
``tf.keras.layers.serialize`` / ``deserialize``: Keras' serialization guide's custom layer that
holds another layer writes it in ``get_config`` and makes it again in ``from_config``, and a saved
model of it loads. Oracles: the objects' own configs and outputs (same weights), and Keras."""

import numpy as np
import pytest

import gradkit.tf as gtf

keras = gtf.keras
saving = keras.saving
X = np.random.RandomState(0).randn(4, 3).astype(np.float32)


@saving.register_keras_serializable(package="serialization_test")
class Wrapper(keras.layers.Layer):
    def __init__(self, sublayer, **kwargs):
        super().__init__(**kwargs)
        self.sublayer = sublayer

    def call(self, x):
        return self.sublayer(x) * 2.0

    def get_config(self):
        config = super().get_config()
        config["sublayer"] = saving.serialize_keras_object(self.sublayer)
        return config

    @classmethod
    def from_config(cls, config):
        config["sublayer"] = saving.deserialize_keras_object(config["sublayer"])
        return cls(**config)


@pytest.mark.parametrize(
    "obj",
    [
        keras.initializers.HeNormal(seed=3),
        keras.regularizers.L1L2(l1=0.1, l2=0.2),
        keras.constraints.MaxNorm(2.0),
        keras.losses.Huber(delta=2.0),
        keras.optimizers.Adam(learning_rate=0.01),
    ],
    ids=lambda o: type(o).__name__,
)
def test_objects_round_trip_with_their_configs(obj):
    back = saving.deserialize_keras_object(saving.serialize_keras_object(obj))
    assert type(back) is type(obj)
    assert back.get_config() == obj.get_config()


def test_a_layer_holding_a_layer_saves_and_loads(tmp_path):
    inputs = keras.Input((3,))
    model = keras.Model(inputs, Wrapper(keras.layers.Dense(2, name="inner"))(inputs))
    config = model.layers[1].get_config()
    assert config["sublayer"]["class_name"] == "Dense" and config["sublayer"]["config"]["units"] == 2
    model.save(tmp_path / "m.keras")
    loaded = keras.models.load_model(tmp_path / "m.keras")
    np.testing.assert_allclose(loaded.predict(X, verbose=0), model.predict(X, verbose=0), rtol=1e-6)
    dense = keras.layers.deserialize(keras.layers.serialize(keras.layers.Dense(5, activation="relu")))
    assert (dense.units, dense.get_config()["activation"]) == (5, "relu")


def test_matches_keras():
    pytest.importorskip("tensorflow")
    import keras as real_keras

    theirs = real_keras.saving.serialize_keras_object(real_keras.layers.Dense(4, activation="tanh", name="d"))
    ours = saving.deserialize_keras_object(theirs)
    assert (ours.units, ours.name, ours.get_config()["activation"]) == (4, "d", "tanh")
    back = real_keras.saving.deserialize_keras_object(saving.serialize_keras_object(keras.layers.Dense(4, name="e")))
    assert (back.units, back.name) == (4, "e")


def test_saving_save_weights_and_load_weights(tmp_path):
    inputs = keras.Input((3,))
    model = keras.Model(inputs, keras.layers.Dense(2)(inputs))
    saving.save_weights(model, str(tmp_path / "m.weights.h5"))
    other = keras.Model.from_config(model.get_config())
    saving.load_weights(other, str(tmp_path / "m.weights.h5"))
    for got, want in zip(other.get_weights(), model.get_weights()):
        np.testing.assert_array_equal(got, want)


def _built_dense_and_schedule(k):
    """A built layer made again from its serialized dict takes the weights of the original, and a
    learning-rate schedule made again gives the same rates (Keras' ``build_config`` and schedules)."""
    dense = k.layers.Dense(3, name="built")
    out = np.asarray(dense(X))
    config = k.utils.serialize_keras_object(dense)
    again = k.utils.deserialize_keras_object(config)
    again.set_weights(dense.get_weights())
    schedule = k.optimizers.schedules.ExponentialDecay(0.1, 5, 0.9, staircase=True)
    rebuilt = k.saving.deserialize_keras_object(k.saving.serialize_keras_object(schedule))
    rates = [float(rebuilt(step)) for step in (0, 7, 12)]
    return config["build_config"], np.asarray(again(X)), out, type(rebuilt).__name__, rates


def test_built_layers_and_schedules_round_trip():
    build, again, out, kind, rates = _built_dense_and_schedule(keras)
    assert build == {"input_shape": (4, 3)}
    np.testing.assert_allclose(again, out, rtol=1e-6)
    assert kind == "ExponentialDecay"
    np.testing.assert_allclose(rates, [0.1, 0.1 * 0.9, 0.1 * 0.81], rtol=1e-6)  # staircase: 0.9 ** (step // 5)


def test_built_layers_and_schedules_match_keras():
    pytest.importorskip("tensorflow")
    import keras as real_keras

    ours, theirs = _built_dense_and_schedule(keras), _built_dense_and_schedule(real_keras)
    assert ours[0] == theirs[0] and ours[3] == theirs[3]
    np.testing.assert_allclose(ours[4], theirs[4], rtol=1e-6)
