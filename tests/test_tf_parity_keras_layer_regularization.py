"""Layers' weight regularizers and constraints (``kernel_*``/``bias_*`` of Dense and the
convolutions, ``beta_*``/``gamma_*`` of the normalizations, ``embeddings_*``, ``add_weight`` in a
subclass) and ``activity_regularizer``
against real Keras 3: ``layer.losses``/``model.losses`` (the same weights assigned in both),
their gradients under a tape, a training step that adds them, the constraints applied by the
optimizer after each step, and the configs."""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")

from test_tf_parity import run_both_ok  # noqa: E402

import gradkit.tf as gtf  # noqa: E402

_rs = np.random.RandomState(0)
_X = {2: _rs.randn(3, 4).astype(np.float32), 3: _rs.randn(2, 6, 3).astype(np.float32)}
_X[4] = _rs.randn(2, 5, 5, 3).astype(np.float32)
_X["ids"] = np.array([[0, 3, 4], [1, 1, 2]], np.int32)

LAYERS = {
    "dense_l2_l1": (2, lambda tf: tf.keras.layers.Dense(3, kernel_regularizer="l2", bias_regularizer="l1")),
    "dense_l1l2_activity": (
        2,
        lambda tf: tf.keras.layers.Dense(
            3,
            activation="relu",
            kernel_regularizer=tf.keras.regularizers.L1L2(0.01, 0.02),
            activity_regularizer=tf.keras.regularizers.L2(0.05),
        ),
    ),
    "dense_orthogonal": (2, lambda tf: tf.keras.layers.Dense(3, kernel_regularizer="orthogonal_regularizer")),
    "conv1d": (3, lambda tf: tf.keras.layers.Conv1D(2, 3, kernel_regularizer="l2", activity_regularizer="l1")),
    "conv2d": (4, lambda tf: tf.keras.layers.Conv2D(2, 2, bias_regularizer=tf.keras.regularizers.L2(0.3))),
    "conv2d_transpose": (
        4,
        lambda tf: tf.keras.layers.Conv2DTranspose(2, 2, kernel_regularizer="l1", activity_regularizer="l2"),
    ),
    "batch_normalization": (
        2,
        lambda tf: tf.keras.layers.BatchNormalization(
            gamma_regularizer="l2", beta_regularizer="l1", activity_regularizer="l1"
        ),
    ),
    "layer_normalization": (
        3,
        lambda tf: tf.keras.layers.LayerNormalization(gamma_regularizer=tf.keras.regularizers.L2(0.4)),
    ),
    "simple_rnn": (
        3,
        lambda tf: tf.keras.layers.SimpleRNN(
            3, kernel_regularizer="l2", recurrent_regularizer="l1", bias_regularizer="l2"
        ),
    ),
    "gru": (
        3,
        lambda tf: tf.keras.layers.GRU(3, recurrent_regularizer="l2", activity_regularizer="l1", return_sequences=True),
    ),
    "lstm": (
        3,
        lambda tf: tf.keras.layers.LSTM(2, kernel_regularizer="l1", bias_regularizer="l2", activity_regularizer="l2"),
    ),
    "multi_head_attention": (
        3,
        lambda tf: tf.keras.layers.MultiHeadAttention(2, 2, kernel_regularizer="l2", bias_regularizer="l1"),
    ),
    "embedding": (
        "ids",
        lambda tf: tf.keras.layers.Embedding(5, 3, embeddings_regularizer="l2", activity_regularizer="l1"),
    ),
}


class _SelfAttention:
    """``mha(x, x)`` as a one-input layer, with the attention layer's weights and losses."""

    def __init__(self, mha):
        self.mha = mha

    def __call__(self, x):
        return self.mha(x, x)

    def __getattr__(self, name):
        return getattr(self.mha, name)


def _losses_and_gradients(tf, make, rank):
    layer = make(tf)
    x = tf.constant(_X[rank])
    if isinstance(layer, tf.keras.layers.MultiHeadAttention):
        layer = _SelfAttention(layer)
    layer(x)
    for i, v in enumerate(layer.weights):
        v.assign(0.5 * np.random.RandomState(10 + i).randn(*v.shape).astype(np.float32))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = layer(x)
        penalty = tf.add_n(layer.losses)
        total = tf.reduce_sum(y) + penalty
    grads = tape.gradient(total, [x, *layer.trainable_variables])
    # TensorFlow's gradient of a gather is IndexedSlices; gradkit's is the dense tensor.
    grads = [None if g is None else tf.convert_to_tensor(g) for g in grads]
    return [y, [float(term) for term in layer.losses], grads]


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_layer_losses_and_their_gradients_match_keras(name):
    rank, make = LAYERS[name]
    run_both_ok(lambda tf: _losses_and_gradients(tf, make, rank))


