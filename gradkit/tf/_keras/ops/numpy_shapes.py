"""``keras.ops``' shape and indexing ops: ``reshape``, ``transpose``, ``concatenate``, ``stack``,
``split``, ``pad``, ``take``, ``where``, ``sort``, ...

Joining ops promote their inputs to one dtype as Keras does (``concatenate`` of int32 and float32
is float32); ``take`` counts negative indices from the end; ``where(condition)`` gives the indices
of the nonzero entries, one int32 tensor per axis.

>>> import gradkit.tf as tf
>>> ops = tf.keras.ops
>>> x = ops.reshape(ops.arange(6), (2, 3))
>>> ops.take(x, -1, axis=1).numpy().tolist(), ops.concatenate([x, ops.ones((2, 1))], axis=1).dtype.name
([2, 5], 'float32')
"""

from __future__ import annotations

import builtins

import jax.numpy as jnp
import numpy as np

from gradkit import _errors

from ... import _array, _indexing, _math, _nondiff, _ordering
from .dispatch import apply, axes, cast, keras_op, known, operand, promoted, tensor, value_of
from .dtype_rules import dtype_of, result_type
from .numpy_elementwise import broadcast

NAMES = (
    "reshape ravel transpose expand_dims squeeze concatenate stack hstack vstack split tile repeat flip roll "
    "moveaxis swapaxes broadcast_to pad take take_along_axis where nonzero sort argsort ndim size fliplr flipud rot90 "
    "diff append dstack hsplit vsplit dsplit array_split meshgrid select isin unravel_index"
)


def _axis(axis, ndim: int) -> int:
    axis = int(axis)
    if not -ndim <= axis < max(ndim, 1):  # the op (keras_op) reports it with its name and inputs
        raise IndexError(f"axis {axis} is out of range for a tensor of rank {ndim} (an axis in [{-ndim}, {ndim}))")
    return axis % max(ndim, 1)


@keras_op
def reshape(x, newshape):
    """``keras.ops.reshape(x, newshape)``: ``x``'s entries in the shape ``newshape`` (one -1 inferred)."""
    newshape = (newshape,) if isinstance(newshape, (int, np.integer)) else tuple(int(d) for d in newshape)
    return _array.reshape(tensor(x), newshape)


@keras_op
def ravel(x):
    """``keras.ops.ravel(x)``: ``x`` flattened."""
    return _array.reshape(tensor(x), [-1])


@keras_op
def transpose(x, axes=None):
    """``keras.ops.transpose(x, axes=None)``: the axes permuted (reversed when ``axes`` is None)."""
    return _array.transpose(tensor(x), None if axes is None else [int(a) for a in axes])


def _expand_dims(x, axis):
    return jnp.expand_dims(x, axis)


@keras_op
def expand_dims(x, axis):
    """``keras.ops.expand_dims(x, axis)``: new axes of size 1 at ``axis`` (an int or a tuple)."""
    return apply(_expand_dims, tensor(x), axis=axes(axis))


def _squeeze(x, axis):
    return jnp.squeeze(x, axis)


@keras_op
def squeeze(x, axis=None):
    """``keras.ops.squeeze(x, axis=None)``: axes of size 1 removed (all of them, or those in ``axis``,
    which must have size 1)."""
    x = tensor(x)
    chosen = axes(axis)
    for a in (chosen,) if isinstance(chosen, int) else chosen or ():
        if x.shape[a] != 1:
            raise _errors.GradkitValueError(
                f"tf.keras.ops.squeeze: cannot squeeze axis={a} of shape {tuple(x.shape)}, because the dimension is "
                "not 1 (Keras raises ValueError). Leave axis=None to remove every axis of size 1."
            )
    return apply(_squeeze, x, axis=chosen)


def _joined(xs):
    """``xs`` made tensors of one dtype (Keras' ``result_type`` of theirs, Python numbers weakly)."""
    xs = [operand(x) for x in xs]
    dtype = result_type(*{dtype_of(x) for x in xs})
    return [tensor(x, dtype) for x in xs]


@keras_op
def concatenate(xs, axis=0):
    """``keras.ops.concatenate(xs, axis=0)``: the tensors joined along ``axis``."""
    return _array.concat(_joined(xs), axis=int(axis))


