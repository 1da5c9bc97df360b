"""Keras 3's Adadelta, Lion, Lamb, Ftrl and Adafactor update rules, step for step, as optax transformations.

The same contract as ``optimizer_rules``: ``make(lr, step, *hyper)`` gives one step's
transformation, ``step`` being the optimizer's ``iterations`` before the step, and each rule
computes in Keras' order of operations so the results agree to rounding. Python floats enter
where Keras uses them as Python floats (exact in float64) and through ``keras_cast`` where Keras
casts them. Lamb, Ftrl and Adafactor read the Variable itself (after weight decay, as Keras
decays before the rule). Ftrl sets the Variable to a new value rather than adding an update:
its ``make`` says so with ``assigns_value``.

Square roots and powers taken where they may meet 0 have derivative 0 there, not infinity, so a
meta-gradient through a step is finite (see ``optimizer_rules._sqrt``).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax

from .optimizer_rules import _sqrt, keras_cast, tf_maximum, tf_minimum


def _per_array_with_param(init_one, update_one):
    """A transformation from a rule for one array that also reads the array's value."""

    def init(params):
        return [init_one(p) for p in jax.tree_util.tree_leaves(params)]

    def update(grads, state, params=None):
        leaves, treedef = jax.tree_util.tree_flatten(grads)
        results = [update_one(g, s, p) for g, s, p in zip(leaves, state, jax.tree_util.tree_leaves(params))]
        return jax.tree_util.tree_unflatten(treedef, [u for u, _ in results]), [s for _, s in results]

    return optax.GradientTransformation(init, update)


def _zeros_pair(p):
    return jnp.zeros_like(p), jnp.zeros_like(p)


def adadelta(lr, step, rho, epsilon):
    """Keras' Adadelta: the RMS of past updates over the RMS of past gradients, times ``lr``."""

    def rms(x):
        return jnp.sqrt(x + epsilon)

    def update_one(g, state, p):
        accumulated_grad, accumulated_delta = state
        accumulated_grad = rho * accumulated_grad + (1 - rho) * (g * g)
        delta = -((rms(accumulated_delta) * g) / rms(accumulated_grad))
        accumulated_delta = rho * accumulated_delta + (1 - rho) * (delta * delta)
        return lr * delta, (accumulated_grad, accumulated_delta)

    return _per_array_with_param(_zeros_pair, update_one)


def lion(lr, step, beta_1, beta_2):
    """Keras' Lion: the sign of an interpolation of momentum and gradient, times ``lr``."""

    def update_one(g, state, p):
        (m,) = state
        b1, b2 = keras_cast(beta_1, g.dtype), keras_cast(beta_2, g.dtype)
        update = -(lr * jnp.sign(m * b1 + g * (1.0 - b1)))
        return update, (m * b2 + g * (1.0 - b2),)

    return _per_array_with_param(lambda p: (jnp.zeros_like(p),), update_one)


def _norm(x):
    return _sqrt(jnp.sum(x * x))


def lamb(lr, step, beta_1, beta_2, epsilon):
    """Keras' Lamb: Adam's bias-corrected direction scaled by the trust ratio
    ``|w| / |update|`` (1 where either norm is 0)."""

    def update_one(g, state, p):
        m, v = state
        t = (step + 1).astype(g.dtype)
        beta_1_power = jnp.power(keras_cast(beta_1, g.dtype), t)
        beta_2_power = jnp.power(keras_cast(beta_2, g.dtype), t)
        m = m + (g - m) * (1 - beta_1)
        v = v + (g * g - v) * (1 - beta_2)
        direction = (m / (1.0 - beta_1_power)) / (_sqrt(v / (1.0 - beta_2_power)) + epsilon)
        w_norm, g_norm = _norm(p), _norm(direction)
        both = (w_norm > 0) & (g_norm > 0)
        ratio = jnp.where(both, w_norm / jnp.where(both, g_norm, 1), 1.0)
        return -(ratio * lr * direction), (m, v)

    return _per_array_with_param(_zeros_pair, update_one)


