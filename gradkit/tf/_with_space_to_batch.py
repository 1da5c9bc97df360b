"""``tf.nn.with_space_to_batch``: a VALID (or given-padding) op run on the input moved into the
batch by ``space_to_batch_nd`` with ``dilation_rate`` blocks, and the result moved back by
``batch_to_space_nd``: TensorFlow's way of running an op as its dilated ("atrous") version.

As TensorFlow's: a dilation rate of all ones calls ``op(input, num_spatial_dims, padding)``
directly; ``"SAME"`` needs ``filter_shape`` (the dilated filter's extent is padded, the extra
entry at the end) and ``"VALID"`` pads nothing beyond making the sizes divide by the rates;
``spatial_dims`` picks the axes (after the batch one; from axis 2 for an ``"NC..."``
``data_format``).

>>> import gradkit.tf as tf
>>> x = tf.reshape(tf.range(16.0), [1, 4, 4, 1])
>>> pool = lambda v, n, padding: tf.nn.max_pool2d(v, 2, 1, padding)
>>> tf.nn.with_space_to_batch(x, [2, 2], "VALID", pool)[0, :, :, 0].numpy().tolist()
[[10.0, 11.0], [14.0, 15.0]]
"""

from __future__ import annotations

import numpy as np

from gradkit import _errors

from ._convert import convert, known_value
from ._space_batch import batch_to_space, required_space_to_batch_paddings, space_to_batch_nd

_WHAT = "tf.nn.with_space_to_batch"


def _known_ints(value, name):
    known = known_value(value)
    if known is None:
        raise _errors.GradkitValueError(
            f"{_WHAT} needs {name} with known values (gradkit computes the paddings before the call), but got a "
            "tensor computed inside a compiled function. Pass Python ints."
        )
    return np.asarray(known).astype(np.int64)


def _spatial_dims(spatial_dims, count, data_format):
    first = 2 if data_format is not None and data_format.startswith("NC") else 1
    if spatial_dims is None:
        return list(range(first, first + count))
    given = [int(d) for d in spatial_dims]
    if sorted(set(given)) != given or any(d < 1 for d in given):
        raise _errors.GradkitValueError(
            f"{_WHAT}: spatial_dims={list(spatial_dims)} must be a monotonically increasing sequence of positive "
            "integers (TensorFlow raises ValueError)."
        )
    if len(given) != count:
        raise _errors.GradkitValueError(
            f"{_WHAT}: spatial_dims={given} has {len(given)} entries for a dilation_rate of {count}; give one per rate."
        )
    return given


def _base_paddings(padding, filter_shape, rates, data_format):
    count = rates.size
    if padding == "VALID":
        return np.zeros((count, 2), np.int64)
    if padding == "SAME":
        if filter_shape is None:
            raise _errors.GradkitValueError(f"{_WHAT}: filter_shape must be specified for SAME padding.")
        extent = (_known_ints(filter_shape, "filter_shape")[:count] - 1) * rates
        return np.stack([extent // 2, extent - extent // 2], axis=1)
    if isinstance(padding, (list, tuple)):
        pairs = np.asarray(padding, np.int64).reshape(count + 2, 2)  # batch, spatial axes, channels
        return pairs[2:] if data_format is not None and data_format.startswith("NC") else pairs[1:-1]
    raise _errors.GradkitValueError(
        f"{_WHAT}: padding={padding!r}; TensorFlow takes 'SAME', 'VALID' or a list of [before, after] pairs."
    )


def _on_axes(values, fill, spatial_dims, rank_after_batch):
    """``values`` (one row per spatial axis) spread over the axes after the batch one, ``fill``
    on the others up to the last spatial axis (TensorFlow's _with_space_to_batch_adjust)."""
    rows = {d: row for d, row in zip(spatial_dims, values)}
    return [rows.get(d, fill) for d in range(1, spatial_dims[-1] + 1)][:rank_after_batch]


def with_space_to_batch(input, dilation_rate, padding, op, filter_shape=None, spatial_dims=None, data_format=None):  # noqa: A002
    """``tf.nn.with_space_to_batch(input, dilation_rate, padding, op, filter_shape=None,
    spatial_dims=None, data_format=None)``: ``op(converted, num_spatial_dims, "VALID")`` on
    ``input`` moved into the batch by ``dilation_rate`` blocks, moved back afterwards."""
    x = convert(input)
    rates = _known_ints(dilation_rate, "dilation_rate").reshape(-1)
    if (rates < 1).any():
        raise _errors.GradkitValueError(f"{_WHAT}: dilation_rate={rates.tolist()} must be positive, as in TensorFlow.")
    count = rates.size
    dims = _spatial_dims(spatial_dims, count, data_format)
    if dims[-1] >= len(x.shape):
        raise _errors.GradkitValueError(
            f"{_WHAT}: the input of shape {tuple(x.shape)} has no axis {dims[-1]} for spatial_dims {dims}."
        )
    if (rates == 1).all():
        return op(x, count, padding)
    base = _base_paddings(padding, filter_shape, rates, data_format)
    spatial_shape = [int(x.shape[d]) for d in dims]
    paddings, crops = required_space_to_batch_paddings(spatial_shape, rates.tolist(), base)
    paddings, crops = np.asarray(paddings.numpy()), np.asarray(crops.numpy())
    # Axes between the spatial ones (not moved) take block 1 and no padding, as in TensorFlow.
    block = _on_axes(rates.tolist(), 1, dims, dims[-1])
    paddings = _on_axes(paddings.tolist(), [0, 0], dims, dims[-1])
    crops = _on_axes(crops.tolist(), [0, 0], dims, dims[-1])
    converted = space_to_batch_nd(x, block, paddings)
    result = op(converted, count, "VALID")
    return batch_to_space(result, block, crops)