@keras_op
def stack(x, axis=0):
    """``keras.ops.stack(x, axis=0)``: the tensors (or numbers) stacked along a new ``axis``."""
    return _array.stack(_joined(x), axis=int(axis))


@keras_op
def hstack(xs):
    """``keras.ops.hstack(xs)``: joined along axis 1 (axis 0 for 1-D tensors)."""
    xs = _joined(xs)
    return _array.concat(xs, axis=0 if xs[0].ndim == 1 else 1)


@keras_op
def vstack(xs):
    """``keras.ops.vstack(xs)``: joined along axis 0."""
    return _array.concat(_joined(xs), axis=0)


@keras_op
def split(x, indices_or_sections, axis=0):
    """``keras.ops.split(x, indices_or_sections, axis=0)``: a list of pieces: ``n`` equal ones for an
    int, else cut before each index in the list."""
    x = tensor(x)
    axis = _axis(axis, x.ndim)
    if isinstance(indices_or_sections, (int, np.integer)):
        return _array.split(x, int(indices_or_sections), axis=axis)
    cuts = [int(i) for i in value_of(indices_or_sections).reshape(-1)]
    sizes = np.diff([0, *cuts, x.shape[axis]]).tolist()
    return _array.split(x, sizes, axis=axis)


@keras_op
def tile(x, repeats):
    """``keras.ops.tile(x, repeats)``: ``x`` repeated ``repeats`` times along each axis (NumPy's rule
    for a ``repeats`` shorter or longer than ``x``'s rank)."""
    x = tensor(x)
    reps = [int(repeats)] if isinstance(repeats, (int, np.integer)) else [int(r) for r in value_of(repeats)]
    reps = [1] * (x.ndim - len(reps)) + reps
    if len(reps) > x.ndim:
        x = _array.reshape(x, [1] * (len(reps) - x.ndim) + list(x.shape))
    return _array.tile(x, reps)


@keras_op
def repeat(x, repeats, axis=None):
    """``keras.ops.repeat(x, repeats, axis=None)``: each entry repeated (of the flattened ``x`` when
    ``axis`` is None)."""
    return _array.repeat(tensor(x), repeats, axis=axis)


def _flip(x, axis):
    return jnp.flip(x, axis)


@keras_op
def flip(x, axis=None):
    """``keras.ops.flip(x, axis=None)``: the order of entries reversed along ``axis`` (every axis when None)."""
    return apply(_flip, tensor(x), axis=axes(axis))


@keras_op
def roll(x, shift, axis=None):
    """``keras.ops.roll(x, shift, axis=None)``: entries shifted along ``axis``, wrapping around (the
    flattened ``x`` when ``axis`` is None)."""
    x = tensor(x)
    if axis is None:
        return _array.reshape(_array.roll(_array.reshape(x, [-1]), shift, 0), list(x.shape))
    return _array.roll(x, shift, axis)


@keras_op
def moveaxis(x, source, destination):
    """``keras.ops.moveaxis(x, source, destination)``: axes moved to new positions, the others in order."""
    x = tensor(x)
    source = [_axis(a, x.ndim) for a in np.atleast_1d(source).tolist()]
    destination = [_axis(a, x.ndim) for a in np.atleast_1d(destination).tolist()]
    if len(source) != len(destination):
        raise _errors.GradkitValueError(
            f"tf.keras.ops.moveaxis got source={source} and destination={destination}: they must have the same "
            "number of axes (Keras raises ValueError)."
        )
    perm = [i for i in builtins.range(x.ndim) if i not in source]
    for dest, src in sorted(zip(destination, source)):
        perm.insert(dest, src)
    return _array.transpose(x, perm)


@keras_op
def swapaxes(x, axis1, axis2):
    """``keras.ops.swapaxes(x, axis1, axis2)``: two axes exchanged."""
    x = tensor(x)
    perm = list(builtins.range(x.ndim))
    a, b = _axis(axis1, x.ndim), _axis(axis2, x.ndim)
    perm[a], perm[b] = perm[b], perm[a]
    return _array.transpose(x, perm)


