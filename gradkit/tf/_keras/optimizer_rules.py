"""Keras 3's optimizer update rules, step for step, as optax transformations.

Each ``make(lr, step, *hyper)`` gives the transformation of one training step: ``lr`` is the
step's learning rate and ``step`` the optimizer's ``iterations`` before the step (Nadam's is
``(iterations, u_product)``, see ``nadam_advance``). The updates are what Keras adds to each
Variable, computed in Keras' order of operations, so the results agree to rounding.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax


def _per_array(init_one, update_one):
    """A transformation from a rule for one array: its state is the list of each leaf's state."""

    def init(params):
        return [init_one(p) for p in jax.tree_util.tree_leaves(params)]

    def update(grads, state, params=None):
        leaves, treedef = jax.tree_util.tree_flatten(grads)
        results = [update_one(g, s) for g, s in zip(leaves, state)]
        return jax.tree_util.tree_unflatten(treedef, [u for u, _ in results]), [s for _, s in results]

    return optax.GradientTransformation(init, update)


def tf_maximum(a, b):
    """``maximum`` whose gradient goes to ``a`` on a tie, as TensorFlow's does (jax splits it)."""
    return jnp.where(a >= b, a, b)


def tf_minimum(a, b):
    """``minimum`` whose gradient goes to ``a`` on a tie, as TensorFlow's does (jax splits it)."""
    return jnp.where(a <= b, a, b)


def keras_cast(value, dtype):
    """A Python float hyperparameter as Keras' ``ops.cast(value, dtype)`` makes it on TensorFlow:
    the number becomes a float32 tensor first, so a float64 Variable's step sees ``beta_2 = 0.999``
    rounded to float32 (``0.99900001287...``), not the float64 nearest 0.999. The rules cast where
    Keras casts and use the Python float where Keras does, so float64 steps agree to rounding."""
    return jnp.asarray(np.float32(value), dtype)


def _sqrt(v):
    """``sqrt(v)`` for ``v >= 0`` whose derivative at 0 is 0, not infinity.

    ``v`` is 0 only while a parameter's gradients have all been exactly 0, and then so is
    the first moment: the update's true derivative comes through the first moment alone, and
    an infinite factor here would turn a meta-gradient through the step into NaN. (RMSprop and
    Adagrad add epsilon inside the square root, so theirs is never taken at 0 while the update
    is finite.) Only 0 itself is special: a NaN (an overflowed second moment, ``inf - inf``) stays
    NaN, as Keras' step gives it, so the weights show it rather than step by ``m / epsilon``.
    """
    zero = v == 0
    return jnp.where(zero, 0, jnp.sqrt(jnp.where(zero, 1, v)))


def _zeros(count):
    return lambda p: tuple(jnp.zeros_like(p) for _ in range(count))


def sgd(lr, step, momentum, nesterov):
    """Keras' SGD, step for step: the learning rate is inside the momentum buffer
    (``m = momentum * m - lr * g``), so a learning rate changed between steps acts as in
    Keras, where ``optax.sgd`` would rescale the whole buffer."""
    if not momentum:
        return optax.scale(-lr)

    def velocity(m, g):
        return m * keras_cast(momentum, m.dtype) - g * lr

    def update(grads, state, params=None):
        m = jax.tree_util.tree_map(velocity, state, grads)
        # Nesterov: one more velocity step from the new buffer, as Keras writes it.
        return (jax.tree_util.tree_map(velocity, m, grads) if nesterov else m), m

    return optax.GradientTransformation(lambda params: jax.tree_util.tree_map(jnp.zeros_like, params), update)


def adam(lr, step, beta_1, beta_2, epsilon, amsgrad):
    """Keras' Adam, step for step: ``epsilon`` is added to ``sqrt(v)`` before the bias
    correction (the paper's "epsilon hat"), where ``optax.adam`` adds it after; with Keras'
    default 1e-7 the two differ visibly while ``v`` is small. The bias correction counts the
    optimizer's steps (``step``, its ``iterations``), as Keras does, not a Variable's own."""

    def update_one(g, state):
        m, v, v_hat = state
        m = m + (g - m) * (1 - beta_1)
        v = v + (g * g - v) * (1 - beta_2)
        if amsgrad:
            v_hat = tf_maximum(v_hat, v)
        t = (step + 1).astype(g.dtype)
        alpha = (
            lr
            * jnp.sqrt(1 - jnp.power(keras_cast(beta_2, g.dtype), t))
            / (1 - jnp.power(keras_cast(beta_1, g.dtype), t))
        )
        return -((m * alpha) / (_sqrt(v_hat if amsgrad else v) + epsilon)), (m, v, v_hat)

    return _per_array(
        lambda p: (jnp.zeros_like(p), jnp.zeros_like(p), jnp.zeros_like(p) if amsgrad else ()), update_one
    )


