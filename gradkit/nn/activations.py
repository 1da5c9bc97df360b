"""Activations by name, computed through ``gradkit.numpy`` so tapes record them."""

from __future__ import annotations

import jax

from gradkit import _errors
from gradkit._tape.lift import lift_op as lift

relu = lift(jax.nn.relu)
elu = lift(jax.nn.elu)
sigmoid = lift(jax.nn.sigmoid)
tanh = lift(jax.numpy.tanh)
softplus = lift(jax.nn.softplus)
softmax = lift(lambda x: jax.nn.softmax(x, axis=-1))


def linear(x):
    return x


_BY_NAME = {
    "relu": relu,
    "elu": elu,
    "sigmoid": sigmoid,
    "tanh": tanh,
    "softmax": softmax,
    "softplus": softplus,
    "linear": linear,
}


def register(name: str, fn) -> None:
    """Add an activation by name (gradkit.tf adds Keras' others: 'gelu', 'swish', ...); a name
    the table has already keeps its function."""
    _BY_NAME.setdefault(name, fn)


def get(activation):
    """``None`` -> identity; a name -> that activation; a callable -> itself.

    >>> import jax.numpy as jnp
    >>> get("relu")(jnp.array([-1.0, 2.0])).tolist()
    [0.0, 2.0]
    """
    if activation is None:
        return linear
    if callable(activation):
        return activation
    try:
        return _BY_NAME[activation]
    except KeyError:
        raise _errors.GradkitValueError(
            f"unknown activation {activation!r}; use one of {sorted(_BY_NAME)} or a callable."
        ) from None