@keras_op
def broadcast_to(x, shape):
    """``keras.ops.broadcast_to(x, shape)``: ``x`` broadcast to ``shape``."""
    return _indexing.broadcast_to(tensor(x), [int(d) for d in shape])


def _pad_widths(pad_width, ndim: int):
    widths = np.asarray(value_of(pad_width), dtype=np.int64)
    if widths.ndim == 1 and widths.size == 1:
        widths = widths.reshape(1, 1)
    if widths.ndim == 1:
        widths = widths.reshape(1, -1)
    if widths.shape[-1] == 1:
        widths = np.concatenate([widths, widths], axis=-1)
    try:
        return np.broadcast_to(widths, (ndim, 2)).tolist()
    except ValueError as error:
        raise _errors.GradkitValueError(
            f"tf.keras.ops.pad got pad_width={np.asarray(value_of(pad_width)).tolist()} for a tensor of rank {ndim}: "
            "it takes one (before, after) pair per axis, or one pair (or int) for all of them."
        ) from error


@keras_op
def pad(x, pad_width, mode="constant", constant_values=None):
    """``keras.ops.pad(x, pad_width, mode="constant", constant_values=None)``: ``x`` padded by
    ``pad_width`` (``((before, after), ...)`` per axis, or one pair or int for every axis); modes
    "constant", "reflect" and "symmetric", as on Keras' TensorFlow backend."""
    x = tensor(x)
    if constant_values is not None and mode != "constant":
        raise _errors.GradkitValueError(
            f"tf.keras.ops.pad got constant_values with mode={mode!r}: they go with mode='constant' only, as Keras "
            "requires. Leave constant_values out, or pass mode='constant'."
        )
    if mode not in ("constant", "reflect", "symmetric"):
        raise _errors.GradkitValueError(
            f"tf.keras.ops.pad got mode={mode!r}; Keras' TensorFlow backend pads with 'constant', 'reflect' or "
            "'symmetric'. Pass one of them."
        )
    value = 0 if constant_values is None else constant_values
    if not isinstance(value, (bool, int, float)):
        value = tensor(value, x.dtype)
    elif np.dtype(x.dtype).kind in "biu" and isinstance(value, float) and float(value).is_integer():
        value = int(value)
    return _array.pad(x, _pad_widths(pad_width, x.ndim), mode=mode, constant_values=value)


@keras_op
def take(x, indices, axis=None):
    """``keras.ops.take(x, indices, axis=None)``: the entries (slices along ``axis``) at ``indices``;
    negative indices count from the end; ``axis=None`` indexes the flattened ``x``."""
    x = tensor(x)
    if axis is None:
        x, axis = _array.reshape(x, [-1]), 0
    axis = _axis(axis, x.ndim)
    indices = tensor(indices)
    if np.dtype(indices.dtype).kind not in "iu":
        indices = cast(indices, "int32")
    size = tensor(x.shape[axis], indices.dtype)
    indices = _array.where(_math.less(indices, 0), _math.add(indices, size), indices)
    return _array.gather(x, indices, axis=axis)


def _take_along(x, indices, axis):
    return jnp.take_along_axis(x, indices, axis=axis)


@keras_op
def take_along_axis(x, indices, axis=None):
    """``keras.ops.take_along_axis(x, indices, axis=None)``: ``x``'s entries at ``indices`` along
    ``axis`` (the other axes broadcast); negative indices count from the end."""
    x = tensor(x)
    indices = tensor(indices)
    if axis is None:
        if indices.ndim != 1:
            raise _errors.GradkitValueError(
                f"tf.keras.ops.take_along_axis with axis=None takes 1-D indices, but got shape "
                f"{tuple(indices.shape)} (Keras raises ValueError)."
            )
        x, axis = _array.reshape(x, [-1]), 0
    axis = _axis(axis, x.ndim)
    if np.dtype(indices.dtype).kind not in "iu":
        indices = cast(indices, "int32")
    size = tensor(x.shape[axis], indices.dtype)
    indices = _array.where(_math.less(indices, 0), _math.add(indices, size), indices)
    x_shape, i_shape = list(x.shape), list(indices.shape)
    x_shape[axis] = i_shape[axis] = 1
    common = list(np.broadcast_shapes(tuple(x_shape), tuple(i_shape)))
    x = broadcast_to(x, common[:axis] + [x.shape[axis]] + common[axis + 1 :])
    indices = broadcast_to(indices, common[:axis] + [indices.shape[axis]] + common[axis + 1 :])
    return apply(_take_along, x, indices, axis=axis)


