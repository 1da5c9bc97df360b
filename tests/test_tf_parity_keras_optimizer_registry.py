"""``tf.keras.optimizers.get``, ``serialize`` and ``deserialize`` against real Keras 3: names
(case-insensitive, Lamb not among them), dicts, instances, what Keras refuses, and round trips
of every optimizer (LossScaleOptimizer and schedules included) that step alike."""

import copy

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")

import gradkit.tf as gtf  # noqa: E402

NAMES = ["adam", "Adam", "SGD", "sgd", "rmsprop", "RMSprop", "adamw", "Adagrad", "adamax", "NADAM"]
NAMES += ["adadelta", "Ftrl", "lion", "Adafactor"]


@pytest.mark.parametrize("name", NAMES)
def test_get_by_name_matches_keras(name):
    want, got = tf_real.keras.optimizers.get(name), gtf.keras.optimizers.get(name)
    assert type(got).__name__ == type(want).__name__
    config = {k: v for k, v in want.get_config().items() if k != "name"}
    assert {k: v for k, v in got.get_config().items() if k != "name"} == config


@pytest.mark.parametrize(
    "identifier",
    ["lamb", "Lamb", "nope", 5, {"class_name": "Lamb", "config": {}}, "loss_scale_optimizer"],
    ids=["lamb", "Lamb", "unknown", "number", "lamb_dict", "loss_scale_optimizer"],
)
def test_what_get_cannot_interpret_is_refused_as_keras(identifier):
    for tf in (tf_real, gtf):
        with pytest.raises(ValueError) as info:
            tf.keras.optimizers.get(identifier)
    assert str(info.value).startswith("[gradkit]") and "Could not interpret optimizer identifier" in str(info.value)


def test_get_passes_none_and_instances_through():
    opt = gtf.keras.optimizers.SGD()
    assert gtf.keras.optimizers.get(None) is None and gtf.keras.optimizers.get(opt) is opt


def _make_all(opts):
    return [
        opts.SGD(0.5, momentum=0.9, name="a"),
        opts.Adam(opts.schedules.ExponentialDecay(0.1, 2, 0.5), amsgrad=True, name="b"),
        opts.RMSprop(0.01, centered=True, clipnorm=1.0, name="c"),
        opts.Adadelta(1.0, rho=0.9, name="d"),
        opts.Ftrl(0.2, l1_regularization_strength=0.1, name="e"),
        opts.Lion(0.01, use_ema=True, name="f"),
        opts.Lamb(0.02, name="g"),
        opts.Adafactor(0.1, relative_step=False, name="h"),
        opts.LossScaleOptimizer(opts.Nadam(0.3, name="inner"), initial_scale=16.0, name="i"),
    ]


def test_serialize_matches_keras():
    want = [tf_real.keras.optimizers.serialize(o) for o in _make_all(tf_real.keras.optimizers)]
    got = [gtf.keras.optimizers.serialize(o) for o in _make_all(gtf.keras.optimizers)]
    assert got == want
    for plain in ("adam", None, 5):
        assert gtf.keras.optimizers.serialize(plain) == tf_real.keras.optimizers.serialize(plain)


def test_deserialize_matches_keras_and_round_trips_step_alike():
    configs = [gtf.keras.optimizers.serialize(o) for o in _make_all(gtf.keras.optimizers)]
    for config in configs:
        want = tf_real.keras.optimizers.deserialize(copy.deepcopy(config))  # Keras writes into it
        got = gtf.keras.optimizers.deserialize(config)
        if isinstance(want, str):  # Lamb: Keras returns the name it cannot look up
            assert got == want == "Lamb"
            continue
        assert type(got).__name__ == type(want).__name__
        assert gtf.keras.optimizers.serialize(got) == tf_real.keras.optimizers.serialize(want) == config
        results = []
        for tf, opt in ((tf_real, want), (gtf, got)):
            w = tf.Variable([1.0, -2.0, 0.5])
            for g in ([0.1, 0.2, -0.3], [0.4, -0.1, 0.2]):
                opt.apply_gradients([(tf.constant(g), w)])
            results.append(w.numpy())
        np.testing.assert_allclose(results[1], results[0], rtol=1e-5, atol=1e-6)


def test_deserialize_a_custom_class_from_custom_objects_as_keras():
    def program(tf):
        class MySGD(tf.keras.optimizers.SGD):
            pass

        config = tf.keras.optimizers.serialize(MySGD(0.25, name="m"))
        made = tf.keras.optimizers.deserialize(config, custom_objects={"MySGD": MySGD})
        return config["registered_name"], type(made).__name__, made.get_config()["learning_rate"]

    assert program(tf_real) == program(gtf)


@pytest.mark.parametrize(
    "config, error",
    [("adam", TypeError), ({"config": {}}, KeyError), ({"class_name": "Optimizer", "config": {}}, TypeError)],
    ids=["a_name", "no_class_name", "base_class"],
)
def test_deserialize_refuses_as_keras(config, error):
    for tf in (tf_real, gtf):
        with pytest.raises(error) as info:
            tf.keras.optimizers.deserialize(config)
    assert "[gradkit]" in str(info.value)
