"""Keras layers and model attributes where gradkit.tf once parted from Keras 3 (TensorFlow 2.21
backend): global average pooling of integers (a float mean, not a truncated one), shapes of
layers called on Inputs with unknown sizes (pooled, strided, cropped or convolved axes stay
unknown), ``Normalization(mean=, variance=)`` on an Input, ``input_shape``/``output_shape`` and
the ``inputs``/``outputs`` lists, and ``ThresholdedReLU``'s float32 ``theta``. Oracles: Keras
itself, NumPy and hand derivations."""

import numpy as np
import pytest

import gradkit.tf as gtf

X_INT = np.array([[[1], [2]], [[3], [6]]], np.int32)  # per-example means 1.5 and 4.5


@pytest.mark.parametrize("rank", [1, 2, 3])
def test_global_average_pooling_of_integers_is_a_float_mean(rank):
    layer = getattr(gtf.keras.layers, f"GlobalAveragePooling{rank}D")()
    out = layer(gtf.constant(X_INT.reshape((2, 2) + (1,) * rank)))
    assert out.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(out).ravel(), [1.5, 4.5])


_SYMBOLIC = {
    "max-pool-2d": (lambda tf: tf.keras.layers.MaxPooling2D(), (None, None, 3)),
    "average-pool-1d": (lambda tf: tf.keras.layers.AveragePooling1D(2), (None, 3)),
    "strided-conv-2d": (lambda tf: tf.keras.layers.Conv2D(2, 2, strides=2), (None, None, 3)),
    "conv-1d-kernel-5": (lambda tf: tf.keras.layers.Conv1D(2, 5), (None, 3)),
    "cropping-1d": (lambda tf: tf.keras.layers.Cropping1D(1), (None, 3)),
    "depthwise-3": (lambda tf: tf.keras.layers.DepthwiseConv2D(3), (None, None, 3)),
    "max-pool-1d-4": (lambda tf: tf.keras.layers.MaxPooling1D(4), (None, 3)),
    "center-crop": (lambda tf: tf.keras.layers.CenterCrop(4, 5), (None, None, 3)),
}


@pytest.mark.parametrize("name", sorted(_SYMBOLIC))
def test_a_layer_on_an_input_of_unknown_sizes_keeps_them_unknown(name):
    tf_real = pytest.importorskip("tensorflow")
    make, shape = _SYMBOLIC[name]
    shapes = [tuple(make(tf)(tf.keras.Input(shape)).shape) for tf in (tf_real, gtf)]
    assert shapes[1] == shapes[0]


@pytest.mark.parametrize("sequential", [False, True])
def test_normalization_with_a_given_mean_and_variance_on_an_input(sequential):
    mean, variance = [1.0, 2.0, 3.0], [1.0, 4.0, 9.0]
    x = np.random.RandomState(0).randn(2, 3).astype(np.float32)
    norm = gtf.keras.layers.Normalization(mean=mean, variance=variance)
    if sequential:
        model = gtf.keras.Sequential([gtf.keras.Input((3,)), norm])
    else:
        inp = gtf.keras.Input((3,))
        model = gtf.keras.Model(inp, norm(inp))
    assert model.output_shape == (None, 3)
    np.testing.assert_allclose(np.asarray(model(x)), (x - mean) / np.sqrt(variance), rtol=1e-6)


def test_model_inputs_and_outputs_are_lists_and_input_is_the_structure():
    a, b = gtf.keras.Input((3,), name="a"), gtf.keras.Input((2,), name="b")
    out = gtf.keras.layers.Dense(4)(gtf.keras.layers.Concatenate()([a, b]))
    model = gtf.keras.Model({"a": a, "b": b}, out)
    assert isinstance(model.inputs, list) and [t.name for t in model.inputs] == ["a", "b"]
    assert isinstance(model.input, dict) and isinstance(model.outputs, list) and model.output is out
    assert model.input_shape == [(None, 3), (None, 2)] and model.output_shape == (None, 4)


def test_shapes_and_lists_against_keras():
    tf_real = pytest.importorskip("tensorflow")
    results = []
    for tf in (tf_real, gtf):
        inp = tf.keras.Input((3,))
        functional = tf.keras.Model(inp, tf.keras.layers.Dense(2)(inp))
        sequential = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2)])
        results.append(
            (
                functional.input_shape,
                functional.output_shape,
                [tuple(t.shape) for t in functional.inputs],
                [tuple(t.shape) for t in functional.outputs],
                sequential.input_shape,
                sequential.output_shape,
            )
        )
    assert results[1] == results[0]


def test_a_sequential_names_what_it_lacks():
    model = gtf.keras.Sequential([gtf.keras.layers.Dense(2)])
    with pytest.raises(AttributeError, match=r"\[gradkit\] Sequential model .* has no outputs yet"):
        model.outputs  # noqa: B018
    with pytest.raises(AttributeError, match=r"\[gradkit\] Sequential model .* no defined input_shape"):
        gtf.keras.Sequential([gtf.keras.layers.Dense(2)]).input_shape  # noqa: B018


def test_thresholded_relu_theta_is_float32_in_its_config():
    assert gtf.keras.layers.ThresholdedReLU(theta=0.3).get_config()["theta"] == float(np.float32(0.3))
