"""Constructor and call arguments of gradkit.tf.keras' layers against Keras 3: each case says
whether Keras makes the layer or raises (ValueError / TypeError); the TensorFlow test checks
that against Keras itself, the other checks gradkit.tf against it (a [gradkit] error of the
same type where Keras raises). Also: only tensors positionally after the inputs (so
``layer(x, True)`` raises, as in Keras), and Dropout(1.0) in training."""

import numpy as np
import pytest

import gradkit.tf as gtf

OFF = dict(kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None)
OFF.update(kernel_constraint=None, bias_constraint=None)

# (make(layers), Keras' outcome: None where it makes the layer, else the exception type)
CASES = {
    "Dense_off_options": (lambda L: L.Dense(2, **OFF, lora_rank=None, lora_alpha=None, quantization_config=None), None),
    "Dense_units_0": (lambda L: L.Dense(0), ValueError),
    "Dense_units_negative": (lambda L: L.Dense(-1), ValueError),
    "Dense_units_float": (lambda L: L.Dense(2.0), ValueError),
    "Dense_units_numpy": (lambda L: L.Dense(np.int64(2)), ValueError),
    "Dense_bad_activation": (lambda L: L.Dense(2, activation="nope"), ValueError),
    "Dense_bad_initializer": (lambda L: L.Dense(2, kernel_initializer="nope"), ValueError),
    "Dense_uniform_alias": (lambda L: L.Dense(2, kernel_initializer="uniform"), None),
    "Conv2D_bad_initializer": (lambda L: L.Conv2D(2, 3, bias_initializer="nope"), ValueError),
    "Conv2D_bad_padding": (lambda L: L.Conv2D(2, 3, padding="foo"), ValueError),
    "Conv2D_causal": (lambda L: L.Conv2D(2, 3, padding="causal"), ValueError),
    "Conv1DTranspose_bad_initializer": (lambda L: L.Conv1DTranspose(2, 3, kernel_initializer="nope"), ValueError),
    "LSTM_bad_initializer": (lambda L: L.LSTM(2, recurrent_initializer="nope"), ValueError),
    "LSTM_gelu": (lambda L: L.LSTM(2, activation="gelu", recurrent_activation="softmax"), None),
    "LSTM_bad_activation": (lambda L: L.LSTM(2, activation="nope"), ValueError),
    "LSTM_zero_output_for_mask": (lambda L: L.LSTM(2, zero_output_for_mask=True), None),
    "SimpleRNN_seed": (lambda L: L.SimpleRNN(2, seed=3), None),
    "Embedding_off_options": (
        lambda L: L.Embedding(3, 2, embeddings_regularizer=None, activity_regularizer=None, mask_zero=False),
        None,
    ),
    "Embedding_numpy_dim": (lambda L: L.Embedding(np.int64(3), 2), ValueError),
    "Embedding_bad_initializer": (lambda L: L.Embedding(3, 2, embeddings_initializer="nope"), ValueError),
    "BatchNormalization_off_options": (
        lambda L: L.BatchNormalization(synchronized=False, renorm=False, renorm_clipping=None, renorm_momentum=0.9),
        None,
    ),
    "BatchNormalization_float_axis": (lambda L: L.BatchNormalization(axis=1.0), None),
    "BatchNormalization_list_axis": (lambda L: L.BatchNormalization(axis=[1]), TypeError),
    "BatchNormalization_bad_initializer": (lambda L: L.BatchNormalization(gamma_initializer="nope"), ValueError),
    "LayerNormalization_bad_initializer": (lambda L: L.LayerNormalization(beta_initializer="nope"), ValueError),
    "LayerNormalization_float_axis": (lambda L: L.LayerNormalization(axis=1.0), TypeError),
    "MultiHeadAttention_bad_initializer": (
        lambda L: L.MultiHeadAttention(1, 2, kernel_initializer="nope"),
        ValueError,
    ),
    "ReLU_threshold": (lambda L: L.ReLU(threshold=0.5), None),
    "ReLU_negative_threshold": (lambda L: L.ReLU(threshold=-1), ValueError),
    "ReLU_threshold_None": (lambda L: L.ReLU(threshold=None), ValueError),
    "ReLU_negative_max_value": (lambda L: L.ReLU(max_value=-1), ValueError),
    "ReLU_string_max_value": (lambda L: L.ReLU(max_value="a"), TypeError),
    "ReLU_negative_slope": (lambda L: L.ReLU(negative_slope=-1), ValueError),
    "LeakyReLU_negative": (lambda L: L.LeakyReLU(-1), ValueError),
    "Dropout_rate_1": (lambda L: L.Dropout(1.0), None),
    "Dropout_negative": (lambda L: L.Dropout(-0.1), ValueError),
    "Dropout_string": (lambda L: L.Dropout("a"), TypeError),
    "Reshape_zero": (lambda L: L.Reshape((0, 3)), None),
    "Reshape_below_minus_one": (lambda L: L.Reshape((-2, 3)), ValueError),
    "Reshape_two_unknown": (lambda L: L.Reshape((-1, -1)), ValueError),
    "Reshape_int": (lambda L: L.Reshape(3), TypeError),
}


