"""TensorBoard's histogram buckets (``tf.summary.histogram``'s ``[k, 3]`` tensor), in NumPy.

The algorithm of TensorBoard's ``summary_v2._buckets``, step for step in float64: ``k``
buckets of equal width between the data's minimum and maximum, each row ``[left edge, right
edge, count]``; a value on an inner edge counts in the bucket to its right, the maximum in the
last. The edges are TensorFlow's ``linspace`` (``min + i * (max - min) / k``, the last one
``max`` itself). All-equal data puts every count in the last bucket, both edges at the value;
empty data gives ``k`` rows of zeros, and ``k <= 0`` no rows.

>>> buckets(np.array([0.0, 1.0, 2.0, 4.0]), 2).tolist()
[[0.0, 2.0, 2.0], [2.0, 4.0, 2.0]]
"""

from __future__ import annotations

import numpy as np

DEFAULT_BUCKET_COUNT = 30


def buckets(data: np.ndarray, bucket_count: int) -> np.ndarray:
    """The ``[bucket_count, 3]`` float64 histogram of ``data`` (any shape, cast to float64)."""
    count = max(0, int(bucket_count))
    data = np.asarray(data).reshape(-1).astype(np.float64)
    if data.size == 0 or count == 0:
        return np.zeros((count, 3), np.float64)
    low, high = data.min(), data.max()
    width = high - low
    if width == 0:
        counts = np.zeros(count, np.float64)
        counts[-1] = data.size
        edges = np.full(count, high)
        return np.stack([edges, edges, counts], axis=1)
    bucket_width = width / np.float64(count)
    with np.errstate(invalid="ignore", over="ignore"):
        index = np.floor((data - low) / bucket_width)
        # TensorFlow casts to int32 (a non-finite index is out of range and counts nowhere), then
        # clamps the index to the last bucket.
        counted = np.isfinite(index) & (index >= 0)
        index = np.minimum(index[counted], count - 1).astype(np.int64)
    counts = np.bincount(index, minlength=count).astype(np.float64)
    delta = width / np.float64(count)
    edges = low + delta * np.arange(count + 1, dtype=np.float64)
    edges[0], edges[-1] = low, high
    return np.stack([edges[:-1], edges[1:], counts], axis=1)
