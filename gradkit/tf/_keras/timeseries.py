"""``tf.keras.utils.timeseries_dataset_from_array``: sliding windows over a timeseries as a
``tf.data.Dataset`` of batches, Keras 3's rules: window ``i`` starts at ``start_positions[i]``
(every ``sequence_stride`` steps from ``start_index``) and takes ``sequence_length`` steps,
``sampling_rate`` apart; its target is ``targets[start_positions[i]]``. With ``shuffle`` the
start positions are shuffled by NumPy's ``RandomState(seed)`` as in Keras, then the windows by
the dataset's ``shuffle`` (gradkit's draws, not TensorFlow's).

>>> import numpy as np, gradkit.tf as tf
>>> ds = tf.keras.utils.timeseries_dataset_from_array(np.arange(10), None, sequence_length=3, batch_size=4)
>>> [b.numpy().tolist() for b in ds][0]
[[0, 1, 2], [1, 2, 3], [2, 3, 4], [3, 4, 5]]
"""

from __future__ import annotations

import numpy as np

from gradkit import _errors


def _check(data, start_index, end_index, sampling_rate, sequence_stride) -> None:
    n = len(data)
    if start_index:
        if start_index < 0:
            raise _errors.GradkitValueError(f"`start_index` must be 0 or greater. Received: start_index={start_index}")
        if start_index >= n:
            raise _errors.GradkitValueError(
                f"`start_index` must be lower than the length of the data. Received: start_index={start_index}, "
                f"for data of length {n}"
            )
    if end_index:
        if start_index and end_index <= start_index:
            raise _errors.GradkitValueError(
                "`end_index` must be higher than `start_index`. Received: "
                f"start_index={start_index}, and end_index={end_index} "
            )
        if end_index >= n:
            raise _errors.GradkitValueError(
                f"`end_index` must be lower than the length of the data. Received: end_index={end_index}, for data "
                f"of length {n}"
            )
        if end_index <= 0:
            raise _errors.GradkitValueError(f"`end_index` must be higher than 0. Received: end_index={end_index}")
    for name, value in (("sampling_rate", sampling_rate), ("sequence_stride", sequence_stride)):
        if value <= 0:
            raise _errors.GradkitValueError(f"`{name}` must be higher than 0. Received: {name}={value}")
        if value >= n:
            raise _errors.GradkitValueError(
                f"`{name}` must be lower than the length of the data. Received: {name}={value}, for data of length {n}"
            )


def timeseries_dataset_from_array(
    data,
    targets,
    sequence_length,
    sequence_stride=1,
    sampling_rate=1,
    batch_size=128,
    shuffle=False,
    seed=None,
    start_index=None,
    end_index=None,
    format="tf",  # noqa: A002  (Keras' argument name)
):
    """Keras 3's ``timeseries_dataset_from_array``; see the module docstring."""
    from .. import _data

    if format != "tf":
        raise _errors.GradkitValueError(
            f"timeseries_dataset_from_array(format={format!r}): gradkit.tf makes a tf.data.Dataset (format='tf'); "
            "Keras' 'grain' datasets are not available here."
        )
    data = np.asarray(data)
    _check(data, start_index, end_index, sampling_rate, sequence_stride)
    start_index = 0 if start_index is None else start_index
    end_index = len(data) if end_index is None else end_index
    num_seqs = end_index - start_index - (sequence_length - 1) * sampling_rate
    if targets is not None:
        num_seqs = min(num_seqs, len(targets))
    start_positions = np.arange(0, max(num_seqs, 0), sequence_stride, dtype=np.int64)
    if shuffle:
        if seed is None:
            seed = np.random.randint(1e6)
        np.random.RandomState(seed).shuffle(start_positions)
    steps = data[start_index:end_index]
    offsets = np.arange(sequence_length) * sampling_rate
    windows = steps[start_positions[:, None] + offsets[None, :]] if len(start_positions) else steps[:0][:, None]
    dataset = _data.Dataset.from_tensor_slices(windows)
    if targets is not None:
        labels = np.asarray(targets)[start_index:end_index][start_positions]
        dataset = _data.Dataset.zip((dataset, _data.Dataset.from_tensor_slices(labels)))
    if batch_size is not None:
        if shuffle:
            dataset = dataset.shuffle(buffer_size=batch_size * 8, seed=seed)
        dataset = dataset.batch(batch_size)
    elif shuffle:
        dataset = dataset.shuffle(buffer_size=1024, seed=seed)
    return dataset


NAMES = "timeseries_dataset_from_array"
