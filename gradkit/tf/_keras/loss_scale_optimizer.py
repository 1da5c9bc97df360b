"""``tf.keras.optimizers.LossScaleOptimizer``: Keras 3's dynamic loss scaling around another optimizer.

``scale_loss`` multiplies the loss by the current scale (``initial_scale`` until the first
step); ``apply_gradients`` divides the gradients by it and lets the inner optimizer step when
every gradient is finite, then doubles the scale after ``dynamic_growth_steps`` such steps in a
row. A gradient that is not finite skips the step (the Variables, the inner optimizer's slots
and its ``iterations`` keep their values) and halves the scale. The scale and the count of
steps since it changed live in Variables, so a compiled step threads them.

Inside ``tf.function`` whether a step is skipped is data: the inner step is computed from
gradients set to zero where they are not finite, and each Variable it assigned takes the new
value or keeps the old one by that flag (so an outer tape differentiates the step taken).

>>> import gradkit.tf as tf
>>> opt = tf.keras.optimizers.LossScaleOptimizer(tf.keras.optimizers.SGD(0.5), initial_scale=4.0)
>>> w = tf.Variable([1.0])
>>> _ = opt.apply_gradients([(tf.constant([float("inf")]), w)])
>>> w.numpy().tolist(), float(opt.dynamic_scale.numpy())
([1.0], 2.0)
>>> _ = opt.apply_gradients([(tf.constant([2.0]), w)])  # the gradient of a loss scaled by 2
>>> w.numpy().tolist()
[0.5]
"""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp

from gradkit import _errors
from gradkit._core import frames

from .._checkpoint import deferred
from .._convert import call, convert
from .layer_weight import KerasStateVariable
from .optimizers import _BASE_OPTIONS, Optimizer, _checked_pairs


def _make_state(optimizer, variables) -> None:
    """Make ``optimizer``'s state for ``variables`` before a step reads it, so a skipped step
    (inside ``tf.function``) can keep every state Variable as it was: a built-in optimizer's slots,
    each part of a ``MultiOptimizer``'s, and an optimizer of your own built once, as its first
    step would build it."""
    from .optimizer_multi import MultiOptimizer  # which imports this module

    if isinstance(optimizer, MultiOptimizer):
        groups: dict = {}
        for variable in variables:
            groups.setdefault(optimizer._optimizer_index(variable), []).append(variable)
        for index, group in groups.items():
            _make_state(optimizer._inner_optimizers[index], group)
    elif optimizer._custom_update:
        if not optimizer.built:
            optimizer.build(variables)
    else:
        optimizer._make_state(variables)


def _all_finite(*grads):
    flags = [jnp.all(jnp.isfinite(g)) for g in grads if jnp.issubdtype(g.dtype, jnp.inexact)]
    return jnp.all(jnp.stack(flags)) if flags else jnp.asarray(True)


def _unscaled(finite, g, scale):
    # A skipped step's result is discarded; zeros keep its arithmetic (and its derivatives) finite.
    return jnp.where(finite, g, jnp.zeros_like(g)) / scale


def _chosen(finite, new, old):
    return jnp.where(finite, new, old)


def _next_scale(finite, counter, scale, growth_steps):
    """Keras' rule: a finite step counts, and the ``growth_steps``-th in a row doubles the scale
    and restarts the count; a non-finite one halves the scale and restarts the count."""
    grow = finite & (counter == growth_steps - 1)
    new_counter = jnp.where(finite & ~grow, counter + 1, jnp.zeros_like(counter))
    factor = jnp.where(grow, 2.0, jnp.where(finite, 1.0, 0.5)).astype(scale.dtype)
    return new_counter, scale * factor


