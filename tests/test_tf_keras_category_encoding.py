"""``tf.keras.layers.CategoryEncoding``: one-hot, multi-hot and count vectors as Keras 3 makes
them, for ids of every rank, weighted counts, ids out of range. Oracles: NumPy encodings by hand,
and Keras."""

import numpy as np
import pytest

import gradkit.tf as gtf

keras = gtf.keras
INPUTS = [np.array([3, 2, 0, 1]), np.array([[3], [2]]), np.array([[0, 1], [1, 1]]), np.array([[[0, 1]]])]


def _one_hot(ids):
    return (np.asarray(ids)[..., None] == np.arange(4)).astype(np.float32)


def test_one_hot_encodes_each_id():
    layer = keras.layers.CategoryEncoding(num_tokens=4, output_mode="one_hot")
    np.testing.assert_array_equal(layer(np.array([3, 2])).numpy(), _one_hot([3, 2]))
    np.testing.assert_array_equal(layer(np.array([[3], [2]])).numpy(), _one_hot([3, 2]))  # the trailing 1 is the id's
    np.testing.assert_array_equal(layer(np.array([[0, 1]])).numpy(), _one_hot([[0, 1]]))
    np.testing.assert_array_equal(layer(np.array([5, -1])).numpy(), np.zeros((2, 4)))  # out of range: zeros


def test_multi_hot_and_count_encode_each_sample():
    ids = np.array([[0, 1, 1], [3, 3, 3]])
    multi = keras.layers.CategoryEncoding(num_tokens=4, output_mode="multi_hot")(ids).numpy()
    count = keras.layers.CategoryEncoding(num_tokens=4, output_mode="count")(ids).numpy()
    np.testing.assert_array_equal(multi, _one_hot(ids).max(axis=1))
    np.testing.assert_array_equal(count, _one_hot(ids).sum(axis=1))
    weights = np.array([[0.5, 1.0, 2.0], [1.0, 1.0, 0.25]], np.float32)
    weighted = keras.layers.CategoryEncoding(num_tokens=4, output_mode="count")(ids, count_weights=weights)
    np.testing.assert_allclose(weighted.numpy(), (_one_hot(ids) * weights[..., None]).sum(axis=1))
    with pytest.raises(gtf.errors.InvalidArgumentError, match=r"\[gradkit\].*non-negative"):
        keras.layers.CategoryEncoding(num_tokens=4, output_mode="count")(np.array([-1, 1]))


def test_in_a_model_and_its_config():
    inputs = keras.Input((2,), dtype="int32")
    model = keras.Model(inputs, keras.layers.CategoryEncoding(num_tokens=5)(inputs))
    assert model.output_shape == (None, 5)
    config = model.layers[1].get_config()
    assert (config["num_tokens"], config["output_mode"]) == (5, "multi_hot")
    rebuilt = keras.Model.from_config(model.get_config())
    np.testing.assert_array_equal(rebuilt(np.array([[1, 4]])).numpy(), [[0, 1, 0, 0, 1]])


@pytest.mark.parametrize("mode", ["one_hot", "multi_hot", "count"])
def test_matches_keras(mode):
    pytest.importorskip("tensorflow")
    import keras as real_keras

    for ids in INPUTS:
        want = np.asarray(real_keras.layers.CategoryEncoding(num_tokens=4, output_mode=mode)(ids))
        got = keras.layers.CategoryEncoding(num_tokens=4, output_mode=mode)(ids).numpy()
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)
