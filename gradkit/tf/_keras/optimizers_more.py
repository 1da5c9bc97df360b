"""``tf.keras.optimizers`` Adadelta, Ftrl, Lion, Lamb and Adafactor, as Keras 3 makes them.

Each takes Keras' arguments and defaults, checks them as Keras does, and steps with its rule
from ``optimizer_rules_more`` through the common ``Optimizer`` (clipping, weight decay,
``use_ema``, gradient accumulation and schedules included).

>>> import gradkit.tf as tf
>>> w = tf.Variable([1.0, -2.0])
>>> _ = tf.keras.optimizers.Lion(0.1).apply_gradients([(tf.constant([0.5, -0.5]), w)])
>>> w.numpy().tolist()
[0.8999999761581421, -1.899999976158142]
"""

from __future__ import annotations

from gradkit import _errors

from . import optimizer_rules_more as rules
from .optimizers import Optimizer, _check_options


def _require(ok: bool, cls_name: str, message: str) -> None:
    if not ok:
        raise _errors.GradkitValueError(f"tf.keras.optimizers.{cls_name}: {message}")


class Adadelta(Optimizer):
    """``tf.keras.optimizers.Adadelta(learning_rate=0.001, rho=0.95, epsilon=1e-7)``."""

    _config_keys = ("rho", "epsilon")

    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-7, name=None, **kwargs):
        options = _check_options("Adadelta", kwargs)
        self.rho, self.epsilon = rho, epsilon
        super().__init__(learning_rate, rules.adadelta, (float(rho), float(epsilon)), options, name)


class Lion(Optimizer):
    """``tf.keras.optimizers.Lion(learning_rate=0.001, beta_1=0.9, beta_2=0.99)``."""

    _config_keys = ("beta_1", "beta_2")

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.99, name=None, **kwargs):
        options = _check_options("Lion", kwargs)
        _require(
            0 < beta_1 <= 1,
            "Lion",
            f"beta_1={beta_1!r} must be in (0, 1], as Keras requires (otherwise the optimizer degenerates to "
            "SignSGD). Pass a value such as 0.9 (the default).",
        )
        self.beta_1, self.beta_2 = beta_1, beta_2
        super().__init__(learning_rate, rules.lion, (float(beta_1), float(beta_2)), options, name)


class Lamb(Optimizer):
    """``tf.keras.optimizers.Lamb(learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7)``."""

    _config_keys = ("beta_1", "beta_2", "epsilon")

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, name=None, **kwargs):
        options = _check_options("Lamb", kwargs)
        self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon
        super().__init__(learning_rate, rules.lamb, (float(beta_1), float(beta_2), float(epsilon)), options, name)


class Ftrl(Optimizer):
    """``tf.keras.optimizers.Ftrl(learning_rate=0.001, learning_rate_power=-0.5,
    initial_accumulator_value=0.1, l1_regularization_strength=0.0, l2_regularization_strength=0.0,
    l2_shrinkage_regularization_strength=0.0, beta=0.0)``."""

    _config_keys = (
        "learning_rate_power",
        "initial_accumulator_value",
        "l1_regularization_strength",
        "l2_regularization_strength",
        "l2_shrinkage_regularization_strength",
        "beta",
    )

    def __init__(
        self,
        learning_rate=0.001,
        learning_rate_power=-0.5,
        initial_accumulator_value=0.1,
        l1_regularization_strength=0.0,
        l2_regularization_strength=0.0,
        l2_shrinkage_regularization_strength=0.0,
        beta=0.0,
        name=None,
        **kwargs,
    ):
        options = _check_options("Ftrl", kwargs)
        for key, value, sign in (
            ("initial_accumulator_value", initial_accumulator_value, "positive or zero"),
            ("learning_rate_power", -learning_rate_power, "negative or zero"),
            ("l1_regularization_strength", l1_regularization_strength, "positive or zero"),
            ("l2_regularization_strength", l2_regularization_strength, "positive or zero"),
            ("l2_shrinkage_regularization_strength", l2_shrinkage_regularization_strength, "positive or zero"),
        ):
            given = learning_rate_power if key == "learning_rate_power" else value
            _require(value >= 0.0, "Ftrl", f"{key}={given!r} needs to be {sign}, as Keras requires.")
        self.learning_rate_power = learning_rate_power
        self.initial_accumulator_value = initial_accumulator_value
        self.l1_regularization_strength = l1_regularization_strength
        self.l2_regularization_strength = l2_regularization_strength
        self.l2_shrinkage_regularization_strength = l2_shrinkage_regularization_strength
        self.beta = beta
        hyper = tuple(float(getattr(self, key)) for key in self._config_keys)
        super().__init__(learning_rate, rules.ftrl, hyper, options, name)


class Adafactor(Optimizer):
    """``tf.keras.optimizers.Adafactor(learning_rate=0.001, beta_2_decay=-0.8, epsilon_1=1e-30,
    epsilon_2=1e-3, clip_threshold=1.0, relative_step=True)``."""

    _config_keys = ("beta_2_decay", "epsilon_1", "epsilon_2", "clip_threshold", "relative_step")

    def __init__(
        self,
        learning_rate=0.001,
        beta_2_decay=-0.8,
        epsilon_1=1e-30,
        epsilon_2=1e-3,
        clip_threshold=1.0,
        relative_step=True,
        name=None,
        **kwargs,
    ):
        options = _check_options("Adafactor", kwargs)
        self.beta_2_decay, self.epsilon_1, self.epsilon_2 = beta_2_decay, epsilon_1, epsilon_2
        self.clip_threshold, self.relative_step = clip_threshold, relative_step
        hyper = (float(beta_2_decay), float(epsilon_1), float(epsilon_2), float(clip_threshold), bool(relative_step))
        super().__init__(learning_rate, rules.adafactor, hyper, options, name)
