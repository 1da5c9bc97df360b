"""Applying optax updates to a State or to live Variables."""

from __future__ import annotations

import jax.numpy as jnp
import optax

from .. import _errors
from .state import State, flatten_variables
from .variable import coerce_to


def apply_updates(params, updates):
    """Add optax ``updates`` to ``params``.

    Args:
      params: a :class:`State` (a new State is returned, the old one unchanged), or a
        Variable / nested structure of Variables (each is assigned ``v + update``, through
        whatever transform or tape is active, and the structure is returned).
      updates: the output of an optax ``update``, with the structure of ``params``.

    >>> import gradkit as gk, optax, jax.numpy as jnp
    >>> w = gk.Variable(jnp.array([1.0, 2.0]))
    >>> opt = optax.sgd(0.1)
    >>> opt_state = opt.init(gk.State.of([w]))
    >>> grads = gk.grad(lambda: jnp.sum(w ** 2), wrt=[w])()
    >>> updates, opt_state = opt.update(gk.State({w: grads[0]}), opt_state)
    >>> gk.apply_updates(gk.State.of([w]), updates)[w]
    Array([0.8, 1.6], dtype=float32)
    """
    if isinstance(params, State):
        return optax.apply_updates(params, updates)
    variables, treedef = flatten_variables(params)
    if isinstance(updates, State):
        update_leaves = [updates[v] for v in variables]
    else:
        try:
            update_leaves = treedef.flatten_up_to(updates)
        except (ValueError, TypeError) as e:
            raise _errors.GradkitValueError(
                f"apply_updates: updates do not have the structure of params ({treedef}): {e}"
            ) from None
    for v, u in zip(variables, update_leaves):
        if tuple(jnp.shape(u)) != v.shape:
            # Checked here because p + u would broadcast or fail with JAX's own message.
            raise _errors.GradkitValueError(
                f"apply_updates: the update for Variable {v._label()} has shape {tuple(jnp.shape(u))}, but the "
                f"Variable has shape {v.shape}. Pass the updates optimizer.update returned for these params."
            )
    # A Python scalar is an update too (optax.apply_updates takes one): it becomes an array of
    # the parameter's dtype, as optax casts every update to it.
    new_values = [
        (v, v.value + (u.astype(v.dtype) if hasattr(u, "astype") else jnp.asarray(u, dtype=v.dtype)))
        for v, u in zip(variables, update_leaves)
    ]
    # Check every new value before assigning any, so a bad update changes nothing.
    checked = [(v, coerce_to(x, v.shape, v.dtype, v._label())) for v, x in new_values]
    for v, x in checked:
        v.assign(x)
    return params
