"""gradkit.tf's Keras noise and regularization layers (GaussianNoise, GaussianDropout,
AlphaDropout, SpatialDropout1D/2D/3D, ActivityRegularization) against real tf.keras 3: exact
parity at inference (outputs, gradients, configs), the training draws' statistics and
structure compared with TensorFlow's, and the gradients through the noise drawn."""

import re

import numpy as np
import pytest

pytest.importorskip("tensorflow")
from _keras_layer_parity import check_layer, check_output_shape, tf_real  # noqa: E402

import gradkit.tf as gtf  # noqa: E402

_rs = np.random.RandomState(0)
X = _rs.randn(2, 3, 4).astype(np.float32)
IMG = _rs.randn(2, 3, 4, 5).astype(np.float32)
VOL = _rs.randn(2, 2, 3, 2, 4).astype(np.float32)
BIG = _rs.randn(40, 50, 20).astype(np.float32)  # 40000 entries for the statistics

INFERENCE = {
    "gaussian_noise": (lambda L: L.GaussianNoise(0.3, seed=1), X),
    "gaussian_dropout": (lambda L: L.GaussianDropout(0.4), X),
    "alpha_dropout": (lambda L: L.AlphaDropout(0.2, seed=5), X),
    "spatial_dropout1d": (lambda L: L.SpatialDropout1D(0.5), X),
    "spatial_dropout2d": (lambda L: L.SpatialDropout2D(0.5, data_format="channels_first", seed=2), IMG),
    "spatial_dropout3d": (lambda L: L.SpatialDropout3D(0.25), VOL),
    "activity_regularization": (lambda L: L.ActivityRegularization(l1=0.1, l2=0.01), X),
}


@pytest.mark.parametrize("key", sorted(INFERENCE))
def test_inference_is_the_identity_as_in_keras(key):
    make, x = INFERENCE[key]
    check_layer(lambda tf: make(tf.keras.layers), x)
    check_output_shape(lambda tf: make(tf.keras.layers), (None, *x.shape[1:]))


def _train(tf, make, x):
    layer = make(tf.keras.layers)
    xt = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(xt)
        y = layer(xt, training=True)
    return y.numpy(), tape.gradient(y, xt).numpy()


def test_gaussian_noise_in_training_matches_keras_statistics():
    for tf in (gtf, tf_real):
        y, g = _train(tf, lambda L: L.GaussianNoise(0.3), BIG)
        noise = y - BIG
        assert abs(noise.mean()) < 0.01 and abs(noise.std() - 0.3) < 0.01
        np.testing.assert_array_equal(g, np.ones_like(BIG))  # d(x + noise)/dx


def test_gaussian_dropout_in_training_matches_keras_statistics():
    stddev = np.sqrt(0.4 / 0.6)
    for tf in (gtf, tf_real):
        y, g = _train(tf, lambda L: L.GaussianDropout(0.4), BIG)
        noise = y / BIG
        assert abs(noise.mean() - 1) < 0.02 and abs(noise.std() - stddev) < 0.02
        np.testing.assert_allclose(g, noise, rtol=1e-4, atol=1e-4)  # the gradient is the noise drawn


