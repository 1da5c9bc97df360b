"""Keras optimizers' ``gradient_accumulation_steps``: one real update every ``k`` calls, as Keras 3 makes it.

Each Variable has an accumulator (zeros of its shape and dtype). A call of ``apply_gradients``
whose raw count ``(n + 1) % k`` is not 0 (``n``, the calls before it) only adds its gradients
(divided by ``loss_scale_factor``) to the accumulators: the Variables and their slots keep their
values. Every ``k``-th call steps with the average ``(g + accumulated) / k`` (clipped, with
weight decay), then sets every accumulator to zero, also those of Variables left out of that
call (their gradients so far are dropped, as in Keras). The update rules and ``use_ema`` see
``iterations = n // k`` (the updates made so far); a learning-rate schedule sees the raw count
``n``, as Keras documents.

The choice between the two is a ``lax.cond`` inside the recorded step, so a compiled step
threads the raw count as data (one program for every call), and an outer tape differentiates
the update exactly (with respect to the learning rate and the accumulated gradients' sources),
while a call that only accumulates passes the Variables through unchanged.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors
from gradkit._core.variable import Variable
from gradkit._tape.tensor import Tensor

from .._convert import convert


def check_accumulation_option(cls_name: str, steps) -> None:
    """Keras' check: ``None`` and other false values mean no accumulation; anything else must be >= 2."""
    if not steps:
        return
    try:
        enough = steps >= 2
    except TypeError as error:
        raise _errors.GradkitTypeError(
            f"tf.keras.optimizers.{cls_name}(gradient_accumulation_steps={steps!r}): it must be an integer >= 2 "
            f"(or None for no accumulation), but a {type(steps).__name__} cannot be compared with 2, as Keras "
            "finds. Pass an int such as gradient_accumulation_steps=4."
        ) from error
    if not enough:
        raise _errors.GradkitValueError(
            f"tf.keras.optimizers.{cls_name}(gradient_accumulation_steps={steps!r}): it must be an integer >= 2, "
            "as Keras requires (1 would accumulate nothing). Pass None for an update at every step, or an int "
            "such as 4."
        )


def accumulation_steps(steps):
    """``k`` as an int for a step, or None without accumulation. Keras accepts a float ``k >= 2``
    when made, but its first step raises TypeError (the int64 step counter cannot take the
    float), and so does gradkit's, before any Variable changes."""
    if not steps:
        return None
    if isinstance(steps, (bool, np.bool_)) or not isinstance(steps, (int, np.integer)):
        raise _errors.GradkitTypeError(
            f"apply_gradients with gradient_accumulation_steps={steps!r} ({type(steps).__name__}): the step "
            "counter is an integer, and TensorFlow cannot convert a non-integer to its dtype (Keras raises "
            "TypeError here too). Make the optimizer with an int: gradient_accumulation_steps="
            f"{int(steps) if isinstance(steps, float) and steps.is_integer() else 'an int >= 2'}."
        )
    return int(steps)


def updates_made(calls, steps):
    """Keras' ``iterations`` with accumulation: the updates made in ``calls`` calls."""
    return calls // steps


def accumulated_gradient(g, variable):
    """``g`` ready to add to ``variable``'s accumulator. A tensor must have the Variable's dtype:
    Keras adds it to the accumulator as it is, and TensorFlow refuses to add tensors of two
    dtypes (InvalidArgumentError, for instance a float32 gradient of a bfloat16 Variable). A
    Python number, list or NumPy array is converted to the Variable's dtype, as TensorFlow does."""
    dtype = np.dtype(variable.dtype)
    if isinstance(g, (Tensor, Variable, jax.Array, jax.core.Tracer)):
        if np.dtype(g.dtype) != dtype:
            raise _errors.InvalidArgumentValueError(
                f"apply_gradients with gradient_accumulation_steps got a {np.dtype(g.dtype).name} gradient for "
                f"the {dtype.name} Variable {variable.name!r}: the gradient is added to an accumulator of the "
                "Variable's dtype, and TensorFlow cannot add tensors of two dtypes (Keras raises "
                f"InvalidArgumentError here). Cast the gradient first: tf.cast(g, tf.{dtype.name})."
            )
        return convert(g)
    return convert(g, dtype)


def _like(new, old):
    """``new`` in ``old``'s dtypes, leaf by leaf: both branches of a ``lax.cond`` must agree."""
    return jax.tree_util.tree_map(lambda n, o: jnp.asarray(n).astype(jnp.asarray(o).dtype), new, old)


def accumulated_step(
    lr, raw_step, shared, grads, accumulators, others, states, params, *, steps, loss_scale, step, **step_options
):
    """Keras' call with ``gradient_accumulation_steps=steps``, as a pure function.

    ``raw_step`` counts the calls before this one; ``grads``/``accumulators``/``states``/``params``
    belong to the Variables with a gradient, ``others`` are the accumulators of the rest. ``step``
    is the optimizer's step (clipping, weight decay and the rule, given the rule's ``iterations``).
    Returns the new values, states, shared state, accumulators and other accumulators.
    """
    if loss_scale is not None:  # Keras unscales each call's gradients before accumulating them
        grads = [g / loss_scale for g in grads]
    old = (params, states, shared, accumulators, others)

    def update(_):
        averaged = [(g + a) / steps for g, a in zip(grads, accumulators)]
        values, new_states, new_shared = step(
            lr, updates_made(raw_step, steps), shared, averaged, states, params, **step_options
        )
        zeros = [jnp.zeros_like(a) for a in accumulators], [jnp.zeros_like(a) for a in others]
        return _like((values, new_states, new_shared, *zeros), old)

    def accumulate(_):
        return params, states, shared, [a + g for a, g in zip(accumulators, grads)], others

    return jax.lax.cond((raw_step + 1) % steps == 0, update, accumulate, None)
