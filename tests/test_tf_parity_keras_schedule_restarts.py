"""``CosineDecayRestarts`` (SGDR) and ``keras.optimizers.schedules.serialize`` /
``deserialize``. Oracles: hand derivations of the schedule, and Keras 3 where it is installed."""

import math

import numpy as np
import pytest

import gradkit.tf as gtf

schedules = gtf.keras.optimizers.schedules


def _sgdr(step, lr, first, t_mul, m_mul, alpha):
    # Walk the periods by hand: period i lasts first * t_mul**i steps and starts at lr * m_mul**i.
    start, length, i = 0.0, float(first), 0
    while step >= start + length:
        start, length, i = start + length, length * t_mul, i + 1
    cosine = 0.5 * m_mul**i * (1 + math.cos(math.pi * (step - start) / length))
    return lr * ((1 - alpha) * cosine + alpha)


CASES = [
    dict(initial_learning_rate=0.1, first_decay_steps=10),
    dict(initial_learning_rate=0.1, first_decay_steps=7, t_mul=1.0, m_mul=0.5, alpha=0.1),
    dict(initial_learning_rate=1.0, first_decay_steps=4, t_mul=3.0, m_mul=0.9, alpha=0.05),
]


@pytest.mark.parametrize("args", CASES)
def test_cosine_decay_restarts_follows_its_periods(args):
    schedule = schedules.CosineDecayRestarts(**args)
    full = {"t_mul": 2.0, "m_mul": 1.0, "alpha": 0.0, **args}
    steps = [s for s in range(60) if s not in (10, 30, 4, 16, 52)]  # away from float32 period edges
    got = [float(schedule(s)) for s in steps]
    want = [
        _sgdr(s, full["initial_learning_rate"], full["first_decay_steps"], full["t_mul"], full["m_mul"], full["alpha"])
        for s in steps
    ]
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-7)


def test_a_restart_starts_the_next_period_at_m_mul_times_the_rate():
    schedule = schedules.CosineDecayRestarts(1.0, 10, t_mul=2.0, m_mul=0.5)
    assert float(schedule(0)) == pytest.approx(1.0)
    assert float(schedule(10)) == pytest.approx(0.5, rel=1e-5)  # second period, 20 steps long
    assert float(schedule(20)) == pytest.approx(0.25, rel=1e-5)  # its middle: 0.5 * (1 + cos(pi/2)) / 2


def test_schedules_serialize_and_deserialize():
    schedule = schedules.CosineDecayRestarts(0.1, 10, alpha=0.2)
    config = schedules.serialize(schedule)
    assert config["module"] == "keras.optimizers.schedules" and config["class_name"] == "CosineDecayRestarts"
    again = schedules.deserialize(config)
    assert type(again) is schedules.CosineDecayRestarts and again.get_config() == schedule.get_config()
    with pytest.raises(ValueError, match=r"\[gradkit\].*first_decay_steps must be > 0"):
        schedules.CosineDecayRestarts(0.1, 0)


def test_schedules_match_keras():
    keras = pytest.importorskip("keras")
    for args in CASES:
        ours, theirs = schedules.CosineDecayRestarts(**args), keras.optimizers.schedules.CosineDecayRestarts(**args)
        np.testing.assert_allclose(
            [float(ours(s)) for s in range(80)], [float(theirs(s)) for s in range(80)], rtol=1e-6, atol=1e-8
        )
        assert schedules.serialize(ours) == keras.optimizers.schedules.serialize(theirs)

    class Mine(gtf.keras.optimizers.schedules.LearningRateSchedule):
        def __call__(self, step):
            return 0.1

        def get_config(self):
            return {}

    class Theirs(keras.optimizers.schedules.LearningRateSchedule):
        def __call__(self, step):
            return 0.1

        def get_config(self):
            return {}

    Theirs.__name__ = "Mine"
    assert schedules.serialize(Mine()) == keras.optimizers.schedules.serialize(Theirs())
