"""An optimizer of your own: a subclass of ``tf.keras.optimizers.Optimizer`` that writes Keras 3's
``build`` and ``update_step``, as Keras' guide to custom optimizers shows.

``build(var_list)`` calls ``super().build(var_list)`` and makes its slots with
``add_variable_from_reference`` (or ``add_variable``); ``update_step(gradient, variable,
learning_rate)`` updates one Variable with ``self.assign``/``assign_add``/``assign_sub``, finding its
slots by ``self._get_variable_index(variable)``. ``apply_gradients`` then does what Keras' base
class does around it: builds on the first call, divides by ``loss_scale_factor``, clips
(``clipnorm``/``clipvalue``/``global_clipnorm``), applies ``weight_decay``, calls ``update_step``
per Variable, projects by each Variable's constraint and counts the step. Inside a
``tf.function`` the assignments are threaded through the compiled step as any others.

>>> import gradkit.tf as tf
>>> class Momentum(tf.keras.optimizers.Optimizer):
...     def __init__(self, learning_rate=0.1, **kwargs):
...         super().__init__(learning_rate=learning_rate, name="momentum", **kwargs)
...     def build(self, var_list):
...         super().build(var_list)
...         self.m = [self.add_variable_from_reference(v, "m") for v in var_list]
...     def update_step(self, gradient, variable, learning_rate):
...         m = self.m[self._get_variable_index(variable)]
...         self.assign(m, 0.9 * m + gradient)
...         self.assign_sub(variable, learning_rate * m)
>>> w = tf.Variable([1.0, 2.0])
>>> opt = Momentum()
>>> for _ in range(2):
...     _ = opt.apply_gradients([(tf.constant([1.0, -1.0]), w)])
>>> [round(float(x), 4) for x in w.numpy()], int(opt.iterations)
([0.71, 2.29], 2)
"""

from __future__ import annotations

import weakref

import jax.numpy as jnp
import numpy as np

from gradkit import _errors
from gradkit._core.variable import Variable
from gradkit._tape.lift import lift_op as lift

from .._convert import convert, wrap
from .gradient_clipping import active_clip, clip_gradients
from .layer_weight import KerasStateVariable


def check_custom_options(cls_name: str, options: dict) -> None:
    """The base options a custom optimizer takes here (all but the two that keep state of their
    own per Variable, which Keras keeps outside ``update_step``)."""
    for key in ("use_ema", "gradient_accumulation_steps"):
        if options.get(key):
            raise _errors.GradkitNotImplementedError(
                f"{cls_name}({key}={options[key]!r}): gradkit runs an optimizer of your own (update_step) with "
                "loss_scale_factor, clipping and weight_decay, but not with use_ema or gradient_accumulation_steps. "
                "Average or accumulate in update_step, or use a built-in optimizer for them."
            )


