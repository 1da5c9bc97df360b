"""Weight regularizers, constraints and activity regularizers of the depthwise and separable
convolutions (``depthwise_*``/``pointwise_*``/``bias_*``), Conv3D and Conv3DTranspose,
EinsumDense, PReLU (``alpha_*``), GroupNormalization (``beta_*``/``gamma_*``) and the recurrent
cells (``kernel_*``/``recurrent_*``/``bias_*``) against real Keras 3: ``layer.losses`` and
their gradients under a tape (the same weights assigned in both), a training step whose
constraints the optimizer applies, and the configs."""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")

from test_tf_parity import run_both_ok  # noqa: E402

import gradkit.tf as gtf  # noqa: E402

_rs = np.random.RandomState(1)
_X = {
    2: _rs.randn(3, 4).astype(np.float32),
    3: _rs.randn(2, 6, 3).astype(np.float32),
    4: _rs.randn(2, 5, 5, 3).astype(np.float32),
    5: _rs.randn(1, 3, 3, 3, 2).astype(np.float32),
}

LAYERS = {
    "depthwise_conv1d": (
        3,
        lambda tf: tf.keras.layers.DepthwiseConv1D(
            2, depth_multiplier=2, depthwise_regularizer="l2", bias_regularizer="l1", activity_regularizer="l2"
        ),
    ),
    "depthwise_conv2d": (
        4,
        lambda tf: tf.keras.layers.DepthwiseConv2D(2, depthwise_regularizer=tf.keras.regularizers.L1L2(0.1, 0.2)),
    ),
    "separable_conv1d": (
        3,
        lambda tf: tf.keras.layers.SeparableConv1D(
            2, 3, depthwise_regularizer="l1", pointwise_regularizer="l2", bias_regularizer="l2"
        ),
    ),
    "separable_conv2d": (
        4,
        lambda tf: tf.keras.layers.SeparableConv2D(
            2, 2, pointwise_regularizer=tf.keras.regularizers.L2(0.3), activity_regularizer="l1"
        ),
    ),
    "conv3d": (5, lambda tf: tf.keras.layers.Conv3D(2, 2, kernel_regularizer="l2", bias_regularizer="l1")),
    "conv3d_transpose": (
        5,
        lambda tf: tf.keras.layers.Conv3DTranspose(2, 2, kernel_regularizer="l1", activity_regularizer="l2"),
    ),
    "einsum_dense": (
        3,
        lambda tf: tf.keras.layers.EinsumDense(
            "abc,cd->abd",
            (None, 2),
            bias_axes="d",
            kernel_regularizer="l2",
            bias_regularizer="l1",
            activity_regularizer="l2",
        ),
    ),
    "prelu": (4, lambda tf: tf.keras.layers.PReLU(alpha_regularizer="l2", shared_axes=[1, 2])),
    "group_normalization": (
        3,
        lambda tf: tf.keras.layers.GroupNormalization(
            groups=3, gamma_regularizer="l2", beta_regularizer=tf.keras.regularizers.L1(0.2)
        ),
    ),
    "simple_rnn_cell": (
        3,
        lambda tf: tf.keras.layers.RNN(
            tf.keras.layers.SimpleRNNCell(3, kernel_regularizer="l2", recurrent_regularizer="l1", bias_regularizer="l2")
        ),
    ),
    "lstm_cell": (
        3,
        lambda tf: tf.keras.layers.RNN(tf.keras.layers.LSTMCell(2, recurrent_regularizer="l2", bias_regularizer="l1")),
    ),
    "gru_cell": (
        3,
        lambda tf: tf.keras.layers.RNN(
            tf.keras.layers.GRUCell(2, kernel_regularizer="l1", recurrent_regularizer="l2"), return_sequences=True
        ),
    ),
    "stacked_cells": (
        3,
        lambda tf: tf.keras.layers.RNN(
            [tf.keras.layers.LSTMCell(2, kernel_regularizer="l2"), tf.keras.layers.GRUCell(2, bias_regularizer="l1")]
        ),
    ),
}


def _losses_and_gradients(tf, make, rank):
    layer = make(tf)
    x = tf.constant(_X[rank])
    layer(x)
    for i, v in enumerate(layer.weights):
        v.assign(0.5 * np.random.RandomState(10 + i).randn(*v.shape).astype(np.float32))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = layer(x)
        penalty = tf.add_n(layer.losses)
        total = tf.reduce_sum(y) + penalty
    grads = tape.gradient(total, [x, *layer.trainable_variables])
    return [y, [float(term) for term in layer.losses], grads]


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_layer_losses_and_their_gradients_match_keras(name):
    rank, make = LAYERS[name]
    run_both_ok(lambda tf: _losses_and_gradients(tf, make, rank))


