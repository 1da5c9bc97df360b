"""Integer indices outside their axis are refused, as NumPy and TensorFlow refuse them.

jax clamps an out-of-range index when reading (``x[5]`` of a size-3 axis is ``x[2]``) and drops
the write when updating (``x.at[5].set(p)`` changes nothing), silently. gradkit checks every
index whose value is known (a Python or NumPy integer, a concrete array) before reading or
writing a Variable's slice; an index traced by a jax transform cannot be checked and keeps
jax's behaviour.
"""

from __future__ import annotations

import jax
import numpy as np

from .. import _errors


def concrete_index(item):
    """An index item's value as a NumPy array when it is a concrete integer or boolean index (a
    number, a NumPy or concrete JAX array), else None."""
    if isinstance(item, (int, np.integer, np.bool_, np.ndarray)):
        value = np.asarray(item)
    elif isinstance(item, jax.Array) and not isinstance(item, jax.core.Tracer):
        value = np.asarray(item)
    else:
        return None
    return value if value.dtype.kind in "iub" else None


def check_indices(index, shape, concrete=concrete_index) -> None:
    """Refuse an integer index outside its axis of ``shape``; ``concrete(item)`` gives an index
    item's value where it is known (None where it is not)."""
    items = index if type(index) is tuple else (index,)
    ellipsis = next((i for i, item in enumerate(items) if item is Ellipsis), None)
    if ellipsis is None:
        _check_run(items, shape, 0, concrete)
        return
    head, tail = items[:ellipsis], items[ellipsis + 1 :]
    _check_run(head, shape, 0, concrete)
    if all(item is None or isinstance(item, (int, np.integer, slice)) for item in tail):
        _check_run(tail, shape, len(shape) - sum(item is not None for item in tail), concrete)


def _check_run(items, shape, axis: int, concrete) -> None:
    for item in items:
        if item is None:
            continue
        shown = items[0] if len(items) == 1 else items
        if isinstance(item, (float, complex, str, bytes)):
            raise _errors.GradkitTypeError(
                f"[gradkit] a tensor of shape {tuple(shape)} cannot be indexed by {shown!r:.80}: {item!r} is a "
                f"{type(item).__name__}, and indices are integers, slices, None, Ellipsis, or integer or boolean "
                "arrays, as in NumPy. Pass int(i) for a whole-number index."
            )
        if axis >= len(shape):
            raise _errors.GradkitIndexError(
                f"[gradkit] a tensor of shape {tuple(shape)} cannot be indexed by {shown!r:.80}: too many indices "
                f"for its {len(shape)} axes. Give at most one index per axis (None adds an axis)."
            )
        if isinstance(item, slice):
            axis += 1
            continue
        value = None if isinstance(item, (bool, np.bool_)) else concrete(item)
        if value is None or value.dtype.kind == "b":
            return  # a boolean or a traced index: the axes after it are not counted here
        if axis < len(shape) and value.size and (value.min() < -shape[axis] or value.max() >= shape[axis]):
            bad = value[(value < -shape[axis]) | (value >= shape[axis])].flat[0]
            raise _errors.GradkitIndexError(
                f"[gradkit] index {bad} is out of bounds for axis {axis} with size {shape[axis]}."
            )
        axis += 1