def _train_constrained(tf, compiled):
    model = tf.keras.Sequential(
        [
            tf.keras.layers.Dense(
                4,
                activation="tanh",
                kernel_constraint=tf.keras.constraints.MaxNorm(0.5),
                bias_constraint="non_neg",
                kernel_regularizer="l2",
            ),
            tf.keras.layers.Dense(1, kernel_constraint="unit_norm", activity_regularizer="l2"),
        ]
    )
    x = tf.constant(_X[2])
    model(x)
    for i, v in enumerate(model.weights):
        v.assign(np.random.RandomState(20 + i).randn(*v.shape).astype(np.float32))
    opt = tf.keras.optimizers.Adam(0.1)

    def step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(model(x) ** 2) + tf.add_n(model.losses)
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss

    if compiled:
        step = tf.function(step)
    out = []
    for _ in range(3):
        out.append(step())
        out += [v.numpy() for v in model.weights]
    model(x)  # an eager call: the losses a compiled call collected are its graph's
    return out + [[float(term) for term in model.losses]]


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "tf.function"])
def test_training_with_regularized_and_constrained_layers_matches_keras(compiled):
    run_both_ok(lambda tf: _train_constrained(tf, compiled))


def _subclass(tf):
    class Scaled(tf.keras.layers.Layer):
        def build(self, input_shape):
            self.w = self.add_weight(
                shape=(input_shape[-1],), initializer="ones", regularizer="l1", constraint="non_neg"
            )
            self.v = self.add_weight(shape=(2,), initializer="ones", trainable=False, regularizer="l2")

        def call(self, inputs):
            return inputs * tf.reshape(self.w, (1, -1))

    layer = Scaled(activity_regularizer=tf.keras.regularizers.L1(0.5))
    x = tf.constant(_X[2])
    layer(x)
    layer.w.assign([0.5, -1.0, 2.0, 0.25])
    layer.v.assign([3.0, 4.0])
    with tf.GradientTape() as tape:
        layer(x)
        total = tf.add_n(layer.losses)
    grad = tape.gradient(total, layer.w)
    tf.keras.optimizers.SGD(0.1).apply_gradients([(grad, layer.w)])
    names = [type(layer.w.regularizer).__name__, type(layer.w.constraint).__name__, layer.v.constraint]
    return [[float(term) for term in layer.losses], grad, layer.w.numpy(), names]


def test_add_weight_regularizer_constraint_and_activity_regularizer_match_keras():
    # The non-trainable weight's regularizer adds nothing, as in Keras.
    run_both_ok(_subclass)


@pytest.mark.parametrize(
    "make",
    [
        lambda tf: tf.keras.layers.Dense(
            2, kernel_regularizer="l2", bias_constraint="non_neg", activity_regularizer="l1"
        ),
        lambda tf: tf.keras.layers.Conv2D(2, 3, kernel_constraint=tf.keras.constraints.MaxNorm(3, axis=[0, 1, 2])),
        lambda tf: tf.keras.layers.Conv1D(2, 3, activity_regularizer=tf.keras.regularizers.L1L2(0.1, 0.2)),
        lambda tf: tf.keras.layers.BatchNormalization(
            gamma_regularizer="l2", beta_constraint="non_neg", activity_regularizer="l1"
        ),
        lambda tf: tf.keras.layers.LayerNormalization(beta_regularizer="l1", gamma_constraint="unit_norm"),
        lambda tf: tf.keras.layers.Embedding(4, 2, embeddings_regularizer="l2", embeddings_constraint="max_norm"),
        lambda tf: tf.keras.layers.Conv1DTranspose(2, 3, kernel_regularizer="l2", bias_constraint="non_neg"),
        lambda tf: tf.keras.layers.LSTM(
            2,
            recurrent_regularizer="l2",
            activity_regularizer="l1",
            recurrent_constraint="unit_norm",
            return_state=True,
        ),
        lambda tf: tf.keras.layers.SimpleRNN(2, kernel_regularizer="l1", bias_constraint="non_neg"),
        lambda tf: tf.keras.layers.MultiHeadAttention(2, 3, kernel_regularizer="l2", bias_constraint="non_neg"),
    ],
    ids=[
        "dense",
        "conv2d",
        "conv1d",
        "batch_normalization",
        "layer_normalization",
        "embedding",
        "conv1d_transpose",
        "lstm",
        "simple_rnn",
        "multi_head_attention",
    ],
)
def test_configs_with_regularizers_and_constraints_match_keras_and_round_trip(make):
    want = make(tf_real).get_config()
    layer = make(gtf)
    got = layer.get_config()
    want["name"] = got["name"]
    assert list(got.items()) == list(want.items())
    assert type(layer).from_config(got).get_config() == got


