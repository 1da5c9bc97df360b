"""A merging layer whose inputs meet a None axis and a fixed size (``Add()([x, y])`` with ``x``
``(None, None, 4)`` and ``y`` ``(None, 3, 4)``) is built in a functional model, with the shape
the layer's ``compute_output_shape`` gives, as in Keras. Oracle: NumPy on the model's inputs,
and Keras' symbolic shapes where installed."""

import numpy as np
import pytest

import gradkit.tf as gtf

A = np.ones((2, 3, 4), np.float32)
B = np.full((2, 3, 4), 2.0, np.float32)


def _model(keras):
    a, b = keras.layers.Input((None, 4)), keras.layers.Input((3, 4))
    add = keras.layers.Add()([a, b])
    cat = keras.layers.Concatenate(axis=1)([a, b])
    return (tuple(add.shape), tuple(cat.shape)), keras.Model([a, b], [add, cat])


def test_a_none_axis_meeting_a_fixed_size():
    shapes, model = _model(gtf.keras)
    assert shapes == ((None, None, 4), (None, None, 4))
    added, joined = model([A, B])
    np.testing.assert_array_equal(added.numpy(), A + B)
    np.testing.assert_array_equal(joined.numpy(), np.concatenate([A, B], axis=1))


def test_shapes_match_keras():
    keras = pytest.importorskip("keras")
    assert _model(gtf.keras)[0] == _model(keras)[0]