@pytest.mark.parametrize("rate", [0.1, 0.5])
def test_alpha_dropout_in_training_matches_keras(rate):
    alpha_p = -1.6732632423543772 * 1.0507009873554805
    a = ((1 - rate) * (1 + rate * alpha_p**2)) ** -0.5
    b = -a * alpha_p * rate
    for tf in (gtf, tf_real):
        y, g = _train(tf, lambda L: L.AlphaDropout(rate), BIG)
        kept = np.isclose(g, a, rtol=1e-5)
        assert np.all(kept | (g == 0))
        assert abs(1 - kept.mean() - rate) < 0.01
        np.testing.assert_allclose(y[kept], a * BIG[kept] + b, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(y[~kept], a * alpha_p + b, rtol=1e-5)


@pytest.mark.parametrize(
    "make, x, channels",
    [
        (lambda L: L.SpatialDropout1D(0.5), _rs.randn(50, 6, 40).astype(np.float32), -1),
        (lambda L: L.SpatialDropout2D(0.3), _rs.randn(50, 3, 4, 40).astype(np.float32), -1),
        (
            lambda L: L.SpatialDropout2D(0.3, data_format="channels_first"),
            _rs.randn(50, 40, 3, 4).astype(np.float32),
            1,
        ),
        (
            lambda L: L.SpatialDropout3D(0.5, data_format="channels_first"),
            _rs.randn(50, 40, 2, 2, 2).astype(np.float32),
            1,
        ),
    ],
    ids=["1d", "2d", "2d_first", "3d_first"],
)
def test_spatial_dropout_drops_whole_channels_as_keras(make, x, channels):
    rate = make(gtf.keras.layers).rate
    for tf in (gtf, tf_real):
        y, g = _train(tf, make, x)
        spatial = tuple(a for a in range(1, x.ndim) if a != channels % x.ndim)
        kept = np.all(g != 0, axis=spatial)  # one decision per (example, channel)
        assert np.all(np.all(g == 0, axis=spatial) | kept)
        np.testing.assert_allclose(
            g[np.broadcast_to(np.expand_dims(kept, spatial), g.shape)], 1 / (1 - rate), rtol=1e-6
        )
        assert abs(1 - kept.mean() - rate) < 0.05


@pytest.mark.parametrize("rate", [0.0, 1.0])
def test_spatial_dropout_edge_rates_match_keras(rate):
    check_layer(lambda tf: tf.keras.layers.SpatialDropout1D(rate, name="s"), X, call_kwargs={"training": True})


def test_draws_differ_between_calls_and_inside_a_tf_function():
    layer = gtf.keras.layers.GaussianNoise(0.5, seed=3)
    first, second = (layer(gtf.constant(X), training=True).numpy() for _ in range(2))
    assert not np.array_equal(first, second)
    step = gtf.function(lambda x: layer(x, training=True))
    assert not np.array_equal(step(gtf.constant(X)).numpy(), step(gtf.constant(X)).numpy())


@pytest.mark.parametrize(
    "l1, l2, x", [(0.1, 0.0, X), (0.0, 0.02, X), (0.1, 0.02, X), (0.0, 0.0, X), (0.3, 0.1, np.float32(2.0))]
)
def test_activity_regularization_losses_and_gradients_match_keras(l1, l2, x):
    def run(tf):
        layer = tf.keras.layers.ActivityRegularization(l1=l1, l2=l2)
        xt = tf.constant(x)
        with tf.GradientTape() as tape:
            tape.watch(xt)
            y = layer(xt)
            loss = tf.add_n(layer.losses)
        grad = tape.gradient(loss, xt)
        return np.asarray(y), float(loss), None if grad is None else grad.numpy(), len(layer.losses)

    got, want = run(gtf), run(tf_real)
    np.testing.assert_allclose(got[0], want[0])
    np.testing.assert_allclose(got[1], want[1], rtol=1e-6)
    assert (got[2] is None) == (want[2] is None) == (l1 == l2 == 0)
    if want[2] is not None:
        np.testing.assert_allclose(got[2], want[2], rtol=1e-6)
    assert got[3] == want[3] == 1


REFUSED = {
    "noise_stddev": lambda tf: tf.keras.layers.GaussianNoise(1.5),
    "noise_stddev_type": lambda tf: tf.keras.layers.GaussianNoise("a"),
    "dropout_rate": lambda tf: tf.keras.layers.GaussianDropout(-0.1),
    "spatial_rate": lambda tf: tf.keras.layers.SpatialDropout2D(1.5),
    "spatial_trainable": lambda tf: tf.keras.layers.SpatialDropout1D(0.5, trainable=False),
    "spatial_rank": lambda tf: tf.keras.layers.SpatialDropout3D(0.5)(tf.constant(X), training=True),
}


@pytest.mark.parametrize("key", sorted(REFUSED))
def test_refusals_match_keras(key):
    with pytest.raises((ValueError, TypeError)) as theirs:
        REFUSED[key](tf_real)
    builtin = ValueError if isinstance(theirs.value, ValueError) else TypeError
    with pytest.raises(builtin):
        REFUSED[key](gtf)


def test_default_names_are_keras():
    def names(tf):
        L = tf.keras.layers
        made = (L.GaussianNoise(0.1), L.AlphaDropout(0.1), L.SpatialDropout2D(0.1), L.ActivityRegularization())
        return [re.sub(r"_\d+$", "", layer.name) for layer in made]

    assert names(gtf) == names(tf_real)


def test_alpha_dropout_refuses_a_rate_outside_zero_one():
    # tf.keras' (legacy) AlphaDropout does not check; its formula needs a rate in [0, 1).
    with pytest.raises(ValueError, match=r"\[gradkit\]"):
        gtf.keras.layers.AlphaDropout(2.0)
    with pytest.raises(ValueError, match=r"\[gradkit\].*rate below 1"):
        gtf.keras.layers.AlphaDropout(1.0)(gtf.constant(X), training=True)
