"""``tf.keras.layers.Discretization``: bucket ids by ``bin_boundaries`` (or their encodings), and
``adapt``'s approximate quantiles as Keras computes them. Oracles: ``np.digitize``, exact quantiles
where the data is small enough for the summary to keep every value, and Keras."""

import numpy as np
import pytest

import gradkit.tf as gtf

keras = gtf.keras
rs = np.random.RandomState(0)
DATA = rs.randn(1000, 3).astype(np.float32)
X = rs.randn(4, 3).astype(np.float32)


def test_buckets_are_numpys_digitize():
    boundaries = [-0.5, 0.0, 1.0]
    out = keras.layers.Discretization(bin_boundaries=boundaries)(X)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out.numpy(), np.digitize(X, boundaries))
    one_hot = keras.layers.Discretization(bin_boundaries=boundaries, output_mode="one_hot")(X[:, :1]).numpy()
    np.testing.assert_array_equal(one_hot, np.eye(4)[np.digitize(X[:, 0], boundaries)])


def test_adapt_on_few_values_gives_their_quantiles():
    # 8 values, epsilon 0.01: the summary keeps each value with weight 1, and 4 bins cut its
    # cumulative weights at 1/4, 2/4, 3/4: interpolated between the sorted values.
    values = np.array([5.0, 1.0, 7.0, 3.0, 2.0, 8.0, 4.0, 6.0], np.float32)
    layer = keras.layers.Discretization(num_bins=4)
    layer.adapt(values)
    np.testing.assert_allclose(layer.bin_boundaries, np.interp([0.25, 0.5, 0.75], np.arange(1, 9) / 8, np.sort(values)))


def test_adapted_layer_round_trips_its_config():
    layer = keras.layers.Discretization(num_bins=4)
    layer.adapt(gtf.data.Dataset.from_tensor_slices(DATA).batch(100))
    again = keras.layers.Discretization.from_config(layer.get_config())
    np.testing.assert_array_equal(again(X).numpy(), layer(X).numpy())


@pytest.mark.parametrize("num_bins,epsilon", [(4, 0.01), (5, 0.1)])
def test_matches_keras(num_bins, epsilon):
    pytest.importorskip("tensorflow")
    import keras as real_keras

    theirs = real_keras.layers.Discretization(num_bins=num_bins, epsilon=epsilon)
    theirs.adapt(DATA)
    ours = keras.layers.Discretization(num_bins=num_bins, epsilon=epsilon)
    ours.adapt(DATA)
    np.testing.assert_allclose(ours.bin_boundaries, theirs.bin_boundaries, rtol=1e-6)
    for mode in ("int", "one_hot", "multi_hot", "count"):
        want = np.asarray(real_keras.layers.Discretization(bin_boundaries=theirs.bin_boundaries, output_mode=mode)(X))
        got = keras.layers.Discretization(bin_boundaries=ours.bin_boundaries, output_mode=mode)(X).numpy()
        np.testing.assert_array_equal(got, want)


def test_config_and_arguments_are_keras():
    layer = keras.layers.Discretization(bin_boundaries=[0.0, 1.0], name="buckets")
    assert layer.get_config() == {
        "bin_boundaries": [0.0, 1.0],
        "num_bins": None,
        "epsilon": 0.01,
        "output_mode": "int",
        "sparse": False,
        "name": "buckets",
        "dtype": "float32",
    }
    with pytest.raises(TypeError, match="output_dtype"):
        keras.layers.Discretization(bin_boundaries=[0.0], output_dtype="float32")  # Keras takes no such keyword


def test_unsorted_boundaries_are_refused_and_repeated_ones_taken():
    from gradkit import GradkitError

    with pytest.raises(GradkitError, match="not sorted"):
        gtf.keras.layers.Discretization(bin_boundaries=[1.0, 0.0, 2.0])
    x = np.array([[0.0, 0.5, 1.0]], np.float32)
    got = gtf.keras.layers.Discretization(bin_boundaries=[0.0, 0.0, 1.0])(x).numpy()
    np.testing.assert_array_equal(got, np.digitize(x, [0.0, 0.0, 1.0]))