def rmsprop(lr, step, rho, momentum, epsilon, centered):
    """Keras' RMSprop: ``epsilon`` inside the square root, the learning rate inside the
    momentum buffer, and ``centered`` subtracting the squared running mean gradient."""

    def update_one(g, state):
        velocity, moment, average = state
        velocity = rho * velocity + (1 - rho) * (g * g)
        if centered:
            average = rho * average + (1 - rho) * g
            denominator = velocity - average * average + epsilon
        else:
            denominator = velocity + epsilon
        increment = (lr * g) / jnp.sqrt(denominator)
        if momentum > 0:
            moment = momentum * moment + increment
            increment = moment
        return -increment, (velocity, moment, average)

    def init_one(p):
        zeros = jnp.zeros_like(p)
        return (zeros, zeros if momentum > 0 else (), zeros if centered else ())

    return _per_array(init_one, update_one)


def adagrad(lr, step, initial_accumulator_value, epsilon):
    """Keras' Adagrad: the accumulator starts at ``initial_accumulator_value``, epsilon is
    inside the square root."""

    def update_one(g, state):
        (accumulator,) = state
        accumulator = accumulator + g * g
        return -((lr * g) / jnp.sqrt(accumulator + epsilon)), (accumulator,)

    # Keras' Constant initializer casts the value as ops.cast does (through float32).
    return _per_array(lambda p: (jnp.full_like(p, keras_cast(initial_accumulator_value, p.dtype)),), update_one)


def adamax(lr, step, beta_1, beta_2, epsilon):
    """Keras' Adamax: the infinity norm ``u = max(beta_2 * u, |g|)``, epsilon added to it."""

    def update_one(g, state):
        m, u = state
        beta_1_power = jnp.power(keras_cast(beta_1, g.dtype), (step + 1).astype(g.dtype))
        m = m + (g - m) * (1 - beta_1)
        u = tf_maximum(beta_2 * u, jnp.abs(g))
        return -((lr * m) / ((1 - beta_1_power) * (u + epsilon))), (m, u)

    return _per_array(_zeros(2), update_one)


def nadam_advance(step, u_product, beta_1, beta_2, epsilon):
    """Nadam's product of momentum schedules, advanced once per step before the updates, as
    Keras keeps it in one Variable shared by all the optimizer's Variables."""
    t = (step + 1).astype(u_product.dtype)
    return u_product * beta_1 * (1.0 - 0.5 * jnp.power(jnp.asarray(0.96, u_product.dtype), t))


def nadam(lr, step, beta_1, beta_2, epsilon):
    """Keras' Nadam (Dozat's schedule ``u_t = beta_1 (1 - 0.5 * 0.96^t)``), with epsilon
    outside the square root as in Adam."""

    def update_one(g, state):
        iterations, u_product = step
        m, v = state
        dtype = g.dtype
        b1, b2, decay = (keras_cast(x, dtype) for x in (beta_1, beta_2, 0.96))
        local_step, next_step = (iterations + 1).astype(dtype), (iterations + 2).astype(dtype)
        u_t = b1 * (1.0 - 0.5 * jnp.power(decay, local_step))
        u_t_1 = b1 * (1.0 - 0.5 * jnp.power(decay, next_step))
        u_product_t = u_product.astype(dtype)
        u_product_t_1 = u_product_t * u_t_1
        m = m + (g - m) * (1 - b1)
        v = v + (g * g - v) * (1 - b2)
        m_hat = (u_t_1 * m) / (1 - u_product_t_1) + ((1 - u_t) * g) / (1 - u_product_t)
        v_hat = v / (1 - jnp.power(b2, local_step))
        return -((m_hat * lr) / (_sqrt(v_hat) + epsilon)), (m, v)

    return _per_array(_zeros(2), update_one)
