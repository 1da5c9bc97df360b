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


def _row_scatter(method: str, use_locking: bool):
    """``tf.compat.v1.<method>(ref, indices, updates)``: ``ref.<method>(tf.IndexedSlices(updates, indices))``."""

    def op(ref, indices, updates, use_locking=use_locking, name=None):
        return getattr(_variable(ref, method), method)(IndexedSlices(updates, indices))

    op.__name__ = op.__qualname__ = method
    op.__doc__ = f"``tf.compat.v1.{method}``: ``ref.{method}(tf.IndexedSlices(updates, indices))``, the new value."
    return op


def _nd_scatter(method: str, use_locking: bool):
    """``tf.compat.v1.<method>(ref, indices, updates)``: ``ref.<method>(indices, updates)``."""

    def op(ref, indices, updates, use_locking=use_locking, name=None):
        return getattr(_variable(ref, method), method)(indices, updates)

    op.__name__ = op.__qualname__ = method
    op.__doc__ = f"``tf.compat.v1.{method}``: ``ref.{method}(indices, updates)``, the new value."
    return op


scatter_update = _row_scatter("scatter_update", True)
scatter_add = _row_scatter("scatter_add", False)
scatter_sub = _row_scatter("scatter_sub", False)
scatter_mul = _row_scatter("scatter_mul", False)
scatter_div = _row_scatter("scatter_div", False)
scatter_max = _row_scatter("scatter_max", False)
scatter_min = _row_scatter("scatter_min", False)
batch_scatter_update = _row_scatter("batch_scatter_update", True)
scatter_nd_update = _nd_scatter("scatter_nd_update", True)
scatter_nd_add = _nd_scatter("scatter_nd_add", False)
scatter_nd_sub = _nd_scatter("scatter_nd_sub", False)
