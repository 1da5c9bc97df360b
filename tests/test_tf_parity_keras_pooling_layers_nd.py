"""gradkit.tf's Keras 1-D/3-D and global pooling layers (and their aliases) against real
tf.keras 3: outputs, input gradients (ties included), configs, compute_output_shape, names and
the errors for arguments and inputs Keras refuses."""

import re

import numpy as np
import pytest

pytest.importorskip("tensorflow")
from _keras_layer_parity import check_layer, check_output_shape, tf_real  # noqa: E402

import gradkit.tf as gtf  # noqa: E402

_rs = np.random.RandomState(0)
SEQ = _rs.randn(2, 7, 3).astype(np.float32)
IMG = _rs.randn(2, 5, 4, 3).astype(np.float32)
VOL = _rs.randn(2, 5, 4, 6, 2).astype(np.float32)
TIED_SEQ = np.round(SEQ)  # windows with tied maxima
TIED_VOL = np.round(VOL)

CASES = {
    "max1d": (lambda L: L.MaxPooling1D(), SEQ),
    "max1d_same_strides": (lambda L: L.MaxPool1D(3, strides=2, padding="same"), SEQ),
    "max1d_first": (lambda L: L.MaxPooling1D(2, data_format="channels_first"), SEQ),
    "max1d_ties": (lambda L: L.MaxPooling1D(3, strides=1), TIED_SEQ),
    "avg1d": (lambda L: L.AveragePooling1D(2), SEQ),
    "avg1d_same": (lambda L: L.AvgPool1D(3, strides=2, padding="SAME"), SEQ),
    "avg1d_first_same": (lambda L: L.AveragePooling1D(2, padding="same", data_format="channels_first"), SEQ),
    "max3d": (lambda L: L.MaxPooling3D(), VOL),
    "max3d_rect_same": (lambda L: L.MaxPool3D((2, 3, 2), strides=(1, 2, 3), padding="same"), VOL),
    "max3d_first": (lambda L: L.MaxPooling3D(2, data_format="channels_first"), VOL),
    "max3d_ties": (lambda L: L.MaxPooling3D(2, strides=1), TIED_VOL),
    "avg3d": (lambda L: L.AveragePooling3D(2), VOL),
    "avg3d_same_first": (lambda L: L.AvgPool3D(3, strides=2, padding="same", data_format="channels_first"), VOL),
    "gmax1d": (lambda L: L.GlobalMaxPooling1D(), SEQ),
    "gmax1d_ties_keepdims": (lambda L: L.GlobalMaxPool1D(keepdims=True), TIED_SEQ),
    "gmax1d_first": (lambda L: L.GlobalMaxPooling1D(data_format="channels_first"), SEQ),
    "gmax2d": (lambda L: L.GlobalMaxPooling2D(), IMG),
    "gmax2d_first_keepdims": (lambda L: L.GlobalMaxPool2D(data_format="channels_first", keepdims=True), IMG),
    "gmax3d": (lambda L: L.GlobalMaxPooling3D(), VOL),
    "gmax3d_ties_first": (lambda L: L.GlobalMaxPool3D(data_format="channels_first"), TIED_VOL),
    "gavg1d": (lambda L: L.GlobalAveragePooling1D(), SEQ),
    "gavg1d_first_keepdims": (lambda L: L.GlobalAvgPool1D(data_format="channels_first", keepdims=True), SEQ),
    "gavg2d_alias": (lambda L: L.GlobalAvgPool2D(), IMG),
    "gavg3d": (lambda L: L.GlobalAveragePooling3D(keepdims=True), VOL),
    "gavg3d_first": (lambda L: L.GlobalAvgPool3D(data_format="channels_first"), VOL),
}


@pytest.mark.parametrize("key", sorted(CASES))
def test_layer_matches_keras(key):
    make, x = CASES[key]
    check_layer(lambda tf: make(tf.keras.layers), x)


@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
def test_masked_global_average_pooling1d_matches_keras(data_format):
    mask = np.array([[1, 1, 0, 1, 0, 0, 1], [0, 1, 1, 1, 1, 1, 0]], bool)
    if data_format == "channels_first":  # SEQ is then (batch, 7 channels, 3 steps)
        mask = mask[:, :3]
    check_layer(
        lambda tf: tf.keras.layers.GlobalAveragePooling1D(data_format=data_format, name="g"),
        SEQ,
        call_kwargs={"mask": mask},
    )


SHAPES = {
    "max1d": (lambda L: L.MaxPooling1D(3, strides=2), (None, 7, 3)),
    "max1d_same_unknown": (lambda L: L.MaxPooling1D(3, padding="same"), (None, None, 3)),
    "avg3d_first": (lambda L: L.AveragePooling3D(2, data_format="channels_first"), (None, 2, 5, 4, 6)),
    "gmax2d": (lambda L: L.GlobalMaxPooling2D(), (None, 5, 4, 3)),
    "gavg1d_keepdims_first": (
        lambda L: L.GlobalAveragePooling1D(data_format="channels_first", keepdims=True),
        (None, 3, 7),
    ),
    "gmax3d_keepdims": (lambda L: L.GlobalMaxPooling3D(keepdims=True), (2, 5, 4, 6, 2)),
}


@pytest.mark.parametrize("key", sorted(SHAPES))
def test_compute_output_shape_matches_keras(key):
    make, shape = SHAPES[key]
    check_output_shape(lambda tf: make(tf.keras.layers), shape)


REFUSED = {
    "pool_size_zero": lambda tf: tf.keras.layers.MaxPooling1D(0),
    "pool_size_length": lambda tf: tf.keras.layers.MaxPooling3D((2, 2)),
    "data_format": lambda tf: tf.keras.layers.GlobalMaxPooling1D(data_format="NWC"),
    "rank": lambda tf: tf.keras.layers.MaxPooling1D()(tf.constant(IMG)),
    "global_rank": lambda tf: tf.keras.layers.GlobalAveragePooling3D()(tf.constant(IMG)),
    "window_too_large": lambda tf: tf.keras.layers.MaxPooling1D(9).compute_output_shape((2, 7, 3)),
}


@pytest.mark.parametrize("key", sorted(REFUSED))
def test_refusals_match_keras(key):
    program = REFUSED[key]
    with pytest.raises((ValueError, TypeError)) as theirs:
        program(tf_real)
    builtin = ValueError if isinstance(theirs.value, ValueError) else TypeError
    with pytest.raises(builtin, match=r"\[gradkit\]"):
        program(gtf)


def test_default_names_are_keras():
    def names(tf):
        L = tf.keras.layers
        made = (L.MaxPool1D(), L.AvgPool3D(2), L.GlobalMaxPool2D(), L.GlobalAvgPool1D(), L.GlobalAveragePooling3D())
        return [re.sub(r"_\d+$", "", layer.name) for layer in made]

    assert names(gtf) == names(tf_real)


def test_every_pooling_name_is_in_the_namespace():
    from gradkit.tf._keras import pooling_layers_nd

    keras_names = {n for n in dir(tf_real.keras.layers) if not n.startswith("_")}
    defined = {n for n in dir(pooling_layers_nd) if not n.startswith("_")} & keras_names
    assert defined <= set(dir(gtf.keras.layers))
    aliases = {n for n in keras_names if re.fullmatch(r"(Global)?(Max|Avg)Pool[123]D", n)}
    assert aliases <= set(dir(gtf.keras.layers))
