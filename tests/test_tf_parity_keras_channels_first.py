"""gradkit.tf's Keras convolution and 2-D pooling layers with ``data_format='channels_first'``
against real tf.keras 3 on the same weights: outputs, gradients (input and weights), configs,
``compute_output_shape``, and the errors for inputs of the wrong layout."""

import numpy as np
import pytest

pytest.importorskip("tensorflow")
from _keras_layer_parity import check_layer, check_output_shape  # noqa: E402

import gradkit.tf as gtf  # noqa: E402

_rs = np.random.RandomState(0)
SEQ = _rs.randn(2, 3, 7).astype(np.float32)  # (batch, channels, width)
IMG = _rs.randn(2, 4, 7, 6).astype(np.float32)  # (batch, channels, height, width)
VOL = _rs.randn(1, 2, 4, 5, 3).astype(np.float32)  # (batch, channels, depth, height, width)
FIRST = {"data_format": "channels_first"}

CASES = {
    "conv1d": (lambda L: L.Conv1D(4, 3, **FIRST), SEQ),
    "conv1d_causal_dilated": (lambda L: L.Conv1D(2, 3, padding="causal", dilation_rate=2, **FIRST), SEQ),
    "conv1d_same_strided_nobias": (lambda L: L.Conv1D(4, 2, strides=2, padding="same", use_bias=False, **FIRST), SEQ),
    "conv2d": (lambda L: L.Conv2D(3, 3, activation="relu", **FIRST), IMG),
    "conv2d_same_strided": (lambda L: L.Conv2D(2, (3, 2), strides=2, padding="same", **FIRST), IMG),
    "conv2d_grouped": (lambda L: L.Conv2D(4, 2, groups=2, **FIRST), IMG),
    "conv3d": (lambda L: L.Conv3D(2, 2, padding="same", **FIRST), VOL),
    "conv1d_transpose": (lambda L: L.Conv1DTranspose(2, 3, strides=2, **FIRST), SEQ),
    "conv2d_transpose_same": (lambda L: L.Conv2DTranspose(3, 3, strides=2, padding="same", **FIRST), IMG),
    "conv2d_transpose_output_padding": (
        lambda L: L.Conv2DTranspose(2, 3, strides=2, output_padding=1, **FIRST),
        IMG,
    ),
    "conv3d_transpose": (lambda L: L.Conv3DTranspose(2, 2, strides=(1, 2, 1), **FIRST), VOL),
    "depthwise1d": (lambda L: L.DepthwiseConv1D(3, depth_multiplier=2, **FIRST), SEQ),
    "depthwise2d_same_strided": (lambda L: L.DepthwiseConv2D(3, strides=2, padding="same", **FIRST), IMG),
    "separable1d": (lambda L: L.SeparableConv1D(4, 2, **FIRST), SEQ),
    "separable2d_multiplier": (lambda L: L.SeparableConv2D(3, 3, depth_multiplier=2, padding="same", **FIRST), IMG),
    "max2d": (lambda L: L.MaxPooling2D(**FIRST), IMG),
    "max2d_same_strides": (lambda L: L.MaxPool2D(3, strides=(2, 1), padding="same", **FIRST), IMG),
    "avg2d": (lambda L: L.AveragePooling2D(2, **FIRST), IMG),
    "avg2d_same": (lambda L: L.AvgPool2D(3, strides=2, padding="same", **FIRST), IMG),
    "gavg2d": (lambda L: L.GlobalAveragePooling2D(**FIRST), IMG),
    "gavg2d_keepdims": (lambda L: L.GlobalAveragePooling2D(keepdims=True, **FIRST), IMG),
}


@pytest.mark.parametrize("key", sorted(CASES))
def test_channels_first_layer_matches_keras(key):
    make, x = CASES[key]
    check_layer(lambda tf: make(tf.keras.layers), x, rtol=1e-4, atol=1e-5)


SHAPES = {
    "conv2d": (lambda L: L.Conv2D(3, 3, **FIRST), (None, 4, 7, 6)),
    "conv1d_transpose": (lambda L: L.Conv1DTranspose(2, 3, strides=2, **FIRST), (None, 3, 7)),
    "depthwise2d": (lambda L: L.DepthwiseConv2D(2, depth_multiplier=3, **FIRST), (None, 4, 7, 6)),
    "separable1d_unknown": (lambda L: L.SeparableConv1D(4, 2, padding="same", **FIRST), (None, 3, None)),
    "max2d": (lambda L: L.MaxPooling2D(**FIRST), (None, 4, 7, 6)),
    "gavg2d": (lambda L: L.GlobalAveragePooling2D(**FIRST), (2, 4, 7, 6)),
}


