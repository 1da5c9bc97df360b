"""Keras' preprocessing layers take their inputs in their compute dtype where TensorFlow runs them in
a graph (a ``tf.data`` map, a ``tf.function``, a functional model's symbolic call and its predict),
and keep the input's dtype when called eagerly: a uint8 image is brightened without wrapping round
and resized without rounding there. Against Keras on TensorFlow (skipped without it) and by hand."""

import numpy as np
import pytest

import gradkit.tf as gtf

_IMAGE = np.array([[[[19, 198, 111], [184, 249, 137]]]], dtype=np.uint8)  # (1, 1, 2, 3)


def _layers(tf):
    return {
        "brightness": lambda: tf.keras.layers.RandomBrightness((0.2, 0.2)),  # a fixed +51, clipped to 255
        "resizing": lambda: tf.keras.layers.Resizing(1, 3),
        "grayscale": lambda: tf.keras.layers.RandomGrayscale(1.0),
    }


def _runs(tf, name):
    make = _layers(tf)[name]
    layer = make()
    dataset = tf.data.Dataset.from_tensor_slices(_IMAGE).map(lambda t: layer(t, training=True))
    inputs = tf.keras.Input((1, 2, 3), dtype="uint8")
    model = tf.keras.Model(inputs, make()(inputs, training=True))
    runs = {
        "eager": layer(_IMAGE[0], training=True),
        "data": next(iter(dataset)),
        "function": tf.function(lambda t: layer(t, training=True))(_IMAGE[0]),
        "predict": model.predict(_IMAGE, verbose=0)[0],
    }
    return {k: (np.dtype(getattr(v.dtype, "as_numpy_dtype", v.dtype)).name, np.asarray(v)) for k, v in runs.items()} | {
        "symbolic": str(model.output.dtype).replace("<dtype: '", "").replace("'>", "")
    }


@pytest.mark.parametrize("name", ["brightness", "resizing", "grayscale"])
def test_preprocessing_layers_in_a_graph_take_float_inputs(name):
    got = _runs(gtf, name)
    assert got["eager"][0] == "uint8"
    for where in ("data", "function", "predict"):
        assert got[where][0] == "float32", where
    if name == "brightness":
        # 249 + 51 clips to 255 in float32; eagerly uint8 arithmetic wraps round to 44, as in Keras.
        np.testing.assert_array_equal(got["data"][1].ravel(), [70, 249, 162, 235, 255, 188])
        np.testing.assert_array_equal(got["eager"][1].ravel(), [70, 249, 162, 235, 44, 188])
    tf = pytest.importorskip("tensorflow")
    want = _runs(tf, name)
    for where in ("eager", "data", "function", "predict"):
        assert got[where][0] == want[where][0], where
        np.testing.assert_allclose(got[where][1].astype(np.float32), want[where][1].astype(np.float32), atol=1e-4)
    if name != "grayscale":  # Keras' symbolic RandomGrayscale keeps uint8, which its predict does not
        assert got["symbolic"] == want["symbolic"]