@keras_op
def where(condition, x1=None, x2=None):
    """``keras.ops.where(condition, x1=None, x2=None)``: ``x1`` where ``condition``, else ``x2``
    (broadcast, in their promoted dtype); without ``x1``/``x2``, ``nonzero(condition)``."""
    if (x1 is None) != (x2 is None):
        raise _errors.GradkitValueError(
            "tf.keras.ops.where takes x1 and x2 both or neither (Keras raises ValueError): pass both to choose "
            "between them, or neither for the indices where condition holds."
        )
    if x1 is None:
        return nonzero(condition)
    (x1, x2), _ = promoted(x1, x2)
    return _array.where(*broadcast(cast(condition, "bool"), x1, x2))


@keras_op
def nonzero(x):
    """``keras.ops.nonzero(x)``: the indices of the nonzero entries, one int32 tensor per axis."""
    x = tensor(x)
    if known(x) is None:
        raise _errors.TracedValueNeededError(
            "tf.keras.ops.nonzero (and where(condition) without x1, x2) got a tensor traced inside tf.function: the "
            "number of nonzero entries sets the result's shape, which must be known when tracing in gradkit (JAX). "
            "Use where(condition, x1, x2), or a mask (ops.cast(condition, 'float32')), or call it eagerly."
        )
    found = _array.where(cast(x, "bool"))
    return tuple(cast(found[:, i], "int32") for i in builtins.range(x.ndim))


@keras_op
def sort(x, axis=-1):
    """``keras.ops.sort(x, axis=-1)``: sorted ascending along ``axis`` (of the flattened ``x`` when None)."""
    x = tensor(x)
    if axis is None:
        x, axis = _array.reshape(x, [-1]), 0
    if x.dtype == np.bool_:
        return cast(_ordering.sort(cast(x, "int8"), axis=int(axis)), "bool")
    return _ordering.sort(x, axis=int(axis))


@keras_op
def argsort(x, axis=-1):
    """``keras.ops.argsort(x, axis=-1)``: the int32 indices that sort ``x`` along ``axis``."""
    x = tensor(x)
    if x.dtype == np.bool_:
        x = cast(x, "uint8")
    if x.ndim == 0:
        return tensor([0], "int32")
    if axis is None:
        x, axis = _array.reshape(x, [-1]), 0
    return cast(_ordering.argsort(x, axis=int(axis)), "int32")


def ndim(x):
    """``keras.ops.ndim(x)``: the rank of ``x``, a Python int."""
    return len(x.shape) if hasattr(x, "shape") else tensor(x).ndim


@keras_op
def size(x):
    """``keras.ops.size(x)``: the number of entries of ``x``, as an int32 tensor."""
    return _array.size(tensor(x))


def _flipped(name, axis):
    def op(x):
        x = tensor(x)
        if x.ndim <= axis:
            raise _errors.GradkitValueError(
                f"tf.keras.ops.{name} takes x of rank {axis + 1} or more (it flips axis {axis}), but got shape "
                f"{tuple(x.shape)}."
            )
        return apply(_flip, x, axis=axis)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"``keras.ops.{name}(x)``: the order of entries reversed along axis {axis}."
    return keras_op(op)


fliplr = _flipped("fliplr", 1)
flipud = _flipped("flipud", 0)


def _rot90(x, k, axes):
    return jnp.rot90(x, k, axes)


