"""``Lambda`` and Keras masks: a function with a ``mask`` parameter gets the incoming mask (from
``Masking`` or ``mask=``), and ``mask=`` (a function ``mask(inputs, mask)`` or None) decides the
output's mask. Oracle: the mask written out by hand, and Keras where installed."""

import warnings

import numpy as np
import pytest

import gradkit.tf as gtf

X = np.array([[[1.0], [0.0], [2.0]]], np.float32)
MASK = np.array([[True, False, True]])


def keep(inputs, mask):
    return mask


def _outputs(keras):
    def add_where_masked(t, mask=None):
        return t + 100.0 if mask is None else t + 1.0

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # Keras' "destroys the mask" warning, asserted elsewhere
        from_masking = keras.layers.Lambda(add_where_masked)(keras.layers.Masking()(X))
        given = keras.layers.Lambda(add_where_masked)(X, mask=MASK)
        inputs = keras.Input((3, 1))
        kept = keras.layers.Lambda(lambda t: t * 2, mask=keep)(keras.layers.Masking()(inputs))
        model = keras.Model(inputs, keras.layers.Lambda(add_where_masked)(kept))
        dropped = keras.layers.Lambda(lambda t: t * 2)(keras.layers.Masking()(inputs))
        model_without = keras.Model(inputs, keras.layers.Lambda(add_where_masked)(dropped))
        return [np.asarray(v) for v in (from_masking, given, model(X), model_without(X))]


def test_the_function_gets_the_mask_and_mask_decides_the_output_mask():
    from_masking, given, kept, dropped = _outputs(gtf.keras)
    np.testing.assert_array_equal(from_masking.ravel(), X.ravel() + 1)
    np.testing.assert_array_equal(given.ravel(), X.ravel() + 1)
    np.testing.assert_array_equal(kept.ravel(), 2 * X.ravel() + 1)  # the mask kept by mask=keep
    np.testing.assert_array_equal(dropped.ravel(), 2 * X.ravel() + 100)  # no mask= : none passed on
    layer = gtf.keras.layers.Lambda(lambda t: t, mask=keep)
    assert layer.compute_mask(X, MASK) is MASK and gtf.keras.layers.Lambda(lambda t: t).compute_mask(X, MASK) is None


def test_matches_keras():
    keras = pytest.importorskip("keras")
    for got, want in zip(_outputs(gtf.keras), _outputs(keras)):
        np.testing.assert_array_equal(got, want)


def test_a_named_mask_function_round_trips_its_config():
    layer = gtf.keras.layers.Lambda(np.negative, mask=keep)
    config = layer.get_config()
    assert config["mask"]["config"] == "keep"
    again = gtf.keras.layers.Lambda.from_config(config, custom_objects={"negative": np.negative, "keep": keep})
    assert again.mask is keep
