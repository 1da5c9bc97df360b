"""``tf.keras.optimizers.Muon``, as Keras 3 steps it.

A 2-D weight (not an embedding, not one ``exclude_layers`` names) steps by Muon: momentum
(Nesterov's by default), orthogonalized by ``ns_steps`` Newton-Schulz iterations, scaled by
``sqrt(max(rows, cols)) * rms_rate``. Every other weight steps by Adam with the learning rate
times ``adam_lr_ratio``. Weight decay is ``weight_decay`` for the first kind and
``adam_weight_decay`` for the second, decoupled as in AdamW (``v - v * decay * lr``, before the
update). Which kind a weight is shows in its state: Muon keeps a momentum, Adam a momentum and a
velocity (Keras' ``momentums`` and ``adam_velocities``).
"""

from __future__ import annotations

import re

import jax.numpy as jnp

from .optimizer_rules import _per_array, _sqrt, keras_cast
from .optimizers import Optimizer, _check_options, named_base_options


def _transpose_last(x):
    return jnp.swapaxes(x, -1, -2)


def _newton_schulz(x, steps, a, b, c):
    """Keras' ``zeropower_via_newtonschulz5``: ``x`` pushed towards the nearest orthogonal matrix."""
    tall = x.shape[-2] > x.shape[-1]
    if tall:
        x = _transpose_last(x)
    x = x / (jnp.linalg.norm(x, axis=(-2, -1), keepdims=True) + 1e-7)
    for _ in range(steps):
        temp_a = x @ _transpose_last(x)
        temp_b = b * temp_a + (c * temp_a) @ temp_a
        x = a * x + temp_b @ x
    return _transpose_last(x) if tall else x


def muon(lr, step, adam_beta_1, adam_beta_2, epsilon, a, b, c, adam_lr_ratio, momentum, ns_steps, nesterov, rms_rate):
    """The rule of one step: by the weight's state, Muon's update ``(m,)`` or Adam's ``(m, v)``."""

    def muon_update(g, m):
        m = m + (g + m * (momentum - 1))
        direction = g + momentum * m if nesterov else m
        update = lr * _newton_schulz(direction, ns_steps, a, b, c)
        if rms_rate is not None:
            update = update * jnp.sqrt(jnp.asarray(max(g.shape[0], g.shape[1]), g.dtype)) * rms_rate
        return -update, (m,)

    def adam_update(g, m, v):
        adam_lr = (lr * adam_lr_ratio).astype(g.dtype)
        t = (step + 1).astype(g.dtype)
        beta_1_power = jnp.power(keras_cast(adam_beta_1, g.dtype), t)
        beta_2_power = jnp.power(keras_cast(adam_beta_2, g.dtype), t)
        alpha = adam_lr * jnp.sqrt(1 - beta_2_power) / (1 - beta_1_power)
        m = m + (g - m) * (1 - adam_beta_1)
        v = v + (jnp.square(g) - v) * (1 - adam_beta_2)
        return -((m * alpha) / (_sqrt(v) + epsilon)), (m, v)

    def update_one(g, state):
        return muon_update(g, *state) if len(state) == 1 else adam_update(g, *state)

    return _per_array(lambda p: (jnp.zeros_like(p), jnp.zeros_like(p)), update_one)


class Muon(Optimizer):
    """``tf.keras.optimizers.Muon``: Muon for 2-D weights, Adam for the rest (see the module)."""

    _config_keys = (
        "adam_beta_1",
        "adam_beta_2",
        "epsilon",
        "exclude_layers",
        "muon_a",
        "muon_b",
        "muon_c",
        "adam_lr_ratio",
        "momentum",
        "ns_steps",
        "nesterov",
        "exclude_embeddings",
        "adam_weight_decay",
        "rms_rate",
    )

    def __init__(
        self,
        learning_rate=0.001,
        adam_beta_1=0.9,
        adam_beta_2=0.999,
        adam_weight_decay=0.004,
        epsilon=1e-7,
        weight_decay=0.004,
        clipnorm=None,
        clipvalue=None,
        global_clipnorm=None,
        use_ema=False,
        ema_momentum=0.99,
        ema_overwrite_frequency=None,
        loss_scale_factor=None,
        gradient_accumulation_steps=None,
        name=None,
        exclude_layers=None,
        exclude_embeddings=True,
        muon_a=3.4445,
        muon_b=-4.775,
        muon_c=2.0315,
        adam_lr_ratio=1,
        momentum=0.95,
        ns_steps=5,
        nesterov=True,
        rms_rate=0.2,
        **kwargs,
    ):
        options = _check_options("Muon", {**named_base_options(locals()), **kwargs})
        self.adam_beta_1, self.adam_beta_2, self.epsilon = adam_beta_1, adam_beta_2, epsilon
        self.muon_a, self.muon_b, self.muon_c = muon_a, muon_b, muon_c
        self.adam_lr_ratio, self.momentum, self.ns_steps = adam_lr_ratio, momentum, ns_steps
        self.nesterov, self.exclude_embeddings = nesterov, exclude_embeddings
        self.exclude_layers = list(exclude_layers or [])
        self.adam_weight_decay, self.rms_rate = adam_weight_decay, rms_rate
        hyper = (
            float(adam_beta_1),
            float(adam_beta_2),
            float(epsilon),
            float(muon_a),
            float(muon_b),
            float(muon_c),
            float(adam_lr_ratio),
            float(momentum),
            int(ns_steps),
            bool(nesterov),
            None if rms_rate is None else float(rms_rate),
        )
        super().__init__(learning_rate, muon, hyper, options, name)

    def _uses_adam(self, variable) -> bool:
        """Keras' ``_should_use_adamw``: not 2-D, an embedding, or in a layer ``exclude_layers`` names."""
        if len(variable.shape) != 2:
            return True
        path = str(getattr(variable, "path", None) or variable.name)
        if self.exclude_embeddings and "embedding" in path.lower():
            return True
        return any(re.search(keyword, path) for keyword in self.exclude_layers)

    def _initial_state(self, variable):
        zeros = jnp.zeros(variable.shape, variable.dtype)
        return [(zeros, zeros) if self._uses_adam(variable) else (zeros,)]

    def _decay_of(self, variable):
        if self._excluded_from_decay(variable):
            return None
        decay = self.adam_weight_decay if self._uses_adam(variable) else self.weight_decay
        return None if decay is None else float(decay)