@keras_op
def rot90(array, k=1, axes=(0, 1)):
    """``keras.ops.rot90(array, k=1, axes=(0, 1))``: rotated by 90 degrees ``k`` times, from the first
    of ``axes`` toward the second, as NumPy's ``rot90``. (Keras 3.15's TensorFlow backend scrambles
    the entries of a non-square plane for ``k = 2``; gradkit gives NumPy's rotation there.)"""
    x = tensor(array)
    if x.ndim < 2:
        raise _errors.GradkitValueError(
            f"tf.keras.ops.rot90 takes an array of rank 2 or more, but got shape {tuple(x.shape)} (Keras raises "
            "ValueError)."
        )
    chosen = tuple(int(a) % x.ndim for a in axes)
    if len(chosen) != 2 or chosen[0] == chosen[1]:
        raise _errors.GradkitValueError(
            f"tf.keras.ops.rot90 got axes={axes!r}: it takes two different axes, the plane of rotation (Keras "
            "raises ValueError)."
        )
    return apply(_rot90, x, k=int(k) % 4, axes=chosen)


def _diff(a, n, axis):
    return jnp.diff(a, n=n, axis=axis)  # booleans: not_equal, as Keras


@keras_op
def diff(a, n=1, axis=-1):
    """``keras.ops.diff(a, n=1, axis=-1)``: the ``n``-th difference along ``axis`` (booleans: whether
    neighbours differ)."""
    x = tensor(a)
    if n < 0 or x.ndim == 0:
        raise _errors.GradkitValueError(
            f"tf.keras.ops.diff takes n >= 0 and an input of rank 1 or more, but got n={n} and shape "
            f"{tuple(x.shape)} (Keras raises ValueError)."
        )
    if n == 0:
        return x
    return apply(_diff, x, n=int(n), axis=_axis(axis, x.ndim))


@keras_op
def append(x1, x2, axis=None):
    """``keras.ops.append(x1, x2, axis=None)``: ``x2`` joined after ``x1`` along ``axis`` (both flattened
    when None), in their promoted dtype."""
    (x1, x2), _ = promoted(tensor(x1), tensor(x2))
    if axis is None:
        return _array.concat([_array.reshape(x1, [-1]), _array.reshape(x2, [-1])], axis=0)
    return _array.concat([x1, x2], axis=int(axis))


@keras_op
def dstack(xs):
    """``keras.ops.dstack(xs)``: joined along axis 2 (1-D ``(N,)`` as ``(1, N, 1)``, 2-D as ``(M, N, 1)``)."""
    xs = _joined([tensor(x) for x in xs])
    shaped = []
    for x in xs:
        if x.ndim == 0:
            x = _array.reshape(x, [1, 1, 1])
        elif x.ndim == 1:
            x = _array.reshape(x, [1, x.shape[0], 1])
        elif x.ndim == 2:
            x = _array.expand_dims(x, 2)
        shaped.append(x)
    return _array.concat(shaped, axis=2)


@keras_op
def hsplit(x, indices_or_sections):
    """``keras.ops.hsplit(x, indices_or_sections)``: ``split`` along axis 1 (axis 0 for 1-D ``x``)."""
    x = tensor(x)
    return split(x, indices_or_sections, axis=0 if x.ndim == 1 else 1)


@keras_op
def vsplit(x, indices_or_sections):
    """``keras.ops.vsplit(x, indices_or_sections)``: ``split`` along axis 0."""
    return split(x, indices_or_sections, axis=0)


@keras_op
def dsplit(x, indices_or_sections):
    """``keras.ops.dsplit(x, indices_or_sections)``: ``split`` along axis 2."""
    return split(x, indices_or_sections, axis=2)


@keras_op
def array_split(x, indices_or_sections, axis=0):
    """``keras.ops.array_split(x, indices_or_sections, axis=0)``: ``indices_or_sections`` pieces along
    ``axis``, as equal as can be (the first ones one longer)."""
    if not isinstance(indices_or_sections, (int, np.integer)) or isinstance(indices_or_sections, bool):
        raise _errors.GradkitTypeError(
            f"tf.keras.ops.array_split takes indices_or_sections an int (the number of pieces), but got "
            f"{indices_or_sections!r} (Keras raises TypeError). For cut points use tf.keras.ops.split."
        )
    if indices_or_sections <= 0:
        raise _errors.GradkitValueError(
            f"tf.keras.ops.array_split takes a positive number of pieces, but got {indices_or_sections} (Keras "
            "raises ValueError)."
        )
    x = tensor(x)
    axis = _axis(axis, x.ndim)
    pieces = int(indices_or_sections)
    size, extra = divmod(x.shape[axis], pieces)
    return _array.split(x, [size + 1] * extra + [size] * (pieces - extra), axis=axis)


