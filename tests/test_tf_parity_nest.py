"""``tf.nest`` follows TensorFlow's rules: a dict's values in sorted key order (an OrderedDict's
too, whatever order it was built in), a rebuilt dict in the order of the one it copies,
namedtuples rebuilt as themselves, ``check_types``, and the error kinds. Expected values are
written by hand (they run without TensorFlow) and checked against TensorFlow where installed."""

import collections

import numpy as np
import pytest

import gradkit.tf as gtf

Point = collections.namedtuple("Point", ["y", "x"])


def _structures():
    return {
        "ordered_dict": (collections.OrderedDict(b=1, a=2), [2, 1]),
        "dict_built_unsorted": ({"z": 1, "a": [2, 3]}, [2, 3, 1]),
        "namedtuple": (Point(y=1, x=(2, None)), [1, 2, None]),
        "nested": ([1, {"k": (2, 3), "c": 4}, (5,)], [1, 4, 2, 3, 5]),
        "leaf": (7, [7]),
        "none": (None, [None]),
        "empty": ([(), {}], []),
    }


@pytest.mark.parametrize("name", sorted(_structures()))
def test_flatten_and_pack_sequence_as_follow_tensorflows_order(name):
    structure, leaves = _structures()[name]
    assert gtf.nest.flatten(structure) == leaves
    letters = [chr(ord("A") + i) for i in range(len(leaves))]
    packed = gtf.nest.pack_sequence_as(structure, letters)
    assert gtf.nest.flatten(packed) == letters
    if isinstance(structure, dict):
        assert list(packed) == list(structure) and type(packed) is type(structure)
    tf_real = pytest.importorskip("tensorflow")
    assert tf_real.nest.flatten(structure) == leaves
    assert tf_real.nest.pack_sequence_as(structure, letters) == packed


def test_map_structure_keeps_the_first_structure_and_tensors_and_slices_are_leaves():
    v = gtf.Variable([1.0, 2.0])
    out = gtf.nest.map_structure(lambda a, b: a * b, {"b": v, "a": v[0]}, {"a": 3.0, "b": 2.0})
    assert list(out) == ["b", "a"]
    np.testing.assert_allclose(out["b"].numpy(), [2.0, 4.0])
    np.testing.assert_allclose(float(out["a"]), 3.0)
    assert gtf.nest.map_structure(lambda a, b: a + b, [1, 2], (3, 4), check_types=False) == [4, 6]


@pytest.mark.parametrize(
    "a,b,kind",
    [
        ([1, 2], (1, 2), TypeError),
        ([1, 2], [1, [2]], ValueError),
        ([1], [1, 2], ValueError),
        ({"a": 1}, {"b": 1}, ValueError),
    ],
)
def test_assert_same_structure_raises_tensorflows_kinds(a, b, kind):
    with pytest.raises(kind, match=r"^\[gradkit\]"):
        gtf.nest.assert_same_structure(a, b)
    tf_real = pytest.importorskip("tensorflow")
    with pytest.raises(kind):
        tf_real.nest.assert_same_structure(a, b)


def test_check_types_false_compares_the_nesting_alone():
    gtf.nest.assert_same_structure([1, (2, 3)], (4, [5, 6]), check_types=False)
    with pytest.raises(ValueError):
        gtf.nest.assert_same_structure([1, (2, 3)], (4, 5), check_types=False)


def _shape_programs(tf):
    shapes = {"a": tf.zeros([2, 3]).shape, "b": tf.TensorShape([None, 2]), "c": tf.TensorShape(None)}
    return [
        [str(s) for s in tf.nest.flatten(shapes)],
        tf.nest.map_structure(lambda s: s.rank, shapes),
        tf.nest.is_nested(tf.TensorShape([2, 3])),
        tf.nest.is_nested(tf.zeros([2]).shape),
        len(tf.nest.flatten(tf.TensorShape([4, 5, 6]))),
    ]


_SHAPES_EXPECTED = [["(2, 3)", "(None, 2)", "<unknown>"], {"a": 2, "b": 2, "c": None}, False, False, 1]


def test_shapes_are_leaves():
    # TensorFlow's TensorShape is one value to tf.nest; gradkit's shapes are tuples, which it
    # must not take apart.
    assert _shape_programs(gtf) == _SHAPES_EXPECTED
    gtf.nest.assert_same_structure(gtf.TensorShape([2, 3]), gtf.TensorShape([2]))


def test_shapes_are_leaves_in_tensorflow_too():
    tf_real = pytest.importorskip("tensorflow")
    assert _shape_programs(tf_real) == _SHAPES_EXPECTED
    tf_real.nest.assert_same_structure(tf_real.TensorShape([2, 3]), tf_real.TensorShape([2]))
