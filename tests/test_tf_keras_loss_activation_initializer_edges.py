"""Keras arguments at their edges: ``CategoricalFocalCrossentropy(alpha=[...])`` weighs each
class, ``activations.softmax``/``log_softmax`` over a tuple of axes, and ``RandomUniform`` of an
integer dtype draws integers in [minval, maxval). Oracles: NumPy formulas, counts, and Keras."""

import numpy as np
import pytest

import gradkit.tf as gtf

keras = gtf.keras
Y_TRUE = np.eye(3, dtype=np.float32)[[0, 2, 1, 2]]
Y_PRED = np.array([[0.7, 0.2, 0.1], [0.1, 0.3, 0.6], [0.2, 0.5, 0.3], [0.3, 0.3, 0.4]], np.float32)
ALPHA = [0.2, 0.3, 0.5]


def test_focal_crossentropy_takes_one_alpha_per_class():
    # sum over classes of alpha_c (1 - p_c)^2 * (-y_c log p_c), then the batch mean.
    per_example = np.sum(np.array(ALPHA) * (1 - Y_PRED) ** 2 * (-Y_TRUE * np.log(Y_PRED)), axis=-1)
    got = keras.losses.CategoricalFocalCrossentropy(alpha=ALPHA)(Y_TRUE, Y_PRED)
    np.testing.assert_allclose(float(got), per_example.mean(), rtol=1e-5)
    function = keras.losses.categorical_focal_crossentropy(Y_TRUE, Y_PRED, alpha=ALPHA)
    np.testing.assert_allclose(function.numpy(), per_example, rtol=1e-5)


def test_softmax_over_a_tuple_of_axes():
    x = np.random.RandomState(0).randn(2, 3, 4).astype(np.float32)
    e = np.exp(x - x.max(axis=(1, 2), keepdims=True))
    want = e / e.sum(axis=(1, 2), keepdims=True)
    np.testing.assert_allclose(keras.activations.softmax(x, axis=(1, 2)).numpy(), want, rtol=1e-5)
    np.testing.assert_allclose(
        keras.activations.log_softmax(x, axis=(1, 2)).numpy(), np.log(want), rtol=1e-5, atol=1e-6
    )


@pytest.mark.parametrize("bounds", [(-3, -1), (-2, 2)])
def test_integer_random_uniform_draws_each_integer_alike(bounds):
    values = keras.initializers.RandomUniform(*bounds, seed=1)((20000,), dtype="int32").numpy()
    counts = np.bincount(values - bounds[0])
    assert len(counts) == bounds[1] - bounds[0]  # minval .. maxval - 1
    expected = len(values) / len(counts)
    assert np.all(np.abs(counts - expected) < 5 * np.sqrt(expected)), counts


def test_matches_keras():
    pytest.importorskip("tensorflow")
    import keras as real_keras

    want = real_keras.losses.CategoricalFocalCrossentropy(alpha=ALPHA)(Y_TRUE, Y_PRED)
    got = keras.losses.CategoricalFocalCrossentropy(alpha=ALPHA)(Y_TRUE, Y_PRED)
    np.testing.assert_allclose(float(got), float(want), rtol=1e-5)
