"""``keras.ops``' math family: segment reductions, ``top_k``, ``in_top_k``, ``logsumexp``, ``erf``,
``erfinv``, ``erfc``, ``rsqrt``, ``logdet``, ``cdist``, ``view_as_complex``, ``view_as_real``, on
``gradkit.tf.math``'s ops (TensorFlow's kernels and gradients). The Fourier transforms are in ``math_fft``.

``segment_sum``/``segment_max`` fix their number of segments from the ids when ``num_segments``
is None (as Keras' TensorFlow backend: the number of distinct ids for ``segment_sum``, the
largest id plus one for ``segment_max``), so the ids must then be known (not traced).

>>> import gradkit.tf as tf
>>> ops = tf.keras.ops
>>> ops.segment_sum(tf.constant([1.0, 2.0, 3.0]), tf.constant([0, 0, 1])).numpy().tolist()
[3.0, 3.0]
>>> values, indices = ops.top_k(tf.constant([1.0, 3.0, 2.0]), 2)
>>> values.numpy().tolist(), indices.numpy().tolist()
([3.0, 2.0], [1, 2])
"""

from __future__ import annotations

import numpy as np

from gradkit import _errors

from ... import _array, _integer_data, _linalg, _math, _ordering, _special
from ... import _segment as _tf_segment
from .dispatch import axes, cast, keras_op, known, promoted, tensor

NAMES = (
    "segment_sum segment_max segment_min segment_prod top_k in_top_k logsumexp erf erfinv rsqrt erfc logdet "
    "cdist view_as_complex view_as_real"
)


def _segment_args(name, data, segment_ids):
    data, ids = tensor(data), tensor(segment_ids)
    if ids.ndim > 1:
        raise _errors.GradkitValueError(
            f"tf.keras.ops.{name} takes 1-D segment_ids, but got shape {tuple(ids.shape)} (Keras raises "
            "ValueError). Flatten them with data.reshape((-1,) + data.shape[ids.ndim:]), or map over the batch."
        )
    if ids.shape[0] != data.shape[0]:
        raise _errors.GradkitValueError(
            f"tf.keras.ops.{name}: segment_ids of shape {tuple(ids.shape)} and data of shape {tuple(data.shape)} "
            "must have the same leading dimension (Keras raises ValueError)."
        )
    return data, ids


def _known_ids(name, ids, rule):
    value = known(ids)
    if value is None:
        raise _errors.GradkitValueError(
            f"tf.keras.ops.{name} got traced segment_ids and num_segments=None: the number of segments ({rule}) "
            "sets the result's shape, which must be known when tracing. Pass num_segments=..."
        )
    return value


def _segment_op(name, sorted_op, unsorted_op, count_rule, count):
    def op(data, segment_ids, num_segments=None, sorted=False):
        raw, (data, ids) = segment_ids, _segment_args(name, data, segment_ids)
        if sorted:
            if num_segments is not None:
                raise _errors.GradkitValueError(
                    f"tf.keras.ops.{name} got num_segments={num_segments!r} with sorted=True: Keras' TensorFlow "
                    "backend refuses it (ValueError). Leave num_segments out, or pass sorted=False."
                )
            value = known(raw)  # a constant of known integers stays known inside tf.function
            return sorted_op(data, ids if value is None else _array.constant(value))
        if num_segments is None:
            num_segments = count(_known_ids(name, raw, count_rule))
        return unsorted_op(data, ids, int(num_segments))

    op.__name__ = op.__qualname__ = name
    op.__doc__ = (
        f"``keras.ops.{name}(data, segment_ids, num_segments=None, sorted=False)``: the "
        f"{name.split('_')[1]} of ``data``'s rows per segment id (``num_segments`` None: {count_rule})."
    )
    return keras_op(op)


segment_sum = _segment_op(
    "segment_sum",
    _tf_segment.segment_sum,
    _tf_segment.unsorted_segment_sum,
    "the number of distinct ids",
    lambda ids: len(np.unique(ids)),
)
segment_max = _segment_op(
    "segment_max",
    _tf_segment.segment_max,
    _tf_segment.unsorted_segment_max,
    "the largest id plus one",
    lambda ids: int(ids.max()) + 1 if ids.size else 0,
)

segment_min = _segment_op(
    "segment_min",
    _tf_segment.segment_min,
    _tf_segment.unsorted_segment_min,
    "the largest id plus one",
    lambda ids: int(ids.max()) + 1 if ids.size else 0,
)
segment_prod = _segment_op(
    "segment_prod",
    _tf_segment.segment_prod,
    _tf_segment.unsorted_segment_prod,
    "the largest id plus one",
    lambda ids: int(ids.max()) + 1 if ids.size else 0,
)