CONSTRAINED = {
    "depthwise_conv2d": (
        4,
        lambda tf: tf.keras.layers.DepthwiseConv2D(2, depthwise_constraint="max_norm", bias_constraint="non_neg"),
    ),
    "separable_conv1d": (
        3,
        lambda tf: tf.keras.layers.SeparableConv1D(
            2, 2, depthwise_constraint="unit_norm", pointwise_constraint=tf.keras.constraints.MaxNorm(0.5)
        ),
    ),
    "conv3d": (5, lambda tf: tf.keras.layers.Conv3D(2, 2, kernel_constraint="unit_norm", bias_constraint="non_neg")),
    "einsum_dense": (
        2,
        lambda tf: tf.keras.layers.EinsumDense(
            "ab,bc->ac", 3, bias_axes="c", kernel_constraint="max_norm", bias_constraint="non_neg"
        ),
    ),
    "prelu": (2, lambda tf: tf.keras.layers.PReLU(alpha_constraint="non_neg", alpha_regularizer="l1")),
    "group_normalization": (
        3,
        lambda tf: tf.keras.layers.GroupNormalization(
            groups=1, gamma_constraint="unit_norm", beta_constraint="non_neg"
        ),
    ),
    "lstm_cell": (
        3,
        lambda tf: tf.keras.layers.RNN(
            tf.keras.layers.LSTMCell(2, kernel_constraint="max_norm", recurrent_constraint="unit_norm")
        ),
    ),
    "gru_cell": (
        3,
        lambda tf: tf.keras.layers.RNN(
            tf.keras.layers.GRUCell(2, bias_constraint="non_neg", recurrent_regularizer="l2")
        ),
    ),
}


def _train_step(tf, make, rank):
    layer = make(tf)
    x = tf.constant(_X[rank])
    layer(x)
    for i, v in enumerate(layer.weights):
        v.assign(np.random.RandomState(20 + i).randn(*v.shape).astype(np.float32))
    opt = tf.keras.optimizers.SGD(0.5)
    out = []
    for _ in range(2):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(layer(x) ** 2) + sum(layer.losses)
        opt.apply_gradients(zip(tape.gradient(loss, layer.trainable_variables), layer.trainable_variables))
        out += [loss, [v.numpy() for v in layer.weights]]
    return out


@pytest.mark.parametrize("name", sorted(CONSTRAINED))
def test_constraints_applied_by_the_optimizer_match_keras(name):
    rank, make = CONSTRAINED[name]
    run_both_ok(lambda tf: _train_step(tf, make, rank))


CONFIGS = {
    "depthwise_conv1d": lambda tf: tf.keras.layers.DepthwiseConv1D(
        2, depthwise_regularizer="l2", bias_constraint="non_neg", activity_regularizer="l1"
    ),
    "depthwise_conv2d": lambda tf: tf.keras.layers.DepthwiseConv2D(
        2, depthwise_constraint=tf.keras.constraints.MaxNorm(3, axis=[0, 1, 2]), bias_regularizer="l1"
    ),
    "separable_conv2d": lambda tf: tf.keras.layers.SeparableConv2D(
        2, 2, pointwise_regularizer="l2", pointwise_constraint="unit_norm", depthwise_regularizer="l1"
    ),
    "conv3d": lambda tf: tf.keras.layers.Conv3D(2, 2, kernel_regularizer="l2", bias_constraint="non_neg"),
    "einsum_dense": lambda tf: tf.keras.layers.EinsumDense(
        "ab,bc->ac", 3, bias_axes="c", kernel_regularizer="l2", bias_constraint="non_neg", activity_regularizer="l1"
    ),
    "prelu": lambda tf: tf.keras.layers.PReLU(alpha_regularizer="l2", alpha_constraint="non_neg"),
    "group_normalization": lambda tf: tf.keras.layers.GroupNormalization(
        groups=2, gamma_regularizer="l2", beta_constraint="non_neg"
    ),
    "simple_rnn_cell": lambda tf: tf.keras.layers.SimpleRNNCell(2, kernel_regularizer="l1", bias_constraint="non_neg"),
    "lstm_cell": lambda tf: tf.keras.layers.LSTMCell(2, recurrent_regularizer="l2", recurrent_constraint="unit_norm"),
    "gru_cell": lambda tf: tf.keras.layers.GRUCell(2, bias_regularizer="l2", kernel_constraint="max_norm"),
}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_configs_with_regularizers_and_constraints_match_keras_and_round_trip(name):
    want = CONFIGS[name](tf_real).get_config()
    layer = CONFIGS[name](gtf)
    got = layer.get_config()
    want["name"] = got["name"]
    assert list(got.items()) == list(want.items())
    assert type(layer).from_config(got).get_config() == got


@pytest.mark.parametrize(
    "make",
    [
        lambda tf: tf.keras.layers.DepthwiseConv2D(2, depthwise_regularizer="nope"),
        lambda tf: tf.keras.layers.SeparableConv1D(2, 2, pointwise_constraint="nope"),
        lambda tf: tf.keras.layers.PReLU(alpha_regularizer="nope"),
        lambda tf: tf.keras.layers.GroupNormalization(2, gamma_constraint="nope"),
        lambda tf: tf.keras.layers.LSTMCell(2, recurrent_regularizer="nope"),
    ],
    ids=["depthwise", "separable", "prelu", "group_normalization", "lstm_cell"],
)
def test_options_keras_cannot_interpret_are_refused(make):
    for tf in (tf_real, gtf):
        with pytest.raises(ValueError) as info:
            make(tf)
    assert str(info.value).startswith("[gradkit]")


def test_a_cells_activity_regularizer_is_refused_as_not_implemented():
    """Keras 3 takes it on a cell (a penalty per step and output); gradkit.tf refuses it clearly."""
    tf_real.keras.layers.LSTMCell(2, activity_regularizer="l1")
    with pytest.raises(NotImplementedError, match=r"^\[gradkit\].*LSTMCell.*activity_regularizer"):
        gtf.keras.layers.LSTMCell(2, activity_regularizer="l1")