@keras_op
def meshgrid(*x, indexing="xy"):
    """``keras.ops.meshgrid(*x, indexing="xy")``: coordinate grids of 1-D tensors, as a list (``"xy"``:
    Cartesian, the first two axes swapped; ``"ij"``: matrix indexing)."""
    if indexing not in ("xy", "ij"):
        raise _errors.GradkitValueError(
            f"tf.keras.ops.meshgrid got indexing={indexing!r}; it takes 'xy' or 'ij', as Keras does."
        )
    xs = [_array.reshape(tensor(v), [-1]) for v in x]
    along = list(builtins.range(len(xs)))  # the axis each input varies along
    if indexing == "xy" and len(xs) > 1:
        along[0], along[1] = 1, 0
    sizes = [0] * len(xs)
    for axis, v in zip(along, xs):
        sizes[axis] = v.shape[0]
    grids = []
    for axis, v in zip(along, xs):
        shape = [1] * len(xs)
        shape[axis] = v.shape[0]
        grids.append(_indexing.broadcast_to(_array.reshape(v, shape), sizes))
    return grids


@keras_op
def select(condlist, choicelist, default=0):
    """``keras.ops.select(condlist, choicelist, default=0)``: each entry from the first choice whose
    condition holds there, else ``default``; the choices' promoted dtype."""
    if not isinstance(condlist, (list, tuple)) or not isinstance(choicelist, (list, tuple)):
        raise _errors.GradkitValueError(
            "tf.keras.ops.select takes condlist and choicelist as lists (Keras raises ValueError), but got "
            f"{type(condlist).__name__} and {type(choicelist).__name__}."
        )
    if not condlist or len(condlist) != len(choicelist):
        raise _errors.GradkitValueError(
            f"tf.keras.ops.select takes as many conditions as choices, at least one, but got {len(condlist)} and "
            f"{len(choicelist)}."
        )
    choices = [tensor(c) for c in choicelist]
    dtype = result_type(*(c.dtype for c in choices), dtype_of(operand(default)))
    out = tensor(default, dtype)
    conditions = [cast(c, "bool") for c in condlist]
    for condition, choice in zip(reversed(conditions), reversed(choices)):
        out = _array.where(*broadcast(condition, tensor(choice, dtype), out))
    return out


@keras_op
def isin(x1, x2, assume_unique=False, invert=False):
    """``keras.ops.isin(x1, x2, assume_unique=False, invert=False)``: whether each entry of ``x1`` is in
    ``x2`` (is not, with ``invert``), as a boolean tensor of ``x1``'s shape."""
    (x1, x2), _ = promoted(tensor(x1), tensor(x2))
    shape = list(x1.shape)
    pairs = _math.equal(_array.reshape(x1, [-1, 1]), _array.reshape(x2, [1, -1]))
    found = _math.reduce_any(pairs, axis=1)
    if invert:
        found = _math.logical_not(found)
    return _array.reshape(found, shape)


@keras_op
def unravel_index(indices, shape):
    """``keras.ops.unravel_index(indices, shape)``: the coordinates in an array of ``shape`` of each flat
    index, a tuple of tensors in ``indices``' dtype (NumPy's ``unravel_index``, C order). Keras 3.15's
    TensorFlow backend agrees for 1-D ``indices`` but takes the dimensions in the wrong order for
    others; gradkit gives NumPy's coordinates for every rank."""
    if any(d is None for d in shape):
        raise _errors.GradkitValueError(
            f"tf.keras.ops.unravel_index got shape={tuple(shape)}: every dimension must be known (Keras raises "
            "ValueError)."
        )
    indices = tensor(indices)
    coords = []
    for dim in reversed([int(d) for d in shape]):
        size = tensor(dim, indices.dtype)
        coords.append(_math.floormod(indices, size))
        indices = _nondiff.floordiv(indices, size)
    return tuple(reversed(coords))