@keras_op
def top_k(x, k, sorted=True):  # noqa: A002
    """``keras.ops.top_k(x, k, sorted=True)``: ``(values, indices)`` of the ``k`` largest entries along
    the last axis (indices int32)."""
    return tuple(_ordering.top_k(tensor(x), int(k), sorted=sorted))


@keras_op
def in_top_k(targets, predictions, k):
    """``keras.ops.in_top_k(targets, predictions, k)``: whether each row's target class is among the
    ``k`` highest of its ``predictions``."""
    return _integer_data.in_top_k(tensor(targets), tensor(predictions), k)


@keras_op
def logsumexp(x, axis=None, keepdims=False):
    """``keras.ops.logsumexp(x, axis=None, keepdims=False)``: ``log(sum(exp(x)))``, computed stably."""
    return _math.reduce_logsumexp(tensor(x), axis=axes(axis), keepdims=keepdims)


@keras_op
def erf(x):
    """``keras.ops.erf(x)``: the error function (float ``x``)."""
    return _math.erf(tensor(x))


@keras_op
def erfinv(x):
    """``keras.ops.erfinv(x)``: the inverse error function (float16 computed in float32)."""
    x = tensor(x)
    if np.dtype(x.dtype).name in ("float16", "bfloat16"):
        return cast(_special.erfinv(cast(x, "float32")), x.dtype)
    return _special.erfinv(x)


@keras_op
def rsqrt(x):
    """``keras.ops.rsqrt(x)``: ``1 / sqrt(x)`` (TensorFlow's gradient)."""
    return _math.rsqrt(tensor(x))


@keras_op
def erfc(x):
    """``keras.ops.erfc(x)``: the complementary error function ``1 - erf(x)``, accurate for large ``x``
    (float ``x``)."""
    return _special.erfc(tensor(x))


@keras_op
def logdet(x):
    """``keras.ops.logdet(x)``: ``log(det(x))`` of each Hermitian positive-definite matrix, from its
    Cholesky factor (NaN where it is not positive definite), as TensorFlow computes it."""
    x = tensor(x)
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise _errors.GradkitValueError(
            f"tf.keras.ops.logdet takes square matrices (shape (..., M, M)), but got shape {tuple(x.shape)}."
        )
    return _linalg.logdet(x)


@keras_op
def cdist(x, y):
    """``keras.ops.cdist(x, y)``: the Euclidean distance between each row of ``x`` (``[..., N, D]``) and
    each row of ``y`` (``[..., M, D]``), shape ``[..., N, M]`` (integers computed in floatx). Its gradient
    is NaN where two rows coincide, as TensorFlow's."""
    (x, y), _ = promoted(tensor(x), tensor(y), extra=(float,))
    if x.ndim < 2 or y.ndim < 2 or x.shape[-1] != y.shape[-1]:
        raise _errors.GradkitValueError(
            f"tf.keras.ops.cdist takes x of shape [..., N, D] and y of shape [..., M, D] (rank 2 or more, the same "
            f"last axis), but got shapes {tuple(x.shape)} and {tuple(y.shape)}. For single vectors, pass "
            "tf.keras.ops.expand_dims(v, 0)."
        )
    difference = _math.subtract(_array.expand_dims(x, -2), _array.expand_dims(y, -3))
    return _math.sqrt(_math.reduce_sum(_math.square(difference), axis=-1))


@keras_op
def view_as_complex(x):
    """``keras.ops.view_as_complex(x)``: a real tensor of shape ``[..., 2]`` (real and imaginary parts) as
    a complex64 tensor of shape ``[...]``."""
    x = tensor(x)
    if x.ndim < 1 or x.shape[-1] != 2:
        raise _errors.GradkitValueError(
            f"tf.keras.ops.view_as_complex takes a tensor whose last axis holds (real, imag), of size 2, but got "
            f"shape {tuple(x.shape)}. Stack the parts: tf.keras.ops.stack([real, imag], axis=-1)."
        )
    return _math.complex(cast(x[..., 0], "float32"), cast(x[..., 1], "float32"))


@keras_op
def view_as_real(x):
    """``keras.ops.view_as_real(x)``: a complex tensor as a real one with a last axis of size 2 holding
    its real and imaginary parts (a real ``x`` gets zero imaginary parts)."""
    x = tensor(x)
    return _array.stack([_math.real(x), _math.imag(x)], axis=-1)