@pytest.mark.parametrize("key", sorted(SHAPES))
def test_channels_first_output_shape_matches_keras(key):
    make, shape = SHAPES[key]

    def built(tf):  # gradkit.tf finds most layers' output shapes from the built layer
        layer = make(tf.keras.layers)
        layer.build(shape)
        return layer

    check_output_shape(built, shape)


def test_the_bias_is_added_per_channel_when_the_last_axis_has_as_many_entries():
    # Keras 3 on TensorFlow adds a channels_first bias along the last axis when that axis has
    # `filters` entries (its `ops.add` takes such a bias for an NHWC one); on JAX it adds it per
    # channel, as documented. gradkit adds it per channel: checked by hand here.
    x = SEQ  # width 7, so a 3-wide 'valid' kernel leaves 5 steps: as many as the 5 filters
    layer = gtf.keras.layers.Conv1D(5, 3, data_format="channels_first")
    layer.build(x.shape)
    kernel = np.random.RandomState(2).randn(3, 3, 5).astype(np.float32)
    bias = np.random.RandomState(3).randn(5).astype(np.float32)
    layer.set_weights([kernel, bias])
    windows = np.stack([x[:, :, k : k + 5] for k in range(3)], axis=-1)  # (batch, channels, step, k)
    want = np.einsum("bctk,kco->bot", windows, kernel) + bias[None, :, None]
    np.testing.assert_allclose(layer(x).numpy(), want, rtol=1e-5, atol=1e-5)


def test_channels_first_and_last_share_weights_and_values():
    # Independent of TensorFlow: the same kernel on the transposed input gives the transposed output.
    last = gtf.keras.layers.Conv2D(3, 2, strides=2, padding="same")
    first = gtf.keras.layers.Conv2D(3, 2, strides=2, padding="same", data_format="channels_first")
    y_last = last(np.moveaxis(IMG, 1, -1))
    first.build(IMG.shape)
    first.set_weights(last.get_weights())
    np.testing.assert_allclose(first(IMG).numpy(), np.moveaxis(y_last.numpy(), -1, 1), rtol=1e-5, atol=1e-6)


def test_channels_first_in_a_sequential_model_trains_like_keras():
    import tensorflow as tf

    def build(lib):
        L = lib.keras.layers
        return lib.keras.Sequential(
            [
                lib.keras.Input((4, 7, 6)),
                L.Conv2D(3, 3, padding="same", activation="relu", **FIRST),
                L.MaxPooling2D(**FIRST),
                L.SeparableConv2D(5, 2, **FIRST),  # (batch, 5, 2, 2): Keras on TF adds the bias right (see above)
                L.GlobalAveragePooling2D(**FIRST),
                L.Dense(1),
            ]
        )

    theirs, ours = build(tf), build(gtf)
    ours.set_weights(theirs.get_weights())
    y = np.random.RandomState(3).randn(2, 1).astype(np.float32)
    for model in (theirs, ours):
        model.compile(optimizer="sgd", loss="mse")
    h_theirs = theirs.fit(IMG, y, epochs=3, batch_size=2, verbose=0, shuffle=False).history["loss"]
    h_ours = ours.fit(IMG, y, epochs=3, batch_size=2, verbose=0, shuffle=False).history["loss"]
    np.testing.assert_allclose(h_ours, h_theirs, rtol=1e-4)
    for a, b in zip(ours.get_weights(), theirs.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)


def test_channels_first_input_of_the_wrong_size_is_refused_clearly():
    layer = gtf.keras.layers.Conv2D(2, 3, data_format="channels_first")
    layer(IMG)
    with pytest.raises(ValueError, match=r"\[gradkit\].*4 channels \(axis 1, channels_first\)"):
        layer(np.moveaxis(IMG, 1, -1))
    with pytest.raises(ValueError, match=r"\[gradkit\].*\(batch, channels, height, width\)"):
        gtf.keras.layers.MaxPooling2D(data_format="channels_first")(SEQ)
    with pytest.raises(ValueError, match=r"\[gradkit\].*'channels_last' or 'channels_first'"):
        gtf.keras.layers.Conv2D(2, 3, data_format="nchw")
