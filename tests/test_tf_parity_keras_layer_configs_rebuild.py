"""get_config / from_config of gradkit.tf.keras' convolution, pooling, recurrent, attention and
normalization layers against Keras 3: the same dict for the same arguments, key for key, before
and after the layer is built; Keras' own config rebuilds a gradkit.tf layer that computes the
same outputs and input gradients on Keras' weights; and gradkit.tf's config rebuilds a Keras
layer with the same config. Without TensorFlow, the configs round-trip."""

import numpy as np
import pytest

import gradkit.tf as gtf


def _cases(lib):
    L, init = lib.keras.layers, lib.keras.initializers
    return {
        "Conv1D_causal": (lambda: L.Conv1D(4, 3, padding="causal", name="l"), "1d"),
        "Conv1D_strided": (lambda: L.Conv1D(2, 2, strides=2, use_bias=False, activation="tanh", name="l"), "1d"),
        "Conv2D": (lambda: L.Conv2D(4, 3, strides=2, activation="relu", name="l"), "2d"),
        "Conv2D_groups": (
            lambda: L.Conv2D(
                4,
                (2, 3),
                padding="SAME",
                dilation_rate=(1, 2),
                groups=2,
                kernel_initializer=init.RandomNormal(stddev=0.1, seed=1),
                name="l",
            ),
            "2d",
        ),
        "Conv1DTranspose": (lambda: L.Conv1DTranspose(4, 3, name="l"), "1d"),
        "Conv2DTranspose": (
            lambda: L.Conv2DTranspose(3, 3, strides=2, output_padding=1, padding="same", name="l"),
            "2d",
        ),
        "MaxPooling2D": (lambda: L.MaxPooling2D(name="l"), "2d"),
        "MaxPooling2D_upper_padding": (lambda: L.MaxPooling2D([2, 3], strides=1, padding="SAME", name="l"), "2d"),
        "AveragePooling2D": (lambda: L.AveragePooling2D(3, strides=1, name="l"), "2d"),
        "GlobalAveragePooling2D": (lambda: L.GlobalAveragePooling2D(keepdims=True, name="l"), "2d"),
        "SimpleRNN": (lambda: L.SimpleRNN(3, activation=None, return_sequences=True, name="l"), "seq"),
        "LSTM": (
            lambda: L.LSTM(3, return_state=True, go_backwards=True, recurrent_activation="hard_sigmoid", name="l"),
            "seq",
        ),
        "LSTM_gelu": (lambda: L.LSTM(3, unit_forget_bias=False, activation="gelu", seed=4, name="l"), "seq"),
        "LSTM_swish": (lambda: L.LSTM(2, activation="swish", name="l"), "seq"),
        "GRU": (lambda: L.GRU(3, name="l"), "seq"),
        "GRU_reset_before": (lambda: L.GRU(3, reset_after=False, return_sequences=True, name="l"), "seq"),
        "MultiHeadAttention": (
            lambda: L.MultiHeadAttention(2, 3, value_dim=4, output_shape=5, seed=3, name="l"),
            "mha",
        ),
        "MultiHeadAttention_axes": (lambda: L.MultiHeadAttention(2, 3, attention_axes=[1], name="l"), "mha"),
        "BatchNormalization_negative_axis": (lambda: L.BatchNormalization(axis=-2, name="l"), "seq"),
        "LayerNormalization_axes": (lambda: L.LayerNormalization(axis=(1, -1), name="l"), "seq"),
        "Softmax_list_axis": (lambda: L.Softmax(axis=[1, 2], name="l"), "seq"),
    }


INPUTS = {
    "1d": np.sin(np.arange(2 * 6 * 4, dtype=np.float32)).reshape(2, 6, 4),
    "2d": np.cos(np.arange(2 * 6 * 6 * 4, dtype=np.float32)).reshape(2, 6, 6, 4),
    "seq": np.sin(0.3 * np.arange(2 * 3 * 4, dtype=np.float32)).reshape(2, 3, 4),
    "mha": np.cos(0.7 * np.arange(2 * 3 * 4, dtype=np.float32)).reshape(2, 3, 4),
}