@pytest.mark.parametrize(
    "make",
    [
        lambda tf: tf.keras.layers.Dense(2, kernel_regularizer="nope"),
        lambda tf: tf.keras.layers.Dense(2, bias_constraint="nope"),
        lambda tf: tf.keras.layers.Conv2D(2, 3, activity_regularizer=3),
    ],
    ids=["regularizer", "constraint", "activity"],
)
def test_options_keras_cannot_interpret_are_refused(make):
    for tf in (tf_real, gtf):
        with pytest.raises(ValueError) as info:
            make(tf)
    assert str(info.value).startswith("[gradkit]")


def _recurrent_step(tf):
    """A GRU whose recurrent kernel is constrained, trained with its penalties: the constraint is
    applied after each step and the penalties follow the new weights."""
    layer = tf.keras.layers.GRU(2, recurrent_constraint="max_norm", kernel_regularizer="l2", recurrent_regularizer="l1")
    x = tf.constant(_X[3])
    layer(x)
    for i, v in enumerate(layer.weights):
        v.assign(np.random.RandomState(30 + i).randn(*v.shape).astype(np.float32))
    opt = tf.keras.optimizers.SGD(0.5)
    out = []
    for _ in range(2):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(layer(x)) + tf.add_n(layer.losses)
        opt.apply_gradients(zip(tape.gradient(loss, layer.trainable_variables), layer.trainable_variables))
        out += [loss, [v.numpy() for v in layer.weights]]
    return out


def test_a_recurrent_layers_constraint_and_penalties_in_training_match_keras():
    run_both_ok(_recurrent_step)


def test_simple_rnn_activity_regularizer_which_keras_ignores_is_refused():
    """Keras 3's SimpleRNN takes activity_regularizer and drops it (no loss; its config says None)."""
    keras_layer = tf_real.keras.layers.SimpleRNN(2, activity_regularizer="l1")
    keras_layer(tf_real.constant(_X[3]))
    assert keras_layer.losses == [] and keras_layer.get_config()["activity_regularizer"] is None
    with pytest.raises(NotImplementedError, match=r"^\[gradkit\].*SimpleRNN.*ignores"):
        gtf.keras.layers.SimpleRNN(2, activity_regularizer="l1")


def _attention_step(tf):
    """MultiHeadAttention's projections carry the kernel and bias constraints, as Keras'
    EinsumDense sublayers do: applied after each step."""
    layer = tf.keras.layers.MultiHeadAttention(2, 2, kernel_constraint="max_norm", bias_constraint="non_neg")
    x = tf.constant(_X[3])
    layer(x, x)
    for i, v in enumerate(layer.weights):
        v.assign(0.5 * np.random.RandomState(40 + i).randn(*v.shape).astype(np.float32))
    opt = tf.keras.optimizers.SGD(0.5)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(layer(x, x) ** 2)
    opt.apply_gradients(zip(tape.gradient(loss, layer.trainable_variables), layer.trainable_variables))
    return [v.numpy() for v in layer.weights]


def test_multi_head_attention_constraints_match_keras():
    run_both_ok(_attention_step)


def test_multi_head_attention_activity_regularizer_is_refused():
    with pytest.raises(NotImplementedError, match=r"^\[gradkit\].*activity_regularizer.*projections"):
        gtf.keras.layers.MultiHeadAttention(2, 2, activity_regularizer="l2")
