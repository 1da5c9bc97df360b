"""Counting and checking integer data: ``tf.math.bincount``, ``confusion_matrix``, ``in_top_k``,
``invert_permutation``, ``is_non_decreasing``, ``is_strictly_increasing`` and ``zero_fraction``.

Their results are counts, indices or booleans, so no gradient flows through them (None, as in
TensorFlow), except ``confusion_matrix``'s float ``weights``, which TensorFlow differentiates.
Where the result's shape depends on the values (``bincount``'s length, ``confusion_matrix``
without ``num_classes``), the values must be known: inside ``tf.function`` pass the length
(``minlength`` and ``maxlength`` equal, ``num_classes``).

>>> import gradkit.tf as tf
>>> tf.math.bincount(tf.constant([1, 1, 2, 3, 2, 4, 4, 5])).numpy().tolist()
[0, 2, 2, 1, 2, 1]
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from gradkit import _errors
from gradkit._tape import record

from ._convert import call, convert, known_value, scalar_int
from ._kernel_dtypes import check_dtype

_INDEX = ("int32", "int64")


def _canonical(dtype):
    return jax.dtypes.canonicalize_dtype(np.dtype(dtype))


# -- bincount -----------------------------------------------------------------------------------


def _bincount(arr, weights, size, dtype, binary, per_row):
    if not jnp.issubdtype(arr.dtype, jnp.integer):
        arr = arr.astype(jnp.int32)  # TensorFlow casts, truncating toward zero
    values = jnp.ones(arr.shape, dtype) if weights is None or binary else weights
    kept = (arr >= 0) & (arr < size)
    ids = jnp.where(kept, arr, size)  # out of range (past maxlength): dropped by segment_sum

    def count(ids, values):
        return jax.ops.segment_sum(values.reshape(-1), ids.reshape(-1), size)

    out = jax.vmap(count)(ids, values) if per_row else count(ids, values)
    return (out > 0).astype(dtype) if binary else out


# TensorFlow defines no gradient for DenseBincount (it raises LookupError for float weights):
# the tape cuts the path, so a gradient through bincount is None.
record.cut_by_design(_bincount, "tf.math.bincount (it has no gradient in TensorFlow)")


def bincount(
    arr, weights=None, minlength=None, maxlength=None, dtype=np.int32, name=None, axis=None, binary_output=False
):
    """``tf.math.bincount``: how often each value ``0, 1, ...`` occurs in ``arr`` (or the sum of
    its ``weights``).

    The length is ``max(arr) + 1``, at least ``minlength``, at most ``maxlength`` (values at or
    past it are skipped). ``axis=-1`` counts each row of a matrix on its own; ``axis=None`` or
    ``0`` counts all entries. The result has ``weights``' dtype, else ``dtype`` (1 where a value
    occurs with ``binary_output``). A negative value raises, as in TensorFlow, where ``arr`` is
    known; inside ``tf.function`` it is skipped.
    """
    a = convert(arr)
    if np.dtype(a.dtype).name not in ("int32", "int64") and np.dtype(a.dtype).kind != "f":
        # (TensorFlow casts a float arr to int32 itself, and refuses the other dtypes.)
        raise _errors.InvalidArgumentTypeError(
            f"tf.math.bincount takes arr of dtype int32 or int64 (or a float one, cast to int32), as TensorFlow "
            f"does, but got {np.dtype(a.dtype).name}. Cast it first: tf.math.bincount(tf.cast(arr, tf.int32))."
        )
    w = None if weights is None else convert(weights)
    if w is not None and binary_output:
        raise _errors.GradkitValueError(
            "tf.math.bincount: binary_output and weights are mutually exclusive, as in TensorFlow; pass one."
        )
    axis = 0 if axis is None else scalar_int(axis, "tf.math.bincount's axis")
    if axis not in (0, -1):
        raise _errors.GradkitValueError(f"tf.math.bincount got axis={axis}; TensorFlow supports only 0 and -1.")
    per_row = axis == -1 and a.ndim == 2
    if axis == -1 and a.ndim > 2:
        raise _errors.GradkitValueError(
            f"tf.math.bincount with axis=-1 takes a vector or a matrix, as TensorFlow does, but got rank {a.ndim}."
        )
    if w is not None and w.size == 0:
        ones_dtype, w = w.dtype, None  # TensorFlow: an empty weights tensor weighs every entry 1
    else:
        ones_dtype = _canonical(dtype)
    if w is not None and tuple(w.shape) != tuple(a.shape):
        raise _errors.GradkitValueError(
            f"tf.math.bincount got weights of shape {tuple(w.shape)} for arr of shape {tuple(a.shape)}; "
            "TensorFlow requires the same shape (or an empty weights tensor)."
        )
    out_dtype = ones_dtype if w is None else w.dtype
    check_dtype(jnp.zeros((), out_dtype), ("int32", "int64", "float32", "float64"), "tf.math.bincount's result")
    value = known_value(a)
    if value is not None and value.size and (value.astype(np.int64) < 0).any():
        raise _errors.InvalidArgumentValueError(
            f"tf.math.bincount got the negative value {int(value.astype(np.int64).min())} in arr; TensorFlow "
            "requires non-negative values. Drop them first: tf.boolean_mask(arr, arr >= 0)."
        )
    size = _bincount_size(value, minlength, maxlength)
    return call(_bincount, a, w, size=size, dtype=np.dtype(out_dtype), binary=bool(binary_output), per_row=per_row)


def _length_arg(x, what):
    value = known_value(x)
    if value is None:
        raise _errors.GradkitValueError(
            f"tf.math.bincount needs {what} known when tracing: it sets the result's shape. Pass a Python int."
        )
    return scalar_int(value, f"tf.math.bincount's {what}")


def _bincount_size(value, minlength, maxlength):
    low = None if minlength is None else _length_arg(minlength, "minlength")
    high = None if maxlength is None else _length_arg(maxlength, "maxlength")
    if high is not None and high < 0:
        raise _errors.InvalidArgumentValueError(
            f"tf.math.bincount got maxlength={high}; TensorFlow requires a size that is not negative."
        )
    if value is None:
        if high is not None and low is not None and low >= high:
            return max(high, 0)
        raise _errors.GradkitValueError(
            "tf.math.bincount inside tf.function needs the result's length known when tracing; it is max(arr) + 1, "
            "so pass minlength and maxlength equal (the number of bins)."
        )
    size = int(value.astype(np.int64).max()) + 1 if value.size else 0
    if low is not None:
        size = max(size, low)
    if high is not None:
        size = min(size, high)
    return max(size, 0)


# -- confusion_matrix ---------------------------------------------------------------------------


def _confusion_matrix(labels, predictions, weights, num_classes, dtype):
    # TensorFlow's: scatter_nd of the pairs stack([labels, predictions], axis=1), whose last
    # axis is the index (for vectors, the pair (label, prediction) of each example).
    index = jnp.stack([labels, predictions], axis=1)
    counting = jnp.int32 if dtype == np.bool_ else dtype  # bool entries: whether any example is there
    values = jnp.ones(predictions.shape, counting) if weights is None else weights.astype(counting)
    out = jnp.zeros((num_classes, num_classes), counting).at[index[..., 0], index[..., 1]].add(values)
    return out != 0 if dtype == np.bool_ else out


def _squeezed(labels, predictions):
    # TensorFlow's remove_squeezable_dimensions: a trailing 1 that makes the ranks differ by one goes.
    diff = predictions.ndim - labels.ndim
    if diff == 1 and predictions.shape[-1] == 1:
        predictions = call(jnp.squeeze, predictions, axis=-1)
    elif diff == -1 and labels.shape[-1] == 1:
        labels = call(jnp.squeeze, labels, axis=-1)
    return labels, predictions


def _as_index(x):
    return x.astype(jnp.int32) if not jnp.issubdtype(x.dtype, jnp.integer) else x


def confusion_matrix(labels, predictions, num_classes=None, weights=None, dtype=np.int32, name=None):
    """``tf.math.confusion_matrix``: entry ``[i, j]`` counts (or sums ``weights`` of) the examples
    labelled ``i`` and predicted ``j``.

    ``num_classes`` defaults to ``max(labels, predictions) + 1``, which needs known values; a
    negative or out-of-range class raises where the values are known, as in TensorFlow. Float
    ``weights`` with a float ``dtype`` are differentiable, as in TensorFlow.
    """
    labels, predictions = _squeezed(convert(labels), convert(predictions))
    if tuple(labels.shape) != tuple(predictions.shape):
        raise _errors.InvalidArgumentValueError(
            f"tf.math.confusion_matrix got labels of shape {tuple(labels.shape)} and predictions of shape "
            f"{tuple(predictions.shape)}; TensorFlow requires one shape."
        )
    pairs = (labels.shape[0], 2, *labels.shape[1:]) if labels.ndim else ()
    if not labels.ndim or pairs[-1] != 2 or pairs[:-1] != tuple(predictions.shape):
        raise _errors.GradkitValueError(
            f"tf.math.confusion_matrix takes vectors of labels and predictions, but got shape {tuple(labels.shape)}; "
            "TensorFlow scatters their pairs stacked on axis 1 with the last axis as the index, which fails for "
            "this shape. Flatten them first: tf.reshape(labels, [-1])."
        )
    w = None if weights is None else convert(weights)
    if w is not None and tuple(w.shape) != tuple(predictions.shape):
        raise _errors.GradkitValueError(
            f"tf.math.confusion_matrix got weights of shape {tuple(w.shape)} for predictions of shape "
            f"{tuple(predictions.shape)}; TensorFlow requires one shape."
        )
    values = {"labels": known_value(labels), "predictions": known_value(predictions)}
    values = {k: v.astype(np.int64) for k, v in values.items() if v is not None}
    for what, v in values.items():
        if v.size and v.min() < 0:
            raise _errors.InvalidArgumentValueError(
                f"tf.math.confusion_matrix: `{what}` contains the negative value {int(v.min())}; TensorFlow "
                "requires classes 0, 1, ..."
            )
    if num_classes is None:
        if len(values) < 2 or not labels.size:
            raise _errors.GradkitValueError(
                "tf.math.confusion_matrix needs num_classes where labels and predictions are empty or not known "
                "when tracing (inside tf.function): the number of classes sets the result's shape. Pass num_classes."
            )
        n = int(max(values["labels"].max(), values["predictions"].max())) + 1
    else:
        nv = known_value(num_classes)
        if nv is None:
            raise _errors.GradkitValueError(
                "tf.math.confusion_matrix needs num_classes known when tracing: it sets the result's shape."
            )
        n = int(nv)
        for what, v in values.items():
            if v.size and v.max() >= n:
                raise _errors.InvalidArgumentValueError(
                    f"tf.math.confusion_matrix: `{what}` holds the class {int(v.max())}, not below "
                    f"num_classes={n}, as TensorFlow requires."
                )
    a, b = call(_as_index, labels), call(_as_index, predictions)
    return call(_confusion_matrix, a, b, w, num_classes=n, dtype=np.dtype(_canonical(dtype)))


# -- in_top_k, invert_permutation, monotonicity, zero_fraction ------------------------------------


def _in_top_k(targets, predictions, k):
    # TensorFlow's InTopK: fewer than k classes score strictly higher than the target (so ties at
    # the boundary are in), the target is a class, and the row holds no inf or NaN.
    n = predictions.shape[1]
    is_class = (targets >= 0) & (targets < n)
    safe = jnp.clip(targets, 0, n - 1).astype(jnp.int32)
    target_score = jnp.take_along_axis(predictions, safe[:, None], axis=1)
    higher = jnp.sum(predictions > target_score, axis=1)
    finite = jnp.all(jnp.isfinite(predictions), axis=1)
    return is_class & finite & (higher < k.astype(higher.dtype))


class _PredictionsDtypeError(_errors.InvalidArgumentTypeError, ValueError):
    """Predictions of a dtype but float32: TensorFlow's eager InTopKV2 raises InvalidArgumentError
    for tensor inputs, TypeError where it traces, and ValueError where it converts a tensor of
    another dtype (the targets a list), so this is all three."""


def in_top_k(targets, predictions, k, name=None):
    """``tf.math.in_top_k(targets, predictions, k)`` (TensorFlow 2's argument order): whether each
    row's target class is among its ``k`` highest float32 ``predictions``."""
    t, p, k = convert(targets), convert(predictions), convert(k)
    if np.dtype(p.dtype) != np.float32:
        raise _PredictionsDtypeError(
            f"tf.math.in_top_k takes float32 predictions, as TensorFlow does, but got {np.dtype(p.dtype).name}. "
            "Cast them: tf.cast(predictions, tf.float32)."
        )
    check_dtype(t, _INDEX, "tf.math.in_top_k's targets")
    check_dtype(k, _INDEX, "tf.math.in_top_k's k")
    if p.ndim != 2 or t.ndim != 1 or t.shape[0] != p.shape[0] or k.ndim:
        raise _errors.GradkitValueError(
            f"tf.math.in_top_k takes targets of shape [batch], predictions of shape [batch, classes] and a 0-d k, "
            f"as TensorFlow does, but got shapes {tuple(t.shape)}, {tuple(p.shape)} and {tuple(k.shape)}."
        )
    return call(_in_top_k, t, p, k)


def _invert_permutation(x):
    return jnp.argsort(x).astype(x.dtype)


def invert_permutation(x, name=None):
    """``tf.math.invert_permutation``: ``y`` with ``y[x[i]] = i`` for a permutation ``x`` of ``0..n-1``."""
    x = convert(x)
    check_dtype(x, _INDEX, "tf.math.invert_permutation")
    if x.ndim != 1:
        raise _errors.GradkitValueError(
            f"tf.math.invert_permutation takes a vector, as TensorFlow does, but got shape {tuple(x.shape)}."
        )
    value = known_value(x)
    if value is not None and not np.array_equal(np.sort(value), np.arange(value.size)):
        raise _errors.GradkitValueError(
            f"tf.math.invert_permutation got {value.tolist()!r:.80}, which is not a permutation of 0..{value.size - 1}; "
            "TensorFlow refuses it."
        )
    return call(_invert_permutation, x)


def _monotone(x, strict):
    x = x.reshape(-1)
    if x.size < 2:
        return jnp.asarray(True)
    after, before = x[1:], x[:-1]
    return jnp.all(after > before if strict else after >= before)


def _monotonicity(x, strict, tf_name):
    x = convert(x)
    if x.dtype == jnp.bool_ or jnp.issubdtype(x.dtype, jnp.complexfloating):
        raise _errors.GradkitTypeError(
            f"tf.math.{tf_name} takes a real numeric tensor, as TensorFlow does, but got dtype "
            f"{np.dtype(x.dtype).name}. Cast it: tf.cast(x, tf.int32)."
        )
    return call(_monotone, x, strict=strict)


def is_non_decreasing(x, name=None):
    """``tf.math.is_non_decreasing``: whether each entry of ``x`` (in row-major order) is at least
    the one before (True for fewer than two entries)."""
    return _monotonicity(x, False, "is_non_decreasing")


def is_strictly_increasing(x, name=None):
    """``tf.math.is_strictly_increasing``: whether each entry of ``x`` (in row-major order) is
    greater than the one before (True for fewer than two entries)."""
    return _monotonicity(x, True, "is_strictly_increasing")


def _zero_fraction(x):
    return (jnp.sum(x == 0) / x.size).astype(jnp.float32) if x.size else jnp.asarray(np.nan, jnp.float32)


# TensorFlow counts with count_nonzero, which has no gradient: the tape cuts the path (None).
record.cut_by_design(_zero_fraction, "tf.math.zero_fraction (it has no gradient in TensorFlow)")


def zero_fraction(value, name=None):
    """``tf.math.zero_fraction``: the fraction of entries that are zero, as float32 (NaN for none)."""
    return call(_zero_fraction, convert(value))
