"""``tf.keras.utils.timeseries_dataset_from_array``: the windows and targets Keras 3 makes
(strides, sampling rates, start and end indices, batches; shuffled, the same windows in another
order), and its argument checks. Oracles: windows sliced by hand with NumPy, and Keras where
installed."""

import numpy as np
import pytest

import gradkit.tf as gtf

_DATA = np.arange(100, dtype=np.float32).reshape(50, 2)
_TARGETS = np.arange(50, dtype=np.int32) * 10

CASES = [
    {"sequence_length": 5},
    {"sequence_length": 4, "sequence_stride": 3, "sampling_rate": 2, "batch_size": 7},
    {"sequence_length": 3, "start_index": 5, "end_index": 30, "batch_size": None},
    {"sequence_length": 6, "sampling_rate": 3, "batch_size": 4},
]


def _batches(K, case, targets):
    ds = K.utils.timeseries_dataset_from_array(_DATA, targets, **case)
    out = []
    for batch in ds:
        parts = batch if isinstance(batch, tuple) else (batch,)
        out.append([np.asarray(p) for p in parts])
    return out


def _by_hand(case, targets):
    length, stride = case["sequence_length"], case.get("sequence_stride", 1)
    rate, start, end = case.get("sampling_rate", 1), case.get("start_index") or 0, case.get("end_index") or len(_DATA)
    count = end - start - (length - 1) * rate
    if targets is not None:
        count = min(count, len(targets))
    starts = range(0, count, stride)
    windows = [_DATA[start + s : start + s + length * rate : rate] for s in starts]
    labels = [targets[start + s] for s in starts] if targets is not None else None
    return windows, labels


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("with_targets", [True, False])
def test_windows_are_the_hand_sliced_ones(case, with_targets):
    targets = _TARGETS if with_targets else None
    batches = _batches(gtf.keras, case, targets)
    windows, labels = _by_hand(case, targets)
    if case.get("batch_size", 128) is None:
        got = [b[0] for b in batches]
        got_labels = [b[1] for b in batches] if with_targets else None
    else:
        got = [w for b in batches for w in b[0]]
        got_labels = [t for b in batches for t in b[1]] if with_targets else None
    assert len(got) == len(windows)
    for a, b in zip(got, windows):
        np.testing.assert_array_equal(a, b)
    if with_targets:
        np.testing.assert_array_equal(got_labels, labels)


def test_shuffled_windows_are_the_same_windows():
    ds = gtf.keras.utils.timeseries_dataset_from_array(_DATA, _TARGETS, 5, shuffle=True, seed=3, batch_size=8)
    pairs = sorted((int(t), w.tobytes()) for x, y in ds for w, t in zip(np.asarray(x), np.asarray(y)))
    windows, labels = _by_hand({"sequence_length": 5}, _TARGETS)
    assert pairs == sorted((int(t), w.tobytes()) for w, t in zip(windows, labels))


@pytest.mark.parametrize("case", CASES)
def test_windows_match_keras(case):
    keras = pytest.importorskip("keras")
    for targets in (_TARGETS, None):
        ours, theirs = _batches(gtf.keras, case, targets), _batches(keras, case, targets)
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            for x, y in zip(a, b):
                np.testing.assert_array_equal(x, y)


def test_bad_arguments_are_refused():
    utils = gtf.keras.utils
    with pytest.raises(ValueError, match=r"\[gradkit\] `sampling_rate` must be higher than 0"):
        utils.timeseries_dataset_from_array(_DATA, None, 3, sampling_rate=0)
    with pytest.raises(ValueError, match=r"\[gradkit\] `start_index` must be lower than the length"):
        utils.timeseries_dataset_from_array(_DATA, None, 3, start_index=60)
