"""``Dataset.take_while`` and ``Dataset.unique`` (and their ``tf.data.experimental`` forms for
``apply``): the elements up to the first a predicate refuses, and each element the first time it
comes. Oracles: Python's own loops, and TensorFlow."""

import itertools

import numpy as np
import pytest

import gradkit.tf as gtf

VALUES = [3, 1, 3, 2, 1, 5, 2]


def test_take_while_stops_at_the_first_false():
    ds = gtf.data.Dataset.from_tensor_slices(VALUES).take_while(lambda x: x != 2)
    assert [int(x) for x in ds] == list(itertools.takewhile(lambda x: x != 2, VALUES))
    batches = gtf.data.Dataset.range(10).batch(3).take_while(lambda b: gtf.reduce_sum(b) < 20)
    assert [b.numpy().tolist() for b in batches] == [[0, 1, 2], [3, 4, 5]]
    applied = gtf.data.Dataset.range(10).apply(gtf.data.experimental.take_while(lambda x: x < 4))
    assert [int(x) for x in applied] == [0, 1, 2, 3]
    assert int(applied.cardinality()) == gtf.data.UNKNOWN_CARDINALITY


def test_unique_keeps_first_occurrences_in_order():
    ds = gtf.data.Dataset.from_tensor_slices(VALUES).unique()
    assert [int(x) for x in ds] == list(dict.fromkeys(VALUES))
    applied = gtf.data.Dataset.from_tensor_slices(VALUES).apply(gtf.data.experimental.unique())
    assert [int(x) for x in applied] == list(dict.fromkeys(VALUES))
    with pytest.raises(TypeError, match=r"\[gradkit\].*integer scalars"):
        gtf.data.Dataset.from_tensor_slices(np.ones((3, 2), np.float32)).unique()


def test_matches_tensorflow():
    tf = pytest.importorskip("tensorflow")
    want = [int(x) for x in tf.data.Dataset.from_tensor_slices(VALUES).unique()]
    got = [int(x) for x in gtf.data.Dataset.from_tensor_slices(VALUES).unique()]
    assert got == want
    want = [int(x) for x in tf.data.Dataset.from_tensor_slices(VALUES).take_while(lambda x: x != 2)]
    got = [int(x) for x in gtf.data.Dataset.from_tensor_slices(VALUES).take_while(lambda x: x != 2)]
    assert got == want
