"""``tf.keras.optimizers.schedules``: learning rates as functions of the optimizer's step.

An optimizer given a schedule calls it with its ``iterations`` at every step, as Keras does,
so a compiled training step reads the step and compiles once. The formulas are Keras 3's.
"""

from __future__ import annotations

import abc
import math

import jax.numpy as jnp

from gradkit import _errors
from gradkit._tape.lift import lift_op as lift

from .._convert import convert, wrap


class LearningRateSchedule(abc.ABC):
    """The base class: subclasses define ``__call__(step)``, which returns the rate at ``step``."""

    @abc.abstractmethod
    def __call__(self, step): ...

    def get_config(self) -> dict:
        return dict(self._config)

    @classmethod
    def from_config(cls, config: dict):
        return cls(**config)


def _positive(value, what: str, schedule: str) -> None:
    if not value > 0:
        raise _errors.GradkitValueError(
            f"tf.keras.optimizers.schedules.{schedule}: {what} must be > 0, but got {what}={value!r}."
        )


def _exponential(step, lr, decay_steps, decay_rate, staircase):
    p = step.astype(jnp.float32) / decay_steps
    return lr * decay_rate ** (jnp.floor(p) if staircase else p)


class _StepDecay(LearningRateSchedule):
    """A rate ``initial_learning_rate`` decayed by ``decay_rate`` as ``step / decay_steps`` grows
    (floored with ``staircase``); subclasses name the formula."""

    _formula = None

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase=False, name=None):
        _positive(decay_steps, "decay_steps", type(self).__name__)
        self.initial_learning_rate, self.decay_steps, self.decay_rate = initial_learning_rate, decay_steps, decay_rate
        self.staircase, self.name = bool(staircase), name or type(self).__name__
        self._config = dict(
            initial_learning_rate=initial_learning_rate,
            decay_steps=decay_steps,
            decay_rate=decay_rate,
            staircase=staircase,
            name=self.name,
        )

    def __call__(self, step):
        return wrap(
            lift(type(self)._formula)(
                convert(step),
                float(self.initial_learning_rate),
                float(self.decay_steps),
                float(self.decay_rate),
                self.staircase,
            )
        )


class ExponentialDecay(_StepDecay):
    """``initial_learning_rate * decay_rate ** (step / decay_steps)`` (the exponent floored with ``staircase``)."""

    _formula = staticmethod(_exponential)


def _inverse_time(step, lr, decay_steps, decay_rate, staircase):
    p = step.astype(jnp.float32) / decay_steps
    return lr / (1.0 + decay_rate * (jnp.floor(p) if staircase else p))


class InverseTimeDecay(_StepDecay):
    """``initial_learning_rate / (1 + decay_rate * step / decay_steps)`` (floored with ``staircase``)."""

    _formula = staticmethod(_inverse_time)


def _piecewise(step, boundaries, values):
    # Keras' sum of indicators: values[0] up to and including the first boundary, values[-1]
    # after the last, values[i + 1] on (boundaries[i], boundaries[i + 1]].
    out = (step <= boundaries[0]) * values[0] + (step > boundaries[-1]) * values[-1]
    for low, high, value in zip(boundaries[:-1], boundaries[1:], values[1:-1]):
        out = out + ((step > low) & (step <= high)) * value
    return out.astype(jnp.float32)


class PiecewiseConstantDecay(LearningRateSchedule):
    """``values[0]`` up to ``boundaries[0]``, ``values[i + 1]`` on ``(boundaries[i], boundaries[i + 1]]``,
    ``values[-1]`` after the last boundary."""

    def __init__(self, boundaries, values, name="PiecewiseConstant"):
        if len(values) != len(boundaries) + 1:
            raise _errors.GradkitValueError(
                f"tf.keras.optimizers.schedules.PiecewiseConstantDecay: values must have one more entry than "
                f"boundaries, but got {len(boundaries)} boundaries and {len(values)} values."
            )
        self.boundaries, self.values, self.name = list(boundaries), list(values), name
        self._config = dict(boundaries=list(boundaries), values=list(values), name=name)

    def __call__(self, step):
        return wrap(
            lift(_piecewise)(
                convert(step), tuple(float(b) for b in self.boundaries), tuple(float(v) for v in self.values)
            )
        )


def _polynomial(step, lr, decay_steps, end_lr, power, cycle):
    step = step.astype(jnp.float32)
    if cycle:
        decay_steps = decay_steps * jnp.where(step == 0, 1.0, jnp.ceil(step / decay_steps))
    else:
        step = jnp.minimum(step, decay_steps)
    return (lr - end_lr) * (1 - step / decay_steps) ** power + end_lr


