"""``tf.keras.optimizers.ScheduleFreeAdamW``, as Keras 3 steps it (Defazio et al., "The Road
Less Scheduled"): no learning-rate schedule needed, the weights being an interpolation of an
Adam-scaled SGD sequence ``z`` (Keras' ``momentum`` slot, starting at the weight itself) and its
running average ``x``. ``warmup_steps`` ramps the rate up linearly.

Each step recovers ``x`` from the weight and the sequence's value before the step,
``x = (y - (1 - beta_1) * z_old) / beta_1``, as the algorithm does and as Keras does on its JAX
and PyTorch backends. Keras on TensorFlow reads ``z`` through a reference that its own update has
already changed (with Keras Variables, as ``model.fit`` makes them, eagerly and in a
``tf.function`` alike), so from the second step on its weights differ from the algorithm's;
gradkit's follow the algorithm, and so differ from Keras on TensorFlow there.
"""

from __future__ import annotations

import jax.numpy as jnp

from .optimizer_rules import _sqrt, keras_cast
from .optimizer_rules_more import _per_array_with_param
from .optimizers import Optimizer, _check_options, named_base_options


def schedule_free_adamw(lr, step, beta_1, beta_2, epsilon, warmup_steps):
    """One step's rule; it gives each weight's new value (``y``), as Keras assigns it."""

    def update_one(g, state, y_old):
        z_old, v = state
        t = (step + 1).astype(g.dtype)
        b1, b2, eps = (keras_cast(x, g.dtype) for x in (beta_1, beta_2, epsilon))
        rate = lr
        if warmup_steps > 0:
            rate = rate * jnp.minimum(t / keras_cast(warmup_steps, g.dtype), 1.0)
        bias_correction_2 = 1 - jnp.power(b2, t)
        v = v + (jnp.square(g) - v) * (1 - b2)
        z = z_old - (rate * g) / (_sqrt(v / bias_correction_2) + eps)
        weight = 1.0 / t
        x_old = (y_old - (1 - b1) * z_old) / b1
        x_new = (1 - weight) * x_old + weight * z
        return (1 - b1) * z + b1 * x_new, (z, v)

    return _per_array_with_param(lambda p: (jnp.array(p), jnp.zeros_like(p)), update_one)


schedule_free_adamw.assigns_value = True


class ScheduleFreeAdamW(Optimizer):
    """``tf.keras.optimizers.ScheduleFreeAdamW(learning_rate=0.0025, beta_1=0.9, beta_2=0.999,
    epsilon=1e-8, warmup_steps=0, weight_decay=None)``."""

    _config_keys = ("beta_1", "beta_2", "epsilon", "warmup_steps")

    def __init__(
        self,
        learning_rate=0.0025,
        beta_1=0.9,
        beta_2=0.999,
        epsilon=1e-8,
        warmup_steps=0,
        weight_decay=None,
        clipnorm=None,
        clipvalue=None,
        global_clipnorm=None,
        use_ema=False,
        ema_momentum=0.99,
        ema_overwrite_frequency=None,
        loss_scale_factor=None,
        gradient_accumulation_steps=None,
        name=None,
        **kwargs,
    ):
        options = _check_options("ScheduleFreeAdamW", {**named_base_options(locals()), **kwargs})
        self.beta_1, self.beta_2, self.epsilon, self.warmup_steps = beta_1, beta_2, epsilon, warmup_steps
        hyper = (float(beta_1), float(beta_2), float(epsilon), int(warmup_steps))
        super().__init__(learning_rate, schedule_free_adamw, hyper, options, name)
