"""Two augmentation layers made with one ``seed=`` transform alike at every call (each owns a
SeedGenerator, as in Keras), eagerly and inside a ``tf.function``, while successive calls differ:
an image and its segmentation mask stay aligned. Oracle: the property itself, and Keras where
TensorFlow is installed."""

from __future__ import annotations

import numpy as np
import pytest

import gradkit.tf as gtf

IMAGES = np.random.default_rng(0).uniform(0, 255, (4, 8, 8, 3)).astype("float32")

LAYERS = {
    "RandomFlip": lambda k, s: k.layers.RandomFlip(seed=s),
    "RandomRotation": lambda k, s: k.layers.RandomRotation(0.3, seed=s),
    "RandomZoom": lambda k, s: k.layers.RandomZoom(0.3, seed=s),
    "RandomContrast": lambda k, s: k.layers.RandomContrast(0.5, seed=s),
}


def _pairs(tf, name, compiled):
    image_layer, mask_layer = LAYERS[name](tf.keras, 42), LAYERS[name](tf.keras, 42)

    def both(x):
        return image_layer(x, training=True), mask_layer(x, training=True)

    step = tf.function(both) if compiled else both
    return [tuple(np.asarray(y) for y in step(tf.constant(IMAGES))) for _ in range(3)]


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize("name", sorted(LAYERS))
def test_layers_with_one_seed_transform_alike_and_calls_differ(name, compiled):
    calls = _pairs(gtf, name, compiled)
    for image, mask in calls:
        np.testing.assert_array_equal(image, mask)
    assert not all(np.array_equal(calls[0][0], c[0]) for c in calls[1:])


def test_keras_transforms_alike_too():
    tf = pytest.importorskip("tensorflow")
    for name in LAYERS:
        for image, mask in _pairs(tf, name, compiled=False):
            np.testing.assert_array_equal(image, mask)
