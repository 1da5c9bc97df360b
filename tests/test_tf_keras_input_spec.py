"""``tf.keras.layers.InputSpec``: a layer's ``input_spec`` is checked at each call as Keras checks it
(rank, dtype, shape, axes; an unknown size fits any). Oracles: Keras' documented rules by hand,
and Keras itself where TensorFlow is installed."""

from __future__ import annotations

import pytest

import gradkit.tf as gtf


def _program(tf):
    out = []

    class Pairs(tf.keras.layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.input_spec = tf.keras.layers.InputSpec(ndim=2, axes={-1: 2})

        def call(self, x):
            return x[:, 0] * x[:, 1]

    class Column(tf.keras.layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.input_spec = tf.keras.layers.InputSpec(
                shape=(None, 4, 1), allow_last_axis_squeeze=True, dtype="float32"
            )

        def call(self, x):
            return x

    out.append(tuple(Pairs()(tf.ones([3, 2])).shape))
    for make in (
        lambda: Pairs()(tf.ones([3, 3])),
        lambda: Pairs()(tf.ones([3, 2, 1])),
        lambda: Column()(tf.ones([2, 5])),
        lambda: Column()(tf.ones([2, 4], dtype=tf.int32)),
        lambda: tf.keras.layers.Dense(3)(tf.ones([4])),  # Keras' Dense wants a batch axis
    ):
        try:
            make()
            out.append("accepted")
        except ValueError as e:
            out.append(str(e).split("incompatible with the layer: ")[-1].split(" but ")[0].split(",")[0])
    out.append(tuple(Pairs()(tf.keras.Input((None,))).shape))  # an unknown size fits
    out.append(tuple(Column()(tf.ones([2, 4])).shape))
    out.append(repr(tf.keras.layers.InputSpec(ndim=3, axes={-1: 4})))
    return out


def test_input_spec_checks():
    got = _program(gtf)
    assert got[0] == (3,)
    assert got[1] == "expected axis -1 of input shape to have value 2"
    assert got[2] == "expected ndim=2"
    assert got[3] == "expected shape=(None"
    assert got[4] == "expected dtype=float32"
    assert got[5] == "expected min_ndim=2"
    assert got[6:] == [(None,), (2, 4), "InputSpec(ndim=3, axes={-1: 4})"]
    assert gtf.keras.InputSpec is gtf.keras.layers.InputSpec


def test_the_error_is_prefixed():
    class Flat(gtf.keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.input_spec = gtf.keras.layers.InputSpec(max_ndim=2)

        def call(self, x):
            return x

    with pytest.raises(ValueError, match=r"\[gradkit\].*max_ndim=2"):
        Flat()(gtf.ones([1, 2, 3]))


def test_against_keras():
    tf = pytest.importorskip("tensorflow")
    assert _program(gtf) == [tuple(x) if isinstance(x, tf.TensorShape) else x for x in _program(tf)]
