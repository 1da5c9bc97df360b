"""Segment maxima and minima with ties: the value is the tied entry itself (integers too), and
the gradient is split evenly among the tied entries, as TensorFlow's is."""

import numpy as np
import pytest

import gradkit.tf as gtf

IDS = [0, 0, 0, 1, 1, 1]


@pytest.mark.parametrize("dtype", ["int32", "int8", "float32", "float16", "bfloat16"])
def test_tied_extremes_are_the_entries(dtype):
    data = np.array([5, 5, 3, 7, 7, 7], np.float32) / (10 if "float" in dtype else 1)
    x = gtf.cast(gtf.constant(data), dtype)
    entries = np.asarray(x).astype(np.float32)
    expected_max = [entries[:3].max(), entries[3:].max()]
    expected_min = [entries[:3].min(), entries[3:].min()]
    results = [
        (gtf.math.segment_max(x, IDS), expected_max),
        (gtf.math.unsorted_segment_max(x, IDS, 2), expected_max),
        (gtf.math.segment_min(x, IDS), expected_min),
        (gtf.function(lambda t: gtf.math.unsorted_segment_min(t, IDS, 2))(x), expected_min),
    ]
    for got, expected in results:
        assert np.asarray(got).dtype == np.asarray(x).dtype
        np.testing.assert_array_equal(np.asarray(got).astype(np.float32), expected)


def test_tied_maximum_shares_its_gradient():
    x = gtf.constant([0.1, 0.1, 0.1, 0.3, 0.2, 0.3])
    with gtf.GradientTape() as tape:
        tape.watch(x)
        y = gtf.math.segment_max(x, IDS)
    grad = tape.gradient(y, x, output_gradients=gtf.constant([3.0, 4.0]))
    np.testing.assert_allclose(grad.numpy(), [1.0, 1.0, 1.0, 2.0, 0.0, 2.0])  # 3 / 3 ties, 4 / 2 ties


def test_tied_extremes_match_tensorflow():
    tf = pytest.importorskip("tensorflow")
    for module in (tf, gtf):
        d = module.constant([5, 5, 3, 7, 7, 7], module.int32)
        f = module.constant([0.1, 0.1, 0.1, 1 / 3, 1 / 3, 0.2])
        got = [
            module.math.segment_max(d, IDS).numpy().tolist(),
            module.math.segment_min(module.constant([2, 2, 9], module.int32), [0, 0, 0]).numpy().tolist(),
            module.math.unsorted_segment_max(module.cast(d, module.int8), IDS, 2).numpy().tolist(),
            module.math.segment_max(f, IDS).numpy().tolist(),
        ]
        if module is tf:
            theirs = got
    assert got == theirs