def _outcome(make, layers):
    try:
        make(layers)
    except (ValueError, TypeError) as e:
        return e
    return None


def _check(got, expected, gradkit: bool) -> None:
    """``got`` (an exception, or None for a call that worked) is what ``expected`` says: accepted
    (None) or refused with that exception type, and for gradkit with a ``[gradkit]`` message."""
    if expected is None:
        assert got is None, got
    else:
        assert isinstance(got, expected) and (not gradkit or str(got).startswith("[gradkit]")), got


@pytest.mark.parametrize("key", sorted(CASES))
def test_gradkit_accepts_and_refuses_as_keras(key):
    make, expected = CASES[key]
    _check(_outcome(make, gtf.keras.layers), expected, gradkit=True)


@pytest.mark.parametrize("key", sorted(CASES))
def test_cases_are_what_keras_does(key):
    tf = pytest.importorskip("tensorflow")
    make, expected = CASES[key]
    _check(_outcome(make, tf.keras.layers), expected, gradkit=False)


X = np.linspace(-1, 1, 24, dtype=np.float32).reshape(2, 3, 4)

CALLS = {
    "Dropout_training_positional": (lambda tf: tf.keras.layers.Dropout(0.5)(tf.constant(X), True), ValueError),
    "BatchNormalization_training_positional": (
        lambda tf: tf.keras.layers.BatchNormalization()(tf.constant(X), False),
        ValueError,
    ),
    "Sequential_training_positional": (
        lambda tf: tf.keras.Sequential([tf.keras.layers.Dense(2)])(tf.constant(X), True),
        ValueError,
    ),
    "LSTM_training_positional": (lambda tf: tf.keras.layers.LSTM(2)(tf.constant(X), None, None, True), ValueError),
    "LSTM_initial_state_None_positional": (lambda tf: tf.keras.layers.LSTM(2)(tf.constant(X), None), None),
    "Softmax_mask_positional": (
        lambda tf: tf.keras.layers.Softmax()(tf.constant(X), tf.constant([True, False, True, True])),
        None,
    ),
    "Dropout_training_keyword": (lambda tf: tf.keras.layers.Dropout(0.5)(tf.constant(X), training=True), None),
}


@pytest.mark.parametrize("key", sorted(CALLS))
def test_positional_call_arguments(key):
    call, expected = CALLS[key]
    _check(_outcome(lambda _: call(gtf), None), expected, gradkit=True)


@pytest.mark.parametrize("key", sorted(CALLS))
def test_positional_call_arguments_are_what_keras_does(key):
    tf = pytest.importorskip("tensorflow")
    call, expected = CALLS[key]
    _check(_outcome(lambda _: call(tf), None), expected, gradkit=False)


def test_dropout_rate_1_in_training_drops_everything_without_a_gradient():
    x = gtf.Variable(X)
    with gtf.GradientTape() as tape:
        y = gtf.keras.layers.Dropout(1.0)(x, training=True)
    np.testing.assert_array_equal(y.numpy(), np.zeros_like(X))
    assert tape.gradient(gtf.reduce_sum(y), x) is None


def test_dropout_rate_1_matches_keras():
    tf = pytest.importorskip("tensorflow")
    results = []
    for lib in (tf, gtf):
        x = lib.Variable(X)
        with lib.GradientTape() as tape:
            y = lib.reduce_sum(lib.keras.layers.Dropout(1.0)(2.0 * x, training=True) + x)
        results.append(np.asarray(tape.gradient(y, x)))
    np.testing.assert_array_equal(results[1], results[0])
