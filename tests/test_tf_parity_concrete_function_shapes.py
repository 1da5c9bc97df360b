"""A concrete function's unknown dimensions read as None (not -1) in every shape it shows:
structured_outputs, output_shapes, structured_input_signature and tf.TensorSpec itself, as
TensorFlow's; checked against TensorFlow where it is installed."""

from __future__ import annotations

import numpy as np
import pytest

import gradkit.tf as gtf


def _shapes(tf):
    f = tf.function(lambda x: {"y": x * 2.0, "z": tf.reduce_sum(x, axis=0)})
    concrete = f.get_concrete_function(tf.TensorSpec([None, 3]))
    spec = concrete.structured_input_signature[0][0]
    outputs = concrete.structured_outputs
    return {
        "input": spec.shape.as_list(),
        "input_dim": spec.shape[0],
        "y": outputs["y"].shape.as_list(),
        "z": outputs["z"].shape.as_list(),
        "output_shapes": {k: s.as_list() for k, s in concrete.output_shapes.items()},
        "fully_defined": (outputs["y"].shape.is_fully_defined(), outputs["z"].shape.is_fully_defined()),
        "spec": tf.TensorSpec([None, 2]).shape.as_list(),
        "repr": repr(concrete.output_shapes["y"]),
    }


def test_unknown_dimensions_are_none():
    got = _shapes(gtf)
    assert got["input"] == [None, 3] and got["input_dim"] is None
    assert got["y"] == [None, 3] and got["z"] == [3]
    assert got["output_shapes"] == {"y": [None, 3], "z": [3]}
    assert got["fully_defined"] == (False, True)
    assert got["spec"] == [None, 2]
    assert got["repr"] == "TensorShape([None, 3])"


def test_the_same_shapes_in_tensorflow():
    tf = pytest.importorskip("tensorflow")
    assert _shapes(gtf) == _shapes(tf)


def test_a_call_still_takes_any_size_for_an_unknown_dimension():
    f = gtf.function(lambda x: x * 2.0).get_concrete_function(gtf.TensorSpec([None, 3]))
    assert tuple(f(gtf.ones([4, 3])).shape) == (4, 3)
    assert gtf.TensorSpec([-1, 3]).shape.as_list() == [None, 3]


def _meets_a_fixed_size(tf):
    v = tf.Variable([1.0, 2.0, 3.0])
    f = tf.function(lambda x: v * x, input_signature=[tf.TensorSpec([None], tf.float32)])
    return f.get_concrete_function().structured_outputs.shape.as_list()


def test_an_unknown_dimension_that_meets_a_fixed_size_takes_it():
    # Broadcast against a length-3 Variable, the unknown dimension can only be 3 (or 1): the
    # output is (3,), by hand and in TensorFlow. Tracing it at size 2 alone would fail.
    assert _meets_a_fixed_size(gtf) == [3]
    tf = pytest.importorskip("tensorflow")
    assert _meets_a_fixed_size(tf) == [3]


def test_a_function_no_size_traces_raises_what_it_raises():
    f = gtf.function(lambda x: x + gtf.ones([5]), input_signature=[gtf.TensorSpec([None, 4], gtf.float32)])
    with pytest.raises(ValueError):
        f.get_concrete_function()


def _saturating_slices(tf):
    f = tf.function(lambda v: (v[:1], v[-1:], tf.reshape(v, [-1, 1])[:1], v[:2]))
    outputs = f.get_concrete_function(tf.TensorSpec([None], tf.float32)).structured_outputs
    return [o.shape.as_list() for o in outputs]


def test_a_slice_that_saturates_at_one_is_unknown_as_an_empty_input_shows():
    # v[:1] of an unknown-length vector is empty for an empty v: its length is unknown.
    assert _saturating_slices(gtf) == [[None], [None], [None, 1], [None]]
    tf = pytest.importorskip("tensorflow")
    assert _saturating_slices(gtf) == _saturating_slices(tf)


def _mapped_empty_rows(tf):
    rows = [np.zeros(0, np.float32), np.arange(3, dtype=np.float32)]
    ds = tf.data.Dataset.from_generator(lambda: iter(rows), output_signature=tf.TensorSpec([None], tf.float32))
    ds = ds.map(lambda v: v[:1])
    return ds.element_spec.shape.as_list(), [x.tolist() for x in ds.as_numpy_iterator()]


def test_a_dataset_maps_empty_elements_through_a_saturating_slice():
    assert _mapped_empty_rows(gtf) == ([None], [[], [0.0]])
    tf = pytest.importorskip("tensorflow")
    assert _mapped_empty_rows(gtf) == _mapped_empty_rows(tf)
