"""Keras optimizers' ``use_ema``: a moving average of each Variable, as Keras 3 keeps it.

After each step every Variable the optimizer updates has its average moved toward its new
value (``average = m * average + (1 - m) * value``, with ``m = 0`` at the first step and
``ema_momentum`` after), every ``ema_overwrite_frequency`` steps the Variables are set to their
averages, and ``finalize_variable_values`` sets them at the end of training. The averages live in
Variables, so a compiled step threads them and an outer tape differentiates through them.
"""

from __future__ import annotations

import jax.numpy as jnp

from gradkit import _errors


def check_ema_options(cls_name: str, options: dict) -> None:
    """Keras' checks of ``ema_momentum`` and ``ema_overwrite_frequency`` (made only with ``use_ema``)."""
    if not options.get("use_ema"):
        return
    momentum, frequency = options["ema_momentum"], options["ema_overwrite_frequency"]
    if momentum > 1 or momentum < 0:
        raise _errors.GradkitValueError(
            f"tf.keras.optimizers.{cls_name}(use_ema=True, ema_momentum={momentum!r}): ema_momentum must be in "
            "the range [0, 1], as Keras requires. Pass a momentum such as 0.99 (the default)."
        )
    if frequency and (not isinstance(frequency, int) or frequency < 1):
        raise _errors.GradkitValueError(
            f"tf.keras.optimizers.{cls_name}(use_ema=True, ema_overwrite_frequency={frequency!r}): "
            "ema_overwrite_frequency must be an integer >= 1 or None, as Keras requires."
        )


def moving_averages(step, averages, values, momentum, overwrite_frequency):
    """The new averages and the Variables' values after them, ``step`` being ``iterations``
    before the step: Keras' update, then the Variables set to their averages when
    ``(step + 1) % ema_overwrite_frequency == 0``."""
    new_averages, new_values = [], []
    for average, value in zip(averages, values):
        m = (step != 0).astype(value.dtype) * momentum
        average = m * average + (1 - m) * value
        new_averages.append(average)
        if overwrite_frequency:
            value = jnp.where((step + 1) % overwrite_frequency == 0, average, value)
        new_values.append(value)
    return new_averages, new_values
