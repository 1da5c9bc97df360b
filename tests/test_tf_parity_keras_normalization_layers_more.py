"""gradkit.tf's Keras GroupNormalization, UnitNormalization and RMSNormalization against real
tf.keras 3: outputs, gradients w.r.t. the input and the weights, weights' names and shapes,
configs (before and after building), compute_output_shape and refusals."""

import numpy as np
import pytest

pytest.importorskip("tensorflow")
from _keras_layer_parity import check_config, check_layer, check_output_shape, tf_real  # noqa: E402

import gradkit.tf as gtf  # noqa: E402

_rs = np.random.RandomState(0)
X = _rs.randn(2, 3, 8).astype(np.float32)
IMG = _rs.randn(2, 6, 3, 4).astype(np.float32)

CASES = {
    "group": (lambda L: L.GroupNormalization(groups=4), X),
    "group_instance": (lambda L: L.GroupNormalization(groups=-1, epsilon=0.1), X),
    "group_one": (lambda L: L.GroupNormalization(groups=1), X),
    "group_rank2": (lambda L: L.GroupNormalization(groups=4), X[:, 0]),
    "group_channels_first": (lambda L: L.GroupNormalization(groups=3, axis=1), IMG),
    "group_axis_minus2": (lambda L: L.GroupNormalization(groups=3, axis=-2), X),
    "group_no_center": (lambda L: L.GroupNormalization(groups=2, center=False), X),
    "group_no_scale": (lambda L: L.GroupNormalization(groups=2, scale=False), X),
    "group_neither": (lambda L: L.GroupNormalization(groups=2, center=False, scale=False), X),
    "group_initializers": (
        lambda L: L.GroupNormalization(groups=2, beta_initializer="ones", gamma_initializer="zeros"),
        X,
    ),
    "unit": (lambda L: L.UnitNormalization(), X),
    "unit_axes": (lambda L: L.UnitNormalization(axis=[1, 2]), IMG),
    "unit_zero": (lambda L: L.UnitNormalization(axis=1), np.zeros((2, 3), np.float32)),
    "rms": (lambda L: L.RMSNormalization(), X),
    "rms_axes": (lambda L: L.RMSNormalization(axis=[2, 3], epsilon=1e-3), IMG),
    "rms_axis1": (lambda L: L.RMSNormalization(axis=1), _rs.randn(2, 5).astype(np.float32)),
}


@pytest.mark.parametrize("key", sorted(CASES))
def test_layer_matches_keras(key):
    make, x = CASES[key]
    check_layer(lambda tf: make(tf.keras.layers), x)


@pytest.mark.parametrize("key", ["group", "unit_axes", "rms_axes"])
def test_unbuilt_configs_match_keras(key):
    make = CASES[key][0]
    check_config(make(gtf.keras.layers), make(tf_real.keras.layers))


@pytest.mark.parametrize(
    "make, shape",
    [
        (lambda L: L.GroupNormalization(groups=2), (None, 3, 8)),
        (lambda L: L.UnitNormalization(axis=[1, 2]), (None, 6, 3, 4)),
        (lambda L: L.RMSNormalization(), (None, 8)),
    ],
    ids=["group", "unit", "rms"],
)
def test_compute_output_shape_matches_keras(make, shape):
    check_output_shape(lambda tf: make(tf.keras.layers), shape)


REFUSED = {
    "groups_zero": lambda tf: tf.keras.layers.GroupNormalization(groups=0),
    "groups_float": lambda tf: tf.keras.layers.GroupNormalization(groups=2.0),
    "groups_not_dividing": lambda tf: tf.keras.layers.GroupNormalization(groups=3)(tf.constant(X)),
    "groups_too_many": lambda tf: tf.keras.layers.GroupNormalization(groups=16)(tf.constant(X)),
    "unit_axis_type": lambda tf: tf.keras.layers.UnitNormalization(axis="a"),
    "unit_axis_bounds": lambda tf: tf.keras.layers.UnitNormalization(axis=3).compute_output_shape((2, 3)),
    "rms_axis_bounds": lambda tf: tf.keras.layers.RMSNormalization(axis=4).compute_output_shape((2, 3)),
}


@pytest.mark.parametrize("key", sorted(REFUSED))
def test_refusals_match_keras(key):
    with pytest.raises((ValueError, TypeError)) as theirs:
        REFUSED[key](tf_real)
    builtin = ValueError if isinstance(theirs.value, ValueError) else TypeError
    with pytest.raises(builtin, match=r"\[gradkit\]"):
        REFUSED[key](gtf)
