"""The windowing idiom ``window(n, shift=1, drop_remainder=True).flat_map(lambda w: w.batch(n))``
on a series shorter than a window: no windows, and an element spec all the same (TensorFlow
traces the function; so does gradkit, on placeholder windows), so the dataset concatenates with
others and feeds Keras. Oracles: the windows by hand, and TensorFlow."""

import numpy as np
import pytest

import gradkit.tf as gtf


def _windows(tf, series, n=5, drop_remainder=False):
    ds = tf.data.Dataset.from_tensor_slices(series).window(n, shift=1, drop_remainder=True)
    return ds.flat_map(lambda w: w.batch(n, drop_remainder=drop_remainder))


def test_a_series_shorter_than_a_window_has_none_and_a_spec():
    short = _windows(gtf, np.arange(4, dtype=np.float32))
    assert list(short) == []
    assert short.element_spec.shape.as_list() == [None] and short.element_spec.dtype == gtf.float32
    assert _windows(gtf, np.arange(4, dtype=np.float32), drop_remainder=True).element_spec.shape.as_list() == [5]
    both = _windows(gtf, np.arange(6, dtype=np.float32)).concatenate(short)
    assert [w.numpy().tolist() for w in both] == [[0, 1, 2, 3, 4], [1, 2, 3, 4, 5]]


def test_matches_tensorflow():
    tf = pytest.importorskip("tensorflow")
    for drop in (False, True):
        want = _windows(tf, np.arange(4, dtype=np.float32), drop_remainder=drop).element_spec
        got = _windows(gtf, np.arange(4, dtype=np.float32), drop_remainder=drop).element_spec
        assert got.shape.as_list() == want.shape.as_list()


@pytest.mark.parametrize("module", ["gradkit", "tensorflow"])
def test_as_numpy_iterator_refuses_a_dataset_of_windows(module):
    tf = gtf if module == "gradkit" else pytest.importorskip("tensorflow")
    windows = tf.data.Dataset.range(3).window(2)
    with pytest.raises(TypeError, match="as_numpy_iterator"):
        list(windows.as_numpy_iterator())
    assert [list(w.as_numpy_iterator()) for w in windows] == [[0, 1], [2]]