class CustomOptimizerMethods:
    """Keras 3's API for the subclasses that write ``update_step`` (mixed into ``Optimizer``)."""

    def _custom_build(self, var_list):
        var_list = list(var_list)
        self._built = [weakref.ref(v) for v in var_list]
        self._custom_index = {id(v): i for i, v in enumerate(var_list)}

    def _get_variable_index(self, variable) -> int:
        index = self.__dict__.get("_custom_index", {}).get(id(variable))
        if index is None:
            raise _errors.GradkitKeyError(
                f"The optimizer has no slot for Variable {getattr(variable, 'name', variable)!r}: it was not among "
                "the Variables given to build (Keras: 'Unknown variable'). Build the optimizer with every Variable "
                "it updates (apply_gradients builds with those of its first call)."
            )
        return index

    def add_variable(self, shape, initializer="zeros", dtype=None, aggregation="none", name=None):
        """A new slot Variable of the optimizer (zeros, ones, or what a Keras initializer makes)."""
        from . import initializers

        dtype = np.dtype(getattr(dtype, "as_numpy_dtype", dtype) or "float32")
        shape = tuple(int(d) for d in shape)
        if isinstance(initializer, str) and initializer in ("zeros", "ones"):
            value = (np.zeros if initializer == "zeros" else np.ones)(shape, dtype)
        else:
            value = convert(initializers.get(initializer)(shape, dtype=dtype), dtype)
        slot = KerasStateVariable(value, name=name or "variable", trainable=False)
        self.__dict__.setdefault("_custom_slots", []).append(slot)
        return slot

    def add_variable_from_reference(self, reference_variable, name=None, initializer="zeros"):
        """A slot Variable shaped as ``reference_variable``, named after it (``<name>_<slot>``)."""
        base = reference_variable.name.split(":")[0].replace("/", "_")
        return self.add_variable(
            tuple(reference_variable.shape),
            initializer=initializer,
            dtype=reference_variable.dtype,
            name=f"{base}_{name}" if name else base,
        )

    def add_optimizer_variables(self, trainable_variables, name, initializer="zeros"):
        """Keras 3's: a slot per Variable of ``trainable_variables`` by ``add_variable_from_reference``;
        with a list of names (and one initializer or one per name), a tuple of such lists, made
        interleaved (each Variable's slots together), as Keras makes them."""
        names = [name] if isinstance(name, str) else list(name)
        if isinstance(name, str) or isinstance(initializer, str) or not isinstance(initializer, (list, tuple)):
            initializers = [initializer] * len(names)
        else:
            initializers = list(initializer)
        if len(names) != len(initializers):
            raise _errors.GradkitValueError(
                f"add_optimizer_variables got {len(names)} names and {len(initializers)} initializers: pass one "
                f"initializer, or one per name, as Keras requires. Received name={name!r}, initializer={initializer!r}."
            )
        made = tuple([] for _ in names)
        for variable in trainable_variables:
            for slots, slot_name, slot_initializer in zip(made, names, initializers):
                slots.append(self.add_variable_from_reference(variable, name=slot_name, initializer=slot_initializer))
        return made[0] if isinstance(name, str) else made

    def assign(self, variable, value):
        variable.assign(value)

    def assign_add(self, variable, value):
        variable.assign_add(value)

    def assign_sub(self, variable, value):
        variable.assign_sub(value)

    def update_step(self, gradient, variable, learning_rate):
        raise _errors.GradkitNotImplementedError(
            f"{type(self).__name__} is an optimizer of your own and must define update_step(gradient, variable, "
            "learning_rate), as Keras' Optimizer subclasses do."
        )

    def _apply_custom(self, pairs, every_variable):
        """``apply_gradients`` for a subclass that writes ``update_step`` (see the module docstring)."""
        if "_custom_index" not in self.__dict__:
            self.build(every_variable)
        variables = [v for _, v in pairs]
        for v in variables:
            self._get_variable_index(v)  # every one known before anything changes
        grads = [convert(g) for g, _ in pairs]
        for k, (g, v) in enumerate(zip(grads, variables)):
            if tuple(jnp.shape(g)) != tuple(jnp.shape(v.value)):
                raise _errors.InvalidArgumentValueError(
                    f"apply_gradients got a gradient of shape {tuple(jnp.shape(g))} for Variable {v.name!r} of shape "
                    f"{tuple(jnp.shape(v.value))} (pair {k}). Pair each gradient with its own Variable."
                )
        scale = None if self.loss_scale_factor is None else float(self.loss_scale_factor)
        clip = active_clip(self.clipnorm, self.clipvalue, self.global_clipnorm)
        grads = lift(_prepared)(grads, scale=scale, clip=clip)
        learning_rate = self.learning_rate
        lr = learning_rate.value if isinstance(learning_rate, Variable) else convert(learning_rate)
        for v in variables:
            decay = self._decay_of(v)
            if decay is not None:
                v.assign_sub(v * wrap(lr * decay))  # Keras: v - v * weight_decay * learning_rate
        for g, v in zip(grads, variables):
            self.update_step(wrap(g), v, learning_rate)
        for v in variables:
            constraint = getattr(v, "constraint", None)
            if constraint is not None:
                v.assign(constraint(v))
        self._iterations.assign_add(1)
        return self._iterations


def _prepared(grads, scale, clip):
    if scale is not None:
        grads = [g / scale for g in grads]
    return list(clip_gradients(grads, clip))
