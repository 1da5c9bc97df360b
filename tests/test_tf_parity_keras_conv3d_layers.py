"""gradkit.tf's Conv3D and Conv3DTranspose (and Keras' Convolution* names) against real
TensorFlow 2.21 / Keras 3: the same weights in both; outputs, gradients w.r.t. the input and the
weights, weights' names and shapes, and get_config / from_config compared."""

import re

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
from test_tf_parity_keras_layers import check_layer  # noqa: E402

import gradkit.tf as gtf  # noqa: E402

_VOLUMES = np.random.RandomState(0).randn(2, 4, 5, 3, 4).astype(np.float32)


@pytest.mark.parametrize(
    "options",
    [
        {"kernel_size": 2},
        {"kernel_size": (2, 3, 1), "strides": (2, 1, 2), "padding": "same"},
        {"kernel_size": 2, "dilation_rate": 2, "padding": "same", "activation": "relu"},
        {"kernel_size": 2, "groups": 2, "use_bias": False},
    ],
    ids=str,
)
def test_conv3d_matches_keras(options):
    check_layer(lambda tf: tf.keras.layers.Conv3D(6, name="conv3d", **options), _VOLUMES)


@pytest.mark.parametrize(
    "options",
    [
        {"kernel_size": 2},
        {"kernel_size": (2, 3, 1), "strides": 2, "padding": "same"},
        {"kernel_size": 3, "strides": (2, 1, 2), "output_padding": (1, 0, 0), "activation": "tanh"},
        {"kernel_size": 2, "dilation_rate": 2, "use_bias": False},
    ],
    ids=str,
)
def test_conv3d_transpose_matches_keras(options):
    check_layer(lambda tf: tf.keras.layers.Conv3DTranspose(3, name="conv3d_transpose", **options), _VOLUMES)


def _configured(tf):
    layers = tf.keras.layers
    return [
        layers.Conv3D(4, (1, 2, 3), strides=(1, 2, 1), padding="same", activation="relu", groups=2, name="c"),
        layers.Conv3DTranspose(2, 3, strides=2, output_padding=1, use_bias=False, name="t"),
    ]


@pytest.mark.parametrize("index", [0, 1], ids=["Conv3D", "Conv3DTranspose"])
def test_configs_match_keras_both_ways(index):
    ours, theirs = _configured(gtf)[index], _configured(tf_real)[index]
    assert ours.get_config() == theirs.get_config()
    assert type(ours).from_config(theirs.get_config()).get_config() == theirs.get_config()
    assert type(theirs).from_config(ours.get_config()).get_config() == theirs.get_config()


@pytest.mark.parametrize(
    "alias, name",
    [
        ("Convolution1D", "Conv1D"),
        ("Convolution2D", "Conv2D"),
        ("Convolution3D", "Conv3D"),
        ("Convolution1DTranspose", "Conv1DTranspose"),
        ("Convolution2DTranspose", "Conv2DTranspose"),
        ("Convolution3DTranspose", "Conv3DTranspose"),
    ],
)
def test_convolution_names_are_the_same_classes_as_in_keras(alias, name):
    assert getattr(tf_real.keras.layers, alias) is getattr(tf_real.keras.layers, name)
    assert getattr(gtf.keras.layers, alias) is getattr(gtf.keras.layers, name)


def test_default_names_match_keras():
    def names(tf):
        made = [tf.keras.layers.Conv3D(1, 1).name, tf.keras.layers.Conv3DTranspose(1, 1).name]
        return [re.sub(r"_\d+$", "", name) for name in made]

    assert names(gtf) == names(tf_real) == ["conv3d", "conv3d_transpose"]


def test_conv3d_refuses_a_rank4_input_as_keras():
    x = np.zeros((1, 3, 3, 2), np.float32)
    with pytest.raises(ValueError):
        tf_real.keras.layers.Conv3D(2, 2)(x)
    with pytest.raises(ValueError, match=r"\[gradkit\].*rank-5"):
        gtf.keras.layers.Conv3D(2, 2)(x)
