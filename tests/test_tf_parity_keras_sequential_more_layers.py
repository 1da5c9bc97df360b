"""A tf.keras.Sequential of single-input layers from their own modules (reshaping, pooling,
noise, activation and normalization layers) against real tf.keras 3: its config read back by
both libraries (keras.layers.deserialize finds them), and a compiled training step's outputs
and gradients with the same weights."""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")

import gradkit.tf as gtf  # noqa: E402


def _model(tf):
    L = tf.keras.layers
    return tf.keras.Sequential(
        [
            tf.keras.Input((6, 4)),
            L.Permute((2, 1)),
            L.ZeroPadding1D(1),
            L.MaxPooling1D(2),
            L.UpSampling1D(2),
            L.Cropping1D((1, 0)),
            L.GaussianNoise(0.1),
            L.PReLU(),
            L.GroupNormalization(groups=2),
            L.SpatialDropout1D(0.3),
            L.ELU(),
            L.GlobalAveragePooling1D(),
            L.RepeatVector(2),
            L.RMSNormalization(),
            L.GlobalMaxPooling1D(),
            L.Dense(2),
        ],
        name="s",
    )


def _comparable(config):
    """The config with its build shape as a tuple (a list once through JSON)."""
    config = dict(config)
    config["build_input_shape"] = tuple(config["build_input_shape"])
    return config


def test_sequential_config_matches_keras_both_ways():
    ours, theirs = _model(gtf).get_config(), _model(tf_real).get_config()
    names = [layer["config"]["name"] for layer in theirs["layers"]]
    for config in (ours, theirs):  # the default names' counters differ between the two runs
        for layer, name in zip(config["layers"], names):
            layer["config"]["name"] = name
    assert _comparable(ours) == _comparable(theirs)
    copy = gtf.keras.Sequential.from_config(theirs)
    assert [type(layer).__name__ for layer in copy.layers] == [type(layer).__name__ for layer in _model(gtf).layers]
    assert tf_real.keras.Sequential.from_config(ours).count_params() == copy.count_params()


def test_compiled_training_step_matches_keras():
    x = np.random.RandomState(0).randn(3, 6, 4).astype(np.float32)

    def run(tf, weights):
        model = _model(tf)
        if weights is None:
            rs = np.random.RandomState(1)
            weights = [rs.randn(*w.shape).astype(np.float32) for w in model.get_weights()]
        model.set_weights(weights)

        @tf.function
        def step(x):
            with tf.GradientTape() as tape:
                y = model(x, training=False)
                loss = tf.reduce_sum(y * y)
            return y, tape.gradient(loss, model.trainable_variables)

        y, grads = step(tf.constant(x))
        return weights, np.asarray(y), [np.asarray(g) for g in grads]

    weights, y_tf, grads_tf = run(tf_real, None)
    _, y_gk, grads_gk = run(gtf, weights)
    np.testing.assert_allclose(y_gk, y_tf, rtol=1e-4, atol=1e-5)
    assert len(grads_gk) == len(grads_tf)
    for g, w in zip(grads_gk, grads_tf):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)