def _power(x, exponent):
    """``x ** exponent`` for ``x >= 0`` and ``exponent >= 0`` whose derivative at ``x = 0`` is 0
    (a NaN stays NaN, as in Keras' step)."""
    if exponent == 0:
        return jnp.ones_like(x)
    zero = x == 0
    return jnp.where(zero, 0, jnp.power(jnp.where(zero, 1, x), exponent))


def ftrl(
    lr,
    step,
    learning_rate_power,
    initial_accumulator_value,
    l1_regularization_strength,
    l2_regularization_strength,
    l2_shrinkage_regularization_strength,
    beta,
):
    """Keras' FTRL-proximal: the Variable's new value (not an update) from the accumulated
    squared gradients and the linear term, L1 shrinking it to exactly 0."""

    def update_one(g, state, p):
        accumulator, linear = state
        l2 = l2_regularization_strength + beta / (2.0 * lr)
        grad_to_use = g + (2 * l2_shrinkage_regularization_strength) * p
        new_accumulator = accumulator + g * g
        new_power = _power(new_accumulator, -learning_rate_power)
        linear = linear + (grad_to_use - ((new_power - _power(accumulator, -learning_rate_power)) / lr) * p)
        quadratic = new_power / lr + 2 * l2
        l1 = l1_regularization_strength
        # TensorFlow's clip_by_value passes the gradient at the bounds too.
        clipped = jnp.where(linear < -l1, -l1, jnp.where(linear > l1, l1, linear))
        return (clipped - linear) / quadratic, (new_accumulator, linear)

    def init_one(p):
        return jnp.full_like(p, keras_cast(initial_accumulator_value, p.dtype)), jnp.zeros_like(p)

    return _per_array_with_param(init_one, update_one)


ftrl.assigns_value = True


def _rms(x):
    return _sqrt(jnp.mean(x * x))


def adafactor(lr, step, beta_2_decay, epsilon_1, epsilon_2, clip_threshold, relative_step):
    """Keras' Adafactor: a second moment factored into row and column averages for arrays of
    rank 2 or more (the last two axes), a step relative to the Variable's RMS, and the update
    clipped to RMS ``clip_threshold``. An array of rank 0 or 1 keeps a full second moment, and
    two int32 placeholders where Keras keeps them (so the slots count as Keras'). The step size
    is ``min(lr, 1 / sqrt(t))`` with ``relative_step`` or without it (Keras' formula takes the
    minimum either way)."""

    def update_one(g, state, p):
        r, c, v = state
        dtype = g.dtype
        t = (step + 1).astype(dtype)
        rho = tf_minimum(lr, 1 / jnp.sqrt(t))
        alpha = tf_maximum(keras_cast(epsilon_2, dtype), _rms(p)) * rho
        regulated = g * g + epsilon_1
        beta_2_t = 1 - jnp.power(t, beta_2_decay)
        if p.ndim >= 2:
            r = beta_2_t * r + (1 - beta_2_t) * jnp.mean(regulated, axis=-1)
            c = beta_2_t * c + (1 - beta_2_t) * jnp.mean(regulated, axis=-2)
            v = jnp.expand_dims(r / jnp.mean(r, axis=-1, keepdims=True), -1) * jnp.expand_dims(c, -2)
        else:
            v = beta_2_t * v + (1 - beta_2_t) * regulated
        u = g / jnp.sqrt(v)
        u_hat = u / tf_maximum(jnp.ones((), dtype), _rms(u) / clip_threshold)
        return -(alpha * u_hat), (r, c, v)

    def init_one(p):
        if p.ndim >= 2:
            return jnp.zeros(p.shape[:-1], p.dtype), jnp.zeros(p.shape[:-2] + p.shape[-1:], p.dtype), jnp.zeros_like(p)
        placeholder = jnp.zeros((), jnp.int32)
        return placeholder, placeholder, jnp.zeros_like(p)

    return _per_array_with_param(init_one, update_one)