@pytest.mark.parametrize("key", sorted(_cases(gtf)))
def test_config_round_trip(key):
    make, _ = _cases(gtf)[key]
    config = make().get_config()
    copy = type(make()).from_config(config)
    assert copy.get_config() == config


def _outputs_and_input_gradient(tf, layer, x):
    """The layer's outputs and d(sum of outputs * fixed weights)/dx."""
    xv = tf.Variable(x)
    with tf.GradientTape() as tape:
        out = layer(xv, xv) if isinstance(layer, tf.keras.layers.MultiHeadAttention) else layer(xv)
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
        loss = 0.0
        for y in outs:
            w = np.cos(np.arange(int(np.prod(y.shape)), dtype=np.float32)).reshape(tuple(y.shape))
            loss = loss + tf.reduce_sum(y * tf.constant(w))
    return [np.asarray(y) for y in outs], np.asarray(tape.gradient(loss, xv))


@pytest.mark.parametrize("key", sorted(_cases(gtf)))
def test_config_matches_keras_and_keras_config_rebuilds_the_layer(key):
    tf = pytest.importorskip("tensorflow")
    make_theirs, kind = _cases(tf)[key]
    ours, theirs = _cases(gtf)[key][0](), make_theirs()
    assert ours.get_config() == theirs.get_config()
    assert type(theirs).from_config(ours.get_config()).get_config() == theirs.get_config()

    x = INPUTS[kind]
    expected, expected_grad = _outputs_and_input_gradient(tf, theirs, x)
    copy = type(ours).from_config(theirs.get_config())
    _outputs_and_input_gradient(gtf, copy, x)  # builds it
    copy.set_weights(theirs.get_weights())
    got, got_grad = _outputs_and_input_gradient(gtf, copy, x)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose(got_grad, expected_grad, rtol=2e-5, atol=2e-5)
    # Built: Keras names MultiHeadAttention's default axes, keeps BatchNormalization's negative axis.
    _outputs_and_input_gradient(gtf, ours, x)
    assert ours.get_config() == copy.get_config() == theirs.get_config()


def test_names_after_a_multi_head_attention_are_keras():
    tf = pytest.importorskip("tensorflow")
    suffixes = []
    for lib in (tf, gtf):
        L = lib.keras.layers

        def number(layer):
            tail = layer.name.rsplit("_", 1)[-1]
            return int(tail) if tail.isdigit() else 0

        before = number(L.Softmax()), number(L.Dropout(0.1))
        x = np.ones((1, 2, 3), np.float32)
        L.MultiHeadAttention(1, 2)(x, x)  # Keras' holds a Softmax and a Dropout layer
        after = number(L.Softmax()), number(L.Dropout(0.1))
        suffixes.append((after[0] - before[0], after[1] - before[1]))
    assert suffixes[1] == suffixes[0]


def _model(lib):
    L = lib.keras.layers
    return lib.keras.Sequential(
        [
            lib.keras.Input((6, 6, 3), name="in"),
            L.Conv2D(4, 3, padding="same", name="c"),
            L.MaxPooling2D(name="p"),
            L.BatchNormalization(axis=-2, name="bn"),
            L.Reshape((9, 4), name="r"),
            L.LSTM(3, return_sequences=True, name="lstm"),
            L.GRU(2, name="gru"),
            L.Dense(1, name="d"),
        ],
        name="seq",
    )


def _without_build_configs(config):
    layers = [{k: v for k, v in layer.items() if k != "build_config"} for layer in config["layers"]]
    return {**config, "layers": layers, "build_input_shape": tuple(config["build_input_shape"])}


def test_sequential_config_matches_keras_and_rebuilds_from_it():
    tf = pytest.importorskip("tensorflow")
    ours, theirs = _model(gtf).get_config(), _model(tf)
    # Keras also records each layer's build shape ("build_config"); gradkit.tf leaves it out.
    assert _without_build_configs(ours) == _without_build_configs(theirs.get_config())
    copy = gtf.keras.Sequential.from_config(theirs.get_config())
    copy.set_weights(theirs.get_weights())
    x = np.sin(np.arange(2 * 6 * 6 * 3, dtype=np.float32)).reshape(2, 6, 6, 3)
    np.testing.assert_allclose(copy(x).numpy(), np.asarray(theirs(x)), rtol=1e-5, atol=1e-6)
