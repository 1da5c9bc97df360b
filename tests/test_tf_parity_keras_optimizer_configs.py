"""Keras 3's optimizer configs in gradkit.tf.keras: get_config / from_config (schedules too),
learning_rate assignment and finalize_variable_values. Against real Keras 3 (the same dicts,
both ways, the same errors), and round trips that step alike without it."""

import numpy as np
import pytest

import gradkit.tf as gtf


def _tf():
    return pytest.importorskip("tensorflow")


def _keras():
    _tf()
    return pytest.importorskip("keras")


OPTIMIZERS = {
    "SGD": {},
    "SGD_momentum": {"learning_rate": 0.5, "momentum": 0.9, "nesterov": True, "clipnorm": 1.0},
    "Adam": {},
    "Adam_amsgrad": {"learning_rate": 0.02, "beta_1": 0.8, "amsgrad": True, "global_clipnorm": 2.0},
    "AdamW": {"weight_decay": 0.01},
    "RMSprop": {"rho": 0.8, "momentum": 0.5, "centered": True, "clipvalue": 0.5},
    "Adagrad": {"initial_accumulator_value": 0.2},
    "Adamax": {"epsilon": 1e-5},
    "Nadam": {"ema_momentum": 0.9},
}


def _optimizer(lib_optimizers, key, **extra):
    return getattr(lib_optimizers, key.split("_")[0])(name="opt", **OPTIMIZERS[key], **extra)


# -- optimizers, without TensorFlow ----------------------------------------------------------------


@pytest.mark.parametrize("key", sorted(OPTIMIZERS))
def test_optimizer_from_config_round_trip_steps_alike(key):
    original = _optimizer(gtf.keras.optimizers, key)
    config = original.get_config()
    copy = type(original).from_config(config)
    assert copy.get_config() == config and copy is not original
    results = []
    for optimizer in (original, copy):
        w = gtf.Variable([1.0, -2.0, 0.5])
        for g in ([0.1, 0.2, -0.3], [0.4, -0.1, 0.2]):
            optimizer.apply_gradients([(gtf.constant(g), w)])
        results.append(w.numpy())
    np.testing.assert_array_equal(results[0], results[1])


def test_optimizer_config_keys_and_values():
    config = gtf.keras.optimizers.SGD(0.5, momentum=0.9, name="s").get_config()
    assert list(config)[:2] == ["name", "learning_rate"]
    assert config["learning_rate"] == float(np.float32(0.5)) and config["momentum"] == 0.9
    assert config["use_ema"] is False and config["ema_momentum"] == 0.99


def test_schedule_learning_rate_round_trip():
    schedule = gtf.keras.optimizers.schedules.ExponentialDecay(0.1, decay_steps=10, decay_rate=0.5)
    config = gtf.keras.optimizers.Adam(schedule, name="a").get_config()
    assert config["learning_rate"]["class_name"] == "ExponentialDecay"
    copy = gtf.keras.optimizers.Adam.from_config(config)
    assert copy.get_config() == config
    assert isinstance(config["learning_rate"], dict)  # from_config leaves the dict it is given alone


def test_learning_rate_assignment_is_read_by_a_compiled_step():
    optimizer = gtf.keras.optimizers.SGD(0.1)
    rate = optimizer.learning_rate
    w = gtf.Variable(1.0)

    @gtf.function
    def step():
        optimizer.apply_gradients([(gtf.constant(1.0), w)])

    step()
    optimizer.learning_rate = 0.5  # assigned into the same Variable, as Keras does
    assert optimizer.learning_rate is rate and float(rate.numpy()) == 0.5
    step()
    np.testing.assert_allclose(w.numpy(), 1.0 - 0.1 - 0.5, rtol=1e-6)


def test_learning_rate_of_a_schedule_is_not_settable():
    schedule = gtf.keras.optimizers.schedules.ExponentialDecay(0.1, 10, 0.5)
    optimizer = gtf.keras.optimizers.SGD(schedule)
    with pytest.raises(TypeError, match=r"\[gradkit\].*not settable"):
        optimizer.learning_rate = 0.5
    optimizer.learning_rate = gtf.keras.optimizers.schedules.ExponentialDecay(0.2, 10, 0.5)  # a schedule is


def test_finalize_variable_values_leaves_the_variables_alone():
    w = gtf.Variable([1.0, 2.0])
    optimizer = gtf.keras.optimizers.Adam(0.1)
    optimizer.apply_gradients([(gtf.constant([1.0, 1.0]), w)])
    before = w.numpy()
    assert optimizer.finalize_variable_values([w]) is None
    np.testing.assert_array_equal(w.numpy(), before)


def test_unknown_schedule_in_a_config_is_refused():
    config = gtf.keras.optimizers.SGD(name="s").get_config()
    config["learning_rate"] = {"class_name": "MySchedule", "config": {}}
    with pytest.raises(ValueError, match=r"\[gradkit\].*custom_objects"):
        gtf.keras.optimizers.SGD.from_config(config)


# -- optimizers, against Keras ---------------------------------------------------------------------


@pytest.mark.parametrize("key", sorted(OPTIMIZERS))
def test_optimizer_config_matches_keras(key):
    keras = _keras()
    ours = _optimizer(gtf.keras.optimizers, key).get_config()
    theirs = _optimizer(keras.optimizers, key).get_config()
    assert ours == theirs and list(ours) == list(theirs)
    # Keras' own config makes the same optimizer here, and ours one there.
    assert type(_optimizer(gtf.keras.optimizers, key)).from_config(theirs).get_config() == theirs
    assert getattr(keras.optimizers, key.split("_")[0]).from_config(ours).get_config() == theirs


def test_schedule_config_matches_keras():
    keras = _keras()
    configs = [
        lib.optimizers.Adam(lib.optimizers.schedules.ExponentialDecay(0.1, 10, 0.5), name="a").get_config()
        for lib in (gtf.keras, keras)
    ]
    assert configs[0] == configs[1]


def test_schedule_learning_rate_refusal_matches_keras():
    keras = _keras()
    optimizer = keras.optimizers.SGD(keras.optimizers.schedules.ExponentialDecay(0.1, 10, 0.5))
    with pytest.raises(TypeError, match="not settable"):
        optimizer.learning_rate = 0.5
