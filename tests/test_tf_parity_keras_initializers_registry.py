"""``tf.keras.initializers.serialize``/``deserialize`` and Keras 3's second names
(``IdentityInitializer``, ``OrthogonalInitializer``) against real Keras."""

import numpy as np
import pytest

import gradkit.tf as gtf

MADE = {
    "GlorotUniform": lambda m: m.GlorotUniform(seed=3),
    "Constant": lambda m: m.Constant(2.0),
    "VarianceScaling": lambda m: m.VarianceScaling(scale=2.0, mode="fan_out", distribution="untruncated_normal"),
    "Orthogonal": lambda m: m.OrthogonalInitializer(gain=0.5, seed=1),
    "Identity": lambda m: m.IdentityInitializer(gain=3.0),
    "RandomUniform": lambda m: m.RandomUniform(-1.0, 1.0, seed=4),
}


@pytest.mark.parametrize("name", list(MADE))
def test_serialize_matches_keras_and_round_trips(name):
    tf = pytest.importorskip("tensorflow")
    want = tf.keras.initializers.serialize(MADE[name](tf.keras.initializers))
    got = gtf.keras.initializers.serialize(MADE[name](gtf.keras.initializers))
    if name == "Identity":  # Keras 3's Identity leaves its gain out of its config; gradkit keeps it
        assert got["config"] == {"gain": 3.0}
        want = {**want, "config": got["config"]}
    assert got == want
    again = gtf.keras.initializers.deserialize(got)
    assert type(again).__name__ == name and again.get_config() == got["config"]


def test_names_deserialize_as_in_keras():
    tf = pytest.importorskip("tensorflow")
    from keras.src import initializers as keras_initializers

    for name in keras_initializers.ALL_OBJECTS_DICT:
        if name.lower().startswith("stft") or name.lower() == "initializer":
            continue  # no STFT initializer in gradkit; the base class is abstract
        got = gtf.keras.initializers.deserialize(name)
        assert type(got).__name__ == keras_initializers.ALL_OBJECTS_DICT[name].__name__, name
        try:
            want = tf.keras.initializers.deserialize(name)
        except KeyError:  # Keras 3 cannot make Constant from its name (its from_config needs a value)
            assert name.lower() == "constant"
            continue
        if "identity" not in name.lower():  # Keras 3's Identity leaves its gain out of its config
            assert got.get_config() == want.get_config(), name


def test_second_names_are_the_classes_and_draw_the_same_values():
    m = gtf.keras.initializers
    assert m.IdentityInitializer is m.Identity and m.OrthogonalInitializer is m.Orthogonal
    np.testing.assert_array_equal(np.asarray(m.IdentityInitializer()((3, 3))), np.eye(3, dtype=np.float32))
    assert m.deserialize("not_an_initializer") == "not_an_initializer"  # returned unchanged, as Keras does


def test_a_seed_generator_seed_draws_new_values_at_each_call_and_serializes_as_keras():
    init = gtf.keras.initializers.RandomNormal(stddev=1.0, seed=gtf.keras.random.SeedGenerator(1))
    first, second = init((500,)).numpy(), init((500,)).numpy()
    assert not np.allclose(first, second)
    assert abs(first.std() - 1.0) < 0.1 and abs(second.std() - 1.0) < 0.1
    config = init.get_config()
    assert config["seed"]["class_name"] == "SeedGenerator" and config["seed"]["module"] == "keras.random"
    again = gtf.keras.initializers.deserialize(gtf.keras.initializers.serialize(init))
    # A generator made from the same seed starts at the same state: the same first draw.
    np.testing.assert_array_equal(again((500,)).numpy(), first)


def test_the_keras_3_class_names_are_taken_by_get():
    assert isinstance(gtf.keras.initializers.get("IdentityInitializer"), gtf.keras.initializers.Identity)
    assert isinstance(gtf.keras.initializers.get("OrthogonalInitializer"), gtf.keras.initializers.Orthogonal)


def test_a_seed_generator_config_loads_in_keras():
    keras = pytest.importorskip("keras")
    init = gtf.keras.initializers.GlorotUniform(seed=gtf.keras.random.SeedGenerator(3))
    theirs = keras.initializers.deserialize(gtf.keras.initializers.serialize(init))
    assert theirs.get_config()["seed"]["config"]["seed"] == 3
    assert keras.initializers.get("IdentityInitializer").__class__.__name__ == "Identity"
