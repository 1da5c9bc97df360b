"""Applying optax updates to a State or to live Variables."""

from __future__ import annotations

import jax.numpy as jnp
import optax

from .. import _errors
from .state import State, check_live_assignments, flatten_variables
from .variable import _check_kind, _numeric_shape_dtype, _python_int, coerce_to


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
        updates = _updates_for_state(params, updates)
        for v, p, u in zip(params.variables, params.values(), updates.values()):
            # Compared with the State's own value, which may be batched (per-example States).
            _check_update_shape(v, u, tuple(jnp.shape(p)), "params holds a value of shape")
            _checked_update(v, u)  # a float update of an int Variable would be truncated: refused
        return optax.apply_updates(params, updates)
    variables, treedef = flatten_variables(params, "apply_updates")
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
        _check_update_shape(v, u, v.shape, "the Variable has shape")
    # As optax adds: p + u in their common dtype, cast once to the parameter's (casting u first
    # would round a float32 update of a bfloat16 parameter twice). An update of another kind
    # (a float into an int Variable, a complex into a float one) is refused, as an assignment of
    # it is, where the cast would silently truncate it.
    new_values = [(v, v.value + _checked_update(v, u)) for v, u in zip(variables, update_leaves)]
    # Check every new value before assigning any, so a bad update changes nothing.
    checked = [(v, coerce_to(x, v.shape, v.dtype, v._label())) for v, x in new_values]
    check_live_assignments(checked)
    for v, x in checked:
        v.assign(x)
    return params


def _updates_for_state(params: State, updates):
    """``updates`` as a State with the structure of ``params``, or a clear error.

    A State's structure is its Variables in order, so a State of updates built by hand
    (``gk.State({b: gb, a: ga})``) would fail optax's tree_map with jax's structure error
    though it names every Variable: it is reordered to match.
    """
    if not isinstance(updates, State):
        raise _errors.GradkitValueError(
            f"apply_updates: params is a gk.State, so updates must be one too (what optimizer.update returns "
            f"for a State of gradients), but got {type(updates).__name__}. Build the gradients as a State, "
            f"e.g. gk.State(dict(zip(variables, grads))), before optimizer.update."
        )
    if len(updates) == len(params) and all(a is b for a, b in zip(updates.variables, params.variables)):
        return updates
    missing = [v._label() for v in params.variables if v not in updates]
    extra = [v._label() for v in updates.variables if v not in params]
    if missing or extra:
        raise _errors.GradkitValueError(
            "apply_updates: updates must hold exactly the Variables of params, but "
            + "; ".join(
                part
                for part in (
                    f"it lacks {', '.join(missing)}" if missing else "",
                    f"it also holds {', '.join(extra)}" if extra else "",
                )
                if part
            )
            + ". Pass the updates optimizer.update returned for a State of gradients of these params."
        )
    return State._make(params._keys, tuple(updates[v] for v in params.variables), params._index)


def _check_update_shape(v, update, want: tuple, what: str) -> None:
    """An update must have its parameter's shape: ``p + u`` would broadcast (the result then
    has another shape than the Variable's, found only at a later commit) or fail with JAX's
    own message."""
    got = tuple(jnp.shape(update))
    if got != tuple(want):
        raise _errors.GradkitValueError(
            f"apply_updates: the update for Variable {v._label()} has shape {got}, but {what} {tuple(want)}. "
            "Pass the updates optimizer.update returned for these params."
        )


def _checked_update(v, update):
    """``update`` as the operand of ``v + update``: its dtype must cast to ``v``'s as an assigned
    value's may. A Python scalar (optax.apply_updates takes one) stays weakly typed, so it adds
    in ``v``'s dtype."""
    label = v._label()
    update = _python_int(update, v.dtype, label, "add")
    _, got = _numeric_shape_dtype(update, label, v.shape, v.dtype)
    _check_kind(got, v.dtype, label)
    return jnp.asarray(update) if isinstance(update, (list, tuple)) else update
