"""Keras 3's dropout inside ``SimpleRNN``, ``GRU`` and ``LSTM``: ``dropout`` on the inputs,
``recurrent_dropout`` on the state each step reads.

As in Keras, a layer call draws its masks once (a ``(batch, features)`` mask for the inputs,
a ``(batch, units)`` mask for the state) and uses them at every step of the sequence: the
same units are dropped all along a sequence, which is what makes recurrent dropout work
(Gal and Ghahramani). A GRU or LSTM with ``recurrent_dropout`` (or built with
``implementation=1``) draws one mask per gate, as Keras' "implementation 1" cells do, so
each gate sees its own dropped units; otherwise one mask serves every gate. The masks are
``tf.nn.dropout`` of ones (0 or ``1 / (1 - rate)``), drawn from ``tf.random``'s generator:
new at each call, also at each call of a ``tf.function``, and not TensorFlow's draws.

Keras' quirks are kept: a rate is clamped into [0, 1], and a GRU or LSTM applies its
dropout only for rates strictly between 0 and 1 (a rate of 1 drops nothing), while a
SimpleRNN with a rate of 1 drops every unit (Keras' ``dropout`` of a rate of 1 is zeros).
"""

from __future__ import annotations

import numbers

import jax.numpy as jnp

from gradkit import _errors

from .. import _array, _dropout
from . import keras_random


def clamped_rate(value, arg: str, what: str) -> float:
    """Keras' ``min(1.0, max(0.0, rate))``, after checking that a number came in."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise _errors.GradkitTypeError(
            f"{what} got {arg}={value!r}; it takes a float in [0, 1], the fraction of units dropped, as Keras does."
        )
    return min(1.0, max(0.0, float(value)))


def applies(layer, rate: float, training) -> bool:
    """Whether a training call drops units at ``rate`` (Keras' conditions, per layer kind)."""
    if not training or rate == 0.0:
        return False
    return rate < 1.0 or layer.kind == "simple_rnn"  # Keras' GRU and LSTM: only for 0 < rate < 1


def draw_masks(rate: float, count: int, shape: tuple, seed):
    """``count`` independent masks of ``shape`` stacked on a new first axis: 0 where a unit is
    dropped, ``1 / (1 - rate)`` where it is kept (Keras: ``dropout(ones)``)."""
    if rate >= 1.0:
        return _array.zeros((count, *shape), "float32")
    ones = _array.ones(shape, "float32")
    if isinstance(seed, keras_random.SeedGenerator):  # a seeded layer's own generator
        return _array.stack([keras_random.dropout(ones, rate, seed=seed) for _ in range(count)])
    return _array.stack([_dropout.dropout(ones, rate, seed=seed) for _ in range(count)])


def masked(x, masks, gate: int):
    """``x`` with the mask of ``gate`` applied (one mask: the same for every gate); None: ``x``."""
    if masks is None:
        return x
    mask = masks[gate if masks.shape[0] > 1 else 0]
    return x * mask.reshape((1,) * (x.ndim - mask.ndim) + mask.shape)  # the inputs have a time axis first


def project(x, weights, masks, gates: int):
    """``x @ weights`` whose column blocks (one per gate) read ``x`` masked by that gate's mask.

    One mask (or none) is one product; a mask per gate is one product per gate, concatenated
    in the gates' order, which is what Keras' implementation-1 cells compute.
    """
    if masks is None or masks.shape[0] == 1:
        return masked(x, masks, 0) @ weights
    width = weights.shape[-1] // gates
    return jnp.concatenate(
        [masked(x, masks, g) @ weights[:, g * width : (g + 1) * width] for g in range(gates)], axis=-1
    )
