"""gradkit.tf's DepthwiseConv1D/2D and SeparableConv1D/2D against real TensorFlow 2.21 / Keras 3:
the same weights in both; outputs, gradients w.r.t. the input and every weight, the weights'
names and shapes, get_config / from_config both ways and compute_output_shape compared."""

import re

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
from test_tf_parity_keras_layers import check_layer  # noqa: E402

import gradkit.tf as gtf  # noqa: E402

_rs = np.random.RandomState(0)
_IMAGES = _rs.randn(2, 7, 6, 3).astype(np.float32)
_SEQUENCES = _rs.randn(2, 9, 3).astype(np.float32)

_OPTIONS = [
    {"kernel_size": 3},
    {"kernel_size": 2, "strides": 2, "padding": "same", "depth_multiplier": 2},
    {"kernel_size": 3, "dilation_rate": 2, "padding": "same", "activation": "relu"},
    {"kernel_size": 2, "dilation_rate": 2, "strides": 2, "padding": "same"},  # Keras' stride-dilation decomposition
    {"kernel_size": 2, "dilation_rate": 2, "strides": 3, "use_bias": False, "depth_multiplier": 3},
]


@pytest.mark.parametrize("options", _OPTIONS, ids=str)
@pytest.mark.parametrize("rank", [1, 2])
def test_depthwise_conv_matches_keras(rank, options):
    x = _SEQUENCES if rank == 1 else _IMAGES
    check_layer(lambda tf: getattr(tf.keras.layers, f"DepthwiseConv{rank}D")(name="dw", **options), x)


@pytest.mark.parametrize("options", _OPTIONS, ids=str)
@pytest.mark.parametrize("rank", [1, 2])
def test_separable_conv_matches_keras(rank, options):
    x = _SEQUENCES if rank == 1 else _IMAGES
    check_layer(lambda tf: getattr(tf.keras.layers, f"SeparableConv{rank}D")(4, name="sep", **options), x)


def _configured(tf):
    layers = tf.keras.layers
    return {
        "DepthwiseConv1D": layers.DepthwiseConv1D(3, strides=2, depth_multiplier=2, activation="tanh", name="a"),
        "DepthwiseConv2D": layers.DepthwiseConv2D((2, 3), padding="same", use_bias=False, name="b"),
        "SeparableConv1D": layers.SeparableConv1D(5, 2, dilation_rate=2, name="c"),
        "SeparableConv2D": layers.SeparableConv2D(
            3, 3, strides=(1, 2), depth_multiplier=2, pointwise_initializer="he_normal", name="d"
        ),
    }


@pytest.mark.parametrize("key", sorted(_configured(gtf)))
def test_configs_match_keras_both_ways(key):
    ours, theirs = _configured(gtf)[key], _configured(tf_real)[key]
    assert ours.get_config() == theirs.get_config()
    assert type(ours).from_config(theirs.get_config()).get_config() == theirs.get_config()
    assert type(theirs).from_config(ours.get_config()).get_config() == theirs.get_config()


@pytest.mark.parametrize("key", sorted(_configured(gtf)))
@pytest.mark.parametrize("batch", [2, None])
def test_compute_output_shape_matches_keras(key, batch):
    spatial = (9,) if "1D" in key else (7, 6)
    shape = (batch, *spatial, 3)
    assert tuple(_configured(gtf)[key].compute_output_shape(shape)) == tuple(
        _configured(tf_real)[key].compute_output_shape(shape)
    )


def test_names_and_aliases_match_keras():
    def names(tf):
        layers = tf.keras.layers
        made = [layers.DepthwiseConv1D(1), layers.DepthwiseConv2D(1), layers.SeparableConv1D(1, 1)]
        made.append(layers.SeparableConv2D(1, 1))
        aliases = [layers.SeparableConvolution1D is layers.SeparableConv1D]
        aliases.append(layers.SeparableConvolution2D is layers.SeparableConv2D)
        return [re.sub(r"_\d+$", "", layer.name) for layer in made], aliases

    assert names(gtf) == names(tf_real)


def test_a_depthwise_layer_refuses_the_separable_arguments_as_keras():
    with pytest.raises((TypeError, ValueError)):
        tf_real.keras.layers.DepthwiseConv2D(3, filters=4)
    with pytest.raises(ValueError, match=r"\[gradkit\].*filters"):
        gtf.keras.layers.DepthwiseConv2D(3, filters=4)
