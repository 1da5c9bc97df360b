"""``tf.data.Dataset.scan`` and ``tf.data.experimental.scan``: a state carried through the elements,
its structure and dtypes kept. Against hand-computed running values and TensorFlow (skipped without it)."""

import numpy as np
import pytest

import gradkit.tf as gtf


def _program(tf):
    ints = tf.data.Dataset.from_tensor_slices(np.arange(5, dtype=np.int32))
    cumulative = ints.scan(tf.constant(0), lambda s, x: (s + x, s * 10))
    pairs = tf.data.Dataset.from_tensor_slices((np.arange(4, dtype=np.float32), np.ones(4, np.float32)))
    affine = pairs.scan(
        (tf.constant(1.0), tf.constant(0)),
        lambda state, element: (
            (state[0] * element[0] + element[1], state[1] + 1),
            {"a": state[0], "n": state[1]},
        ),
    )
    rows = tf.data.Dataset.from_tensor_slices(np.arange(6, dtype=np.float32).reshape(3, 2))
    concatenated = rows.scan(tf.zeros([2]), lambda s, x: (s + x, tf.concat([s, x], 0)))
    applied = ints.apply(tf.data.experimental.scan(tf.constant(0), lambda s, x: (s + 1, x + s)))
    return {
        "cumulative": [int(v) for v in cumulative.as_numpy_iterator()],
        "affine": [(float(d["a"]), int(d["n"])) for d in affine.as_numpy_iterator()],
        "affine spec": {k: (tuple(s.shape), s.dtype.name) for k, s in affine.element_spec.items()},
        "concatenated": [v.tolist() for v in concatenated.as_numpy_iterator()],
        "concatenated shape": tuple(concatenated.element_spec.shape),
        "applied": [int(v) for v in applied.as_numpy_iterator()],
        "cardinality": int(affine.cardinality()),
    }


def test_scan_by_hand():
    got = _program(gtf)
    assert got["cumulative"] == [0, 0, 10, 30, 60]  # 10 * (0, 0, 1, 3, 6)
    assert got["affine"] == [(1.0, 0), (1.0, 1), (2.0, 2), (5.0, 3)]  # a <- a * x + 1
    assert got["affine spec"] == {"a": ((), "float32"), "n": ((), "int32")}
    assert got["concatenated"] == [[0, 0, 0, 1], [0, 1, 2, 3], [2, 4, 4, 5]]
    assert got["concatenated shape"] == (4,)
    assert got["applied"] == [0, 2, 4, 6, 8]
    assert got["cardinality"] == 4


def test_scan_matches_tensorflow():
    tf = pytest.importorskip("tensorflow")
    assert _program(gtf) == _program(tf)


@pytest.mark.parametrize(
    "scan_func, message",
    [
        (
            lambda s, x: (s + 1.0, x),
            r"element types for the new state must match.*Expected float32 but got int32|"
            r"Expected int32 but got float32",
        ),
        (lambda s, x: ((s, s), x), r"structure of the new state must match"),
        (lambda s, x: s, r"returned Tensor, where TensorFlow takes a pair"),
    ],
)
def test_a_bad_scan_func_raises_type_error(scan_func, message):
    ints = gtf.data.Dataset.from_tensor_slices(np.arange(3, dtype=np.int32))
    with pytest.raises(TypeError, match=message):
        list(ints.scan(gtf.constant(0), scan_func))
    tf = pytest.importorskip("tensorflow")
    # TensorFlow raises TypeError when it traces, except for a state of another structure, which
    # its iterator refuses (InvalidArgumentError).
    with pytest.raises((TypeError, tf.errors.InvalidArgumentError)):
        list(tf.data.Dataset.from_tensor_slices(np.arange(3, dtype=np.int32)).scan(tf.constant(0), scan_func))