class LossScaleOptimizer(Optimizer):
    """``tf.keras.optimizers.LossScaleOptimizer(inner_optimizer, initial_scale=2.0**15,
    dynamic_growth_steps=2000)``."""

    def __init__(self, inner_optimizer, initial_scale=2.0**15, dynamic_growth_steps=2000, name=None, **kwargs):
        if not kwargs.pop("dynamic", True):
            raise _errors.GradkitValueError(
                "tf.keras.optimizers.LossScaleOptimizer(dynamic=False): Keras 3's LossScaleOptimizer is dynamic "
                "only. For a fixed scale, set loss_scale_factor on the inner optimizer instead."
            )
        for key, default in _BASE_OPTIONS.items():
            if key in kwargs and kwargs.pop(key) != default:
                raise _errors.GradkitValueError(
                    f"tf.keras.optimizers.LossScaleOptimizer does not support `{key}`, as in Keras. Set `{key}` on "
                    "the inner_optimizer instead."
                )
        if kwargs:
            raise _errors.GradkitValueError(
                f"tf.keras.optimizers.LossScaleOptimizer does not support arguments: `{'`, `'.join(kwargs)}` (Keras "
                "raises ValueError too). It takes inner_optimizer, initial_scale, dynamic_growth_steps and name."
            )
        if not isinstance(inner_optimizer, Optimizer):
            raise _errors.GradkitTypeError(
                f"tf.keras.optimizers.LossScaleOptimizer got inner_optimizer={inner_optimizer!r}, which is not a "
                "tf.keras optimizer. Pass one, e.g. LossScaleOptimizer(tf.keras.optimizers.Adam())."
            )
        super().__init__(0.0, None, (), None, name)
        self.inner_optimizer = inner_optimizer
        self.initial_scale = initial_scale
        self.dynamic_growth_steps = dynamic_growth_steps
        self.inner_optimizer.loss_scale_factor = None  # Keras: the gradients are unscaled here, once
        self.step_counter = self.dynamic_scale = None  # made by build, as Keras makes them

    @property
    def learning_rate(self):
        """The inner optimizer's learning rate."""
        return self.inner_optimizer.learning_rate

    @learning_rate.setter
    def learning_rate(self, value):
        self.inner_optimizer.learning_rate = value

    @property
    def iterations(self):
        """The inner optimizer's steps (a skipped step does not count)."""
        return self.inner_optimizer.iterations

    @property
    def variables(self) -> list:
        """Keras' order: this optimizer's own step counter and rate, ``step_counter`` and
        ``dynamic_scale`` once built, then the inner optimizer's Variables."""
        own = [self._iterations, self._learning_rate]
        if self.step_counter is not None:
            own += [self.step_counter, self.dynamic_scale]
        return own + self.inner_optimizer.variables

    def build(self, var_list):
        """Keras': the step counter, the scale (``initial_scale``) and the inner optimizer's state."""
        with frames.Suspend(), jax.ensure_compile_time_eval():
            counter, scale = jnp.zeros((), jnp.int32), jnp.asarray(self.initial_scale, jnp.float32)
        self.step_counter = KerasStateVariable(counter, name="step_counter", trainable=False)
        self.dynamic_scale = KerasStateVariable(scale, name="dynamic_scale", trainable=False)
        self.inner_optimizer.build(var_list)
        deferred.built(self)  # checkpoint values waiting for the Variables made now

    def scale_loss(self, loss):
        """``loss`` times the current scale (``initial_scale`` before the first step)."""
        if self.dynamic_scale is None:
            return loss * self.initial_scale
        return loss * self.dynamic_scale

    def finalize_variable_values(self, var_list):
        """The inner optimizer's ``finalize_variable_values``."""
        self.inner_optimizer.finalize_variable_values(var_list)

    def get_config(self) -> dict:
        """Keras': the name, the inner optimizer serialized, ``initial_scale`` and ``dynamic_growth_steps``."""
        from .optimizer_registry import serialize

        return {
            "name": self.name,
            "inner_optimizer": serialize(self.inner_optimizer),
            "initial_scale": self.initial_scale,
            "dynamic_growth_steps": self.dynamic_growth_steps,
        }

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """A new LossScaleOptimizer (and inner optimizer, without state) from ``get_config()``'s dict."""
        from .optimizer_registry import deserialize

        config = dict(config)
        inner = deserialize(config.pop("inner_optimizer"), custom_objects=custom_objects)
        return cls(inner, **config)

    def apply_gradients(self, grads_and_vars, name=None):
        """Unscale the gradients and let the inner optimizer step if they are all finite; move
        the scale as Keras does. Returns this optimizer's own step counter, as Keras does."""
        pairs = list(grads_and_vars)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the inner optimizer warns of missing gradients itself
            given, every_variable = _checked_pairs(pairs)
        if self.step_counter is None:
            self.build(every_variable)
        grads = [convert(g) for g, _ in given]
        finite = call(_all_finite, *grads)
        scale = self.dynamic_scale.value
        unscaled = iter([call(_unscaled, finite, g, scale) for g in grads])
        inner_pairs = [(None if g is None else next(unscaled), v) for g, v in pairs]
        _make_state(self.inner_optimizer, every_variable)
        skip_known = not isinstance(finite.__gradkit_value__(), jax.core.Tracer)
        if skip_known and not bool(finite):
            pass  # Keras skips the step: only the scale moves
        else:
            rate = self.inner_optimizer._learning_rate
            state = {id(v): v for v in [*self.inner_optimizer.variables, *every_variable] if v is not rate}
            before = {key: v.value for key, v in state.items()}
            self.inner_optimizer.apply_gradients(inner_pairs)
            if not skip_known:  # inside tf.function: keep the old values where the step is skipped
                for key, v in state.items():
                    if v.value is not before[key]:
                        v.assign(call(_chosen, finite, v.value, before[key]))
        counter, new_scale = call(
            _next_scale, finite, self.step_counter.value, scale, growth_steps=int(self.dynamic_growth_steps)
        )
        self.step_counter.assign(counter)
        self.dynamic_scale.assign(new_scale)
        return self._iterations
