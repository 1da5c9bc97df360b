"""``tf.compat.v1``'s state ops: ``assign``, ``assign_add``, ``assign_sub`` and the scatter updates
(``scatter_update``/``add``/``sub``/``mul``/``div``/``max``/``min``, ``batch_scatter_update``,
``scatter_nd_update``/``add``/``sub``), each the Variable's own
method, returning the Variable's new value as TensorFlow 1's ops return their ref."""

from __future__ import annotations

from gradkit import _errors

from ._scatter import IndexedSlices
from ._variables import Variable


def _variable(ref, what: str) -> Variable:
    if not isinstance(ref, Variable):
        raise _errors.GradkitTypeError(
            f"tf.compat.v1.{what} takes a tf.Variable as ref, but got {type(ref).__name__}: it assigns to a "
            f"Variable. Pass the Variable (tf.compat.v1.{what}(v, ...)), or use v.{what}(...)."
        )
    return ref


def assign(ref, value, validate_shape=None, use_locking=None, name=None):
    return _variable(ref, "assign").assign(value)


def assign_add(ref, value, use_locking=None, name=None):
    return _variable(ref, "assign_add").assign_add(value)


def assign_sub(ref, value, use_locking=None, name=None):
    return _variable(ref, "assign_sub").assign_sub(value)


def scatter_update(ref, indices, updates, use_locking=True, name=None):
    return _variable(ref, "scatter_update").scatter_update(IndexedSlices(updates, indices))


def scatter_add(ref, indices, updates, use_locking=False, name=None):
    return _variable(ref, "scatter_add").scatter_add(IndexedSlices(updates, indices))


def scatter_sub(ref, indices, updates, use_locking=False, name=None):
    return _variable(ref, "scatter_sub").scatter_sub(IndexedSlices(updates, indices))


def scatter_mul(ref, indices, updates, use_locking=False, name=None):
    return _variable(ref, "scatter_mul").scatter_mul(IndexedSlices(updates, indices))


def scatter_div(ref, indices, updates, use_locking=False, name=None):
    return _variable(ref, "scatter_div").scatter_div(IndexedSlices(updates, indices))


def scatter_max(ref, indices, updates, use_locking=False, name=None):
    return _variable(ref, "scatter_max").scatter_max(IndexedSlices(updates, indices))


def scatter_min(ref, indices, updates, use_locking=False, name=None):
    return _variable(ref, "scatter_min").scatter_min(IndexedSlices(updates, indices))


def batch_scatter_update(ref, indices, updates, use_locking=True, name=None):
    return _variable(ref, "batch_scatter_update").batch_scatter_update(IndexedSlices(updates, indices))


def scatter_nd_update(ref, indices, updates, use_locking=True, name=None):
    return _variable(ref, "scatter_nd_update").scatter_nd_update(indices, updates)


def scatter_nd_add(ref, indices, updates, use_locking=False, name=None):
    return _variable(ref, "scatter_nd_add").scatter_nd_add(indices, updates)


def scatter_nd_sub(ref, indices, updates, use_locking=False, name=None):
    return _variable(ref, "scatter_nd_sub").scatter_nd_sub(indices, updates)
