"""``tf.strided_slice``: TensorFlow's slicing op, with its five bit masks.

Each position ``i`` of ``begin`` / ``end`` / ``strides`` becomes one entry of a Python index:
``...`` where ``ellipsis_mask`` has bit ``i``, a new axis where ``new_axis_mask`` has it, the
single entry ``begin[i]`` (the axis removed) where ``shrink_axis_mask`` has it, otherwise the
slice ``begin[i]:end[i]:strides[i]`` (``begin`` / ``end`` left open where ``begin_mask`` /
``end_mask`` has the bit). That is the index ``x[...]`` turns into these masks in TensorFlow,
so the result and its gradient (zero outside the slice) are the indexing's.

>>> import gradkit.tf as tf
>>> x = tf.reshape(tf.range(12.0), [3, 4])
>>> tf.strided_slice(x, [0, 3], [3, 0], [2, -1], shrink_axis_mask=0).numpy().tolist()
[[3.0, 2.0, 1.0], [11.0, 10.0, 9.0]]
"""

from __future__ import annotations

import jax
import numpy as np

from gradkit import _errors
from gradkit._core import dynamic_index

from ._convert import call, convert, static_ints


def _bit(mask, i):
    return bool((mask >> i) & 1)


def _spec(begin, end, strides, begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask):
    """The index as a hashable tuple: ("...",), ("new",), ("at", k) or ("slice", b, e, s)."""
    spec = []
    for i, (b, e, s) in enumerate(zip(begin, end, strides)):
        if _bit(ellipsis_mask, i):
            spec.append(("...",))
        elif _bit(new_axis_mask, i):
            spec.append(("new",))
        elif _bit(shrink_axis_mask, i):
            spec.append(("at", b))
        else:
            spec.append(("slice", None if _bit(begin_mask, i) else b, None if _bit(end_mask, i) else e, s))
    return tuple(spec)


def _index(spec):
    parts = {"...": lambda: Ellipsis, "new": lambda: None}
    return tuple(parts[p[0]]() if p[0] in parts else p[1] if p[0] == "at" else slice(p[1], p[2], p[3]) for p in spec)


def _strided_slice(x, spec):
    return x[_index(spec)]


def strided_slice(
    input_,
    begin,
    end,
    strides=None,
    begin_mask=0,
    end_mask=0,
    ellipsis_mask=0,
    new_axis_mask=0,
    shrink_axis_mask=0,
    var=None,
    name=None,
):
    """``tf.strided_slice(input_, begin, end, strides=None, begin_mask=0, end_mask=0, ...)``."""
    what = "tf.strided_slice"
    x = convert(input_)
    masks = (int(begin_mask), int(end_mask), int(ellipsis_mask), int(new_axis_mask), int(shrink_axis_mask))
    try:
        begin, end = static_ints(begin), static_ints(end)
    except jax.errors.JAXTypeError:
        # Traced inside tf.function: the result's shape is still known where each traced entry is
        # the single index of a shrink_axis_mask position (tf.strided_slice(x, [i], [i + 1], shrink_axis_mask=1)).
        return _traced_shrink_slice(x, begin, end, strides, masks, what)
    strides = (1,) * len(begin) if strides is None else static_ints(strides)
    if not len(begin) == len(end) == len(strides):
        raise _errors.GradkitValueError(
            f"{what}: begin {list(begin)}, end {list(end)} and strides {list(strides)} must have one length, "
            "as TensorFlow requires (one entry per index position)."
        )
    if 0 in strides:
        raise _errors.GradkitValueError(
            f"{what}: strides {list(strides)} holds a 0; TensorFlow requires nonzero strides."
        )
    if bin(int(ellipsis_mask)).count("1") > 1:
        raise _errors.GradkitValueError(
            f"{what}: ellipsis_mask={ellipsis_mask} sets more than one bit; TensorFlow allows one ellipsis."
        )
    _check_shrink_strides(strides, masks[4], what)
    spec = _spec(begin, end, strides, *masks)
    try:  # the index on a zero-strided stand-in: its errors, at no cost
        np.broadcast_to(np.empty((), np.int8), tuple(x.shape))[_index(spec)]
    except IndexError as e:
        raise _errors.GradkitIndexError(
            f"[gradkit] {what}: the index {_index(spec)} does not fit shape {tuple(x.shape)} ({e}); TensorFlow "
            "refuses it too (a shrink_axis_mask entry must be inside its axis, and the index must not have "
            "more positions than the tensor has axes)."
        ) from None
    runtime = dynamic_index.runtime_box(_index(spec), tuple(x.shape))
    if runtime is not None:  # eagerly the starts are inputs: a loop's moving window compiles once
        return call(dynamic_index.take, x, runtime[1], box=runtime[0])
    return call(_strided_slice, x, spec=spec)


def _check_shrink_strides(strides, shrink_axis_mask, what) -> None:
    bad = [i for i, s in enumerate(strides) if _bit(shrink_axis_mask, i) and s < 0]
    if bad:
        raise _errors.InvalidArgumentValueError(
            f"{what}: strides {list(strides)} has {strides[bad[0]]} at position {bad[0]}, which shrink_axis_mask "
            "takes a single index at: TensorFlow refuses a negative stride there ('only stride 1 allowed on "
            "non-range indexing'). Pass stride 1 at that position."
        )


def _entries(v) -> list:
    return list(v) if isinstance(v, (list, tuple)) else [convert(v)[k] for k in range(convert(v).shape[0])]


def _traced_shrink_slice(x, begin, end, strides, masks, what):
    """``x`` indexed as ``strided_slice`` does, where ``begin``/``end`` hold traced values at shrink
    positions (each a single index, so the result's shape is known) and static ints elsewhere."""
    begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask = masks
    begins, ends = _entries(begin), _entries(end)
    strides = (1,) * len(begins) if strides is None else static_ints(strides)
    if not len(begins) == len(ends) == len(strides) or 0 in strides:
        raise _errors.GradkitValueError(
            f"{what}: begin, end and strides {list(strides)} must have one length and nonzero strides, as "
            "TensorFlow requires (one entry per index position)."
        )
    _check_shrink_strides(strides, shrink_axis_mask, what)
    spec, traced = [], []
    for i, (b, e, step) in enumerate(zip(begins, ends, strides)):
        if _bit(ellipsis_mask, i):
            spec.append(("...",))
        elif _bit(new_axis_mask, i):
            spec.append(("new",))
        elif _bit(shrink_axis_mask, i):
            spec.append(("traced", len(traced)))
            traced.append(convert(b))
        else:
            # A range's bounds fix the result's shape: static_ints raises the error that says a
            # traced one needs its value.
            (b,) = (None,) if _bit(begin_mask, i) else static_ints([b])
            (e,) = (None,) if _bit(end_mask, i) else static_ints([e])
            spec.append(("slice", b, e, step))
    return call(_traced_strided_slice, x, *traced, spec=tuple(spec))


def _traced_strided_slice(x, *traced, spec):
    return x[_index(tuple(("at", traced[p[1]]) if p[0] == "traced" else p for p in spec))]
