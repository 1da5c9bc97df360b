"""tf.Variable.numpy(): a NumPy scalar for a scalar Variable (np.float32, np.int32, np.bool_),
an array of its own for the others, as TensorFlow's; against real TensorFlow and NumPy."""

import numpy as np
import pytest

import gradkit.tf as gtf

VALUES = {"float": 1.5, "int": 3, "bool": True, "vector": [1.0, 2.0], "matrix": [[1, 2], [3, 4]]}


@pytest.mark.parametrize("key", sorted(VALUES))
def test_numpy_matches_numpy(key):
    out = gtf.Variable(VALUES[key]).numpy()
    expected = np.asarray(VALUES[key], {"float": np.float32, "int": np.int32}.get(key))
    if key == "vector":
        expected = expected.astype(np.float32)
    if key == "matrix":
        expected = expected.astype(np.int32)
    assert type(out) is (type(expected[()]) if expected.ndim == 0 else np.ndarray)
    assert out.dtype == expected.dtype and np.array_equal(out, expected)


def test_array_is_a_copy_of_its_own():
    v = gtf.Variable([1.0, 2.0])
    out = v.numpy()
    out[0] = 5.0
    assert v.numpy()[0] == 1.0


def test_inside_a_tape_after_an_assignment():
    v = gtf.Variable(2.0)
    with gtf.GradientTape():
        v.assign(v * 3.0)
        assert v.numpy() == np.float32(6.0) and isinstance(v.numpy(), np.float32)


@pytest.mark.parametrize("key", sorted(VALUES))
def test_repr_shows_the_value_as_tensorflow(key):
    shown = repr(gtf.Variable(VALUES[key])).split("numpy=")[1]
    expected = np.asarray(gtf.Variable(VALUES[key]).numpy())
    assert shown == (str(expected[()]) + ">" if expected.ndim == 0 else repr(expected) + ">")


@pytest.mark.parametrize("key", ["float", "int", "bool", "vector"])
def test_repr_matches_tensorflow(key):
    tf = pytest.importorskip("tensorflow")
    ours, theirs = repr(gtf.Variable(VALUES[key])), repr(tf.Variable(VALUES[key]))
    assert ours.split("numpy=")[1] == theirs.split("numpy=")[1]


@pytest.mark.parametrize("key", sorted(VALUES))
def test_numpy_matches_tensorflow(key):
    tf = pytest.importorskip("tensorflow")
    ours, theirs = gtf.Variable(VALUES[key]).numpy(), tf.Variable(VALUES[key]).numpy()
    assert type(ours) is type(theirs) and ours.dtype == theirs.dtype and np.array_equal(ours, theirs)