class PolynomialDecay(LearningRateSchedule):
    """From ``initial_learning_rate`` to ``end_learning_rate`` over ``decay_steps`` as ``(1 - p) ** power``."""

    def __init__(
        self,
        initial_learning_rate,
        decay_steps,
        end_learning_rate=0.0001,
        power=1.0,
        cycle=False,
        name="PolynomialDecay",
    ):
        _positive(decay_steps, "decay_steps", "PolynomialDecay")
        self.initial_learning_rate, self.decay_steps = initial_learning_rate, decay_steps
        self.end_learning_rate, self.power, self.cycle, self.name = end_learning_rate, power, bool(cycle), name
        self._config = dict(
            initial_learning_rate=initial_learning_rate,
            decay_steps=decay_steps,
            end_learning_rate=end_learning_rate,
            power=power,
            cycle=cycle,
            name=name,
        )

    def __call__(self, step):
        return wrap(
            lift(_polynomial)(
                convert(step),
                float(self.initial_learning_rate),
                float(self.decay_steps),
                float(self.end_learning_rate),
                float(self.power),
                self.cycle,
            )
        )


def _cosine(step, lr, decay_steps, alpha, warmup_target, warmup_steps):
    step = step.astype(jnp.float32)

    def decay(s, start):
        cosine = 0.5 * (1.0 + jnp.cos(math.pi * (s / decay_steps)))
        return start * ((1 - alpha) * cosine + alpha)

    if warmup_target is None:
        return decay(jnp.minimum(step, decay_steps), lr)
    step = jnp.minimum(step, decay_steps + warmup_steps)
    warming = (warmup_target - lr) * (step / warmup_steps) + lr
    return jnp.where(step < warmup_steps, warming, decay(step - warmup_steps, warmup_target))


class CosineDecay(LearningRateSchedule):
    """Cosine decay to ``alpha * initial`` over ``decay_steps``, after an optional linear warmup to
    ``warmup_target`` over ``warmup_steps``."""

    def __init__(
        self,
        initial_learning_rate,
        decay_steps,
        alpha=0.0,
        name="CosineDecay",
        warmup_target=None,
        warmup_steps=0,
    ):
        _positive(decay_steps, "decay_steps", "CosineDecay")
        self.initial_learning_rate, self.decay_steps, self.alpha = initial_learning_rate, decay_steps, alpha
        self.warmup_target, self.warmup_steps, self.name = warmup_target, warmup_steps, name
        self._config = dict(
            initial_learning_rate=initial_learning_rate,
            decay_steps=decay_steps,
            alpha=alpha,
            name=name,
            warmup_target=warmup_target,
            warmup_steps=warmup_steps,
        )

    def __call__(self, step):
        target = None if self.warmup_target is None else float(self.warmup_target)
        return wrap(
            lift(_cosine)(
                convert(step),
                float(self.initial_learning_rate),
                float(self.decay_steps),
                float(self.alpha),
                target,
                float(self.warmup_steps),
            )
        )


def _cosine_restarts(step, lr, first_decay_steps, t_mul, m_mul, alpha):
    fraction = step.astype(jnp.float32) / first_decay_steps
    if t_mul == 1.0:
        restart = jnp.floor(fraction)
        fraction = fraction - restart
    else:
        # The periods grow by t_mul: period i starts at (1 - t_mul**i) / (1 - t_mul) periods.
        restart = jnp.floor(jnp.log(1.0 - fraction * (1.0 - t_mul)) / math.log(t_mul))
        started = (1.0 - jnp.power(t_mul, restart)) / (1.0 - t_mul)
        fraction = (fraction - started) / jnp.power(t_mul, restart)
    cosine = 0.5 * jnp.power(m_mul, restart) * (1.0 + jnp.cos(math.pi * fraction))
    return lr * ((1 - alpha) * cosine + alpha)


class CosineDecayRestarts(LearningRateSchedule):
    """Cosine decay with warm restarts (SGDR): decays from the rate to ``alpha`` times it over
    ``first_decay_steps``, then restarts, each period ``t_mul`` times longer and starting
    ``m_mul`` times lower than the one before."""

    def __init__(self, initial_learning_rate, first_decay_steps, t_mul=2.0, m_mul=1.0, alpha=0.0, name="SGDRDecay"):
        if first_decay_steps <= 0:
            raise _errors.GradkitValueError(
                f"CosineDecayRestarts: first_decay_steps must be > 0, as Keras requires. Received: "
                f"first_decay_steps={first_decay_steps}"
            )
        self.initial_learning_rate, self.first_decay_steps, self.alpha, self.name = (
            initial_learning_rate,
            first_decay_steps,
            alpha,
            name,
        )
        self._t_mul, self._m_mul = t_mul, m_mul
        self._config = dict(
            initial_learning_rate=initial_learning_rate,
            first_decay_steps=first_decay_steps,
            t_mul=t_mul,
            m_mul=m_mul,
            alpha=alpha,
            name=name,
        )

    def __call__(self, step):
        return wrap(
            lift(_cosine_restarts)(
                convert(step),
                float(self.initial_learning_rate),
                float(self.first_decay_steps),
                float(self._t_mul),
                float(self._m_mul),
                float(self.alpha),
            )
        )


def serialize(learning_rate_schedule) -> dict:
    """``keras.optimizers.schedules.serialize``: the schedule as Keras writes it in a config."""
    from .optimizer_config import serialize_schedule

    return serialize_schedule(learning_rate_schedule)


def deserialize(config, custom_objects=None):
    """``keras.optimizers.schedules.deserialize``: the schedule ``serialize`` described."""
    from .optimizer_config import deserialize_schedule

    return deserialize_schedule(config, custom_objects)
