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


def check_indices(index, shape, concrete=concrete_index, *, masks_only: bool = False) -> None:
    """Refuse an integer index outside its axis of ``shape``, and a boolean mask whose shape is not
    that of the axes it covers (jax would read a short mask as the indices of its True entries);
    ``concrete(item)`` gives an index item's value where it is known (None where it is not).
    ``masks_only`` checks the masks alone (an update may still ask for jax's out-of-range modes)."""
    items = index if type(index) is tuple else (index,)
    ellipsis = next((i for i, item in enumerate(items) if item is Ellipsis), None)
    if ellipsis is None:
        _check_run(items, shape, 0, concrete, masks_only)
        return
    head, tail = items[:ellipsis], items[ellipsis + 1 :]
    _check_run(head, shape, 0, concrete, masks_only)
    covered = [_axes_covered(item, concrete) for item in tail]
    if None not in covered:
        _check_run(tail, shape, len(shape) - sum(covered), concrete, masks_only)


def _axes(first: int, count: int) -> str:
    return f"axis {first}" if count == 1 else f"axes {first} to {first + count - 1}"


def _axes_covered(item, concrete):
    """How many of the array's axes an index item takes (None where that is not known)."""
    if item is None or isinstance(item, (bool, np.bool_)):
        return 0
    if isinstance(item, (int, np.integer, slice)):
        return 1
    value = concrete(item)
    if value is None:
        return None
    return value.ndim if value.dtype.kind == "b" else 1


def _check_run(items, shape, axis: int, concrete, masks_only: bool) -> None:
    for item in items:
        if item is None or isinstance(item, (bool, np.bool_)):
            continue  # a new axis of size 1 (t[True] as t[None]), taking none of the array's axes
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
        value = concrete(item)
        if value is None:
            return  # a traced index: the axes after it are not counted here
        if value.dtype.kind == "b":
            if value.ndim == 0:
                continue
            covered = tuple(shape[axis : axis + value.ndim])
            if value.shape != covered:
                raise _errors.GradkitIndexError(
                    f"[gradkit] a boolean mask of shape {value.shape} cannot index {_axes(axis, value.ndim)} of a "
                    f"tensor of shape {tuple(shape)}: a mask's shape must be that of the axes it covers, here "
                    f"{covered}, as in NumPy. Build the mask from the tensor itself (t > 0), or "
                    "select with integer indices (tf.gather, t[np.array([0, 2])])."
                )
            axis += value.ndim
            continue
        if masks_only:
            axis += 1
            continue
        if axis < len(shape) and value.size and (value.min() < -shape[axis] or value.max() >= shape[axis]):
            bad = value[(value < -shape[axis]) | (value >= shape[axis])].flat[0]
            raise _errors.GradkitIndexError(
                f"[gradkit] index {bad} is out of bounds for axis {axis} with size {shape[axis]}."
            )
        axis += 1
