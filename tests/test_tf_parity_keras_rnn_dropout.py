"""``dropout`` and ``recurrent_dropout`` in SimpleRNN, GRU and LSTM, against Keras 3 on TensorFlow.

The random masks differ between the two (each draws from its own generator), so the parity
tests hand both the same masks: Keras' ``DropoutRNNCell._create_dropout_mask`` and gradkit's
``rnn_dropout.draw_masks`` are replaced by one table of masks, and the outputs and gradients
of a training call must then agree, which checks where each mask applies (inputs or state,
which gate, every step). The masks gradkit draws itself are checked by their values, by
being the same at every step, and by being new at each call.
"""

import numpy as np
import pytest

import gradkit.tf as gtf
from gradkit.tf._keras import rnn_dropout

B, T, F, U = 2, 4, 3, 2
X = np.sin(0.3 * np.arange(B * T * F, dtype=np.float32)).reshape(B, T, F)
GATES = {"SimpleRNN": 1, "GRU": 3, "LSTM": 4}


def _fixed_masks(rate, count, shape):
    """Masks of zeros and 1 / (1 - rate), different per gate and per row."""
    rng = np.random.default_rng(int(rate * 100) + 7 * shape[-1] + count)
    keep = rng.random((count, *shape)) >= rate
    keep[:, 0, 0] = True  # never an all-dropped case that would hide a misplaced mask
    return (keep / (1.0 - rate)).astype(np.float32)


def _keras_create_mask(self, step_input, dropout_rate):
    count = getattr(self, "dropout_mask_count", None)
    masks = _fixed_masks(dropout_rate, count or 1, tuple(step_input.shape))
    return list(masks) if count is not None else masks[0]


def _gradkit_draw_masks(rate, count, shape, seed):
    return gtf.constant(_fixed_masks(rate, count, tuple(shape)))


def _run(lib, name, options, mask=None, weights=None):
    layer = getattr(lib.keras.layers, name)(U, **options)
    xv = lib.Variable(X)
    if weights is not None:
        layer(xv)
        layer.set_weights(weights)
    with lib.GradientTape() as tape:
        kwargs = {} if mask is None else {"mask": lib.constant(mask)}
        out = layer(xv, training=True, **kwargs)
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
        loss = 0.0
        for o in outs:
            w = np.cos(np.arange(int(np.prod(o.shape)), dtype=np.float32)).reshape(tuple(o.shape))
            loss = loss + lib.reduce_sum(o * lib.constant(w))
    grads = tape.gradient(loss, [xv, *layer.trainable_variables])
    return [np.asarray(o) for o in outs], [np.asarray(g) for g in grads], layer.get_weights()


CASES = {
    "input": {"dropout": 0.3},
    "recurrent": {"recurrent_dropout": 0.4},
    "both": {"dropout": 0.3, "recurrent_dropout": 0.4},
    "both_sequences_backwards": {
        "dropout": 0.3,
        "recurrent_dropout": 0.4,
        "return_sequences": True,
        "go_backwards": True,
    },
    # Keras 3 on TensorFlow fails here unless use_cudnn=False (its cuDNN attempt broadcasts the
    # list of per-gate masks); gradkit computes what its use_cudnn=False path does.
    "input_implementation_1": {"dropout": 0.3, "implementation": 1, "use_cudnn": False},
    "both_states": {"dropout": 0.25, "recurrent_dropout": 0.5, "return_state": True},
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("name", ["SimpleRNN", "GRU", "GRU_reset_before", "LSTM"])
def test_training_call_with_the_same_masks_matches_keras(name, case, monkeypatch):
    tf = pytest.importorskip("tensorflow")
    from keras.src.layers.rnn import dropout_rnn_cell

    options = dict(CASES[case])
    if name == "GRU_reset_before":
        name, options["reset_after"] = "GRU", False
    if name == "SimpleRNN" and "implementation" in options:
        pytest.skip("SimpleRNN has no implementation argument")
    monkeypatch.setattr(dropout_rnn_cell.DropoutRNNCell, "_create_dropout_mask", _keras_create_mask)
    monkeypatch.setattr(rnn_dropout, "draw_masks", _gradkit_draw_masks)
    expected, expected_grads, weights = _run(tf, name, options)
    got, got_grads, _ = _run(gtf, name, options, weights=weights)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)
    for g, e in zip(got_grads, expected_grads):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", ["SimpleRNN", "GRU", "LSTM"])
def test_masked_sequence_with_dropout_matches_keras(name, monkeypatch):
    tf = pytest.importorskip("tensorflow")
    from keras.src.layers.rnn import dropout_rnn_cell

    monkeypatch.setattr(dropout_rnn_cell.DropoutRNNCell, "_create_dropout_mask", _keras_create_mask)
    monkeypatch.setattr(rnn_dropout, "draw_masks", _gradkit_draw_masks)
    mask = np.array([[True, False, True, True], [False, True, True, False]])
    options = {"dropout": 0.3, "recurrent_dropout": 0.4, "return_sequences": True}
    expected, expected_grads, weights = _run(tf, name, options, mask)
    got, got_grads, _ = _run(gtf, name, options, mask, weights)
    for g, e in zip(got + got_grads, expected + expected_grads):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", ["SimpleRNN", "GRU", "LSTM"])
def test_inference_ignores_dropout_as_keras(name):
    tf = pytest.importorskip("tensorflow")
    options = {"dropout": 0.5, "recurrent_dropout": 0.5, "return_sequences": True}
    keras_layer = getattr(tf.keras.layers, name)(U, **options)
    expected = np.asarray(keras_layer(X))
    layer = getattr(gtf.keras.layers, name)(U, **options)
    layer(X)
    layer.set_weights(keras_layer.get_weights())
    for training in (None, False):
        np.testing.assert_allclose(np.asarray(layer(X, training=training)), expected, rtol=1e-5, atol=1e-6)


def _identity_rnn(**options):
    """A linear SimpleRNN whose output at each step is its input masked by the input dropout
    (identity kernel, zero recurrent kernel): the mask is visible in the output."""
    layer = gtf.keras.layers.SimpleRNN(F, activation="linear", return_sequences=True, **options)
    layer(X)
    layer.set_weights([np.eye(F, dtype=np.float32), np.zeros((F, F), np.float32), np.zeros(F, np.float32)])
    return layer


def test_input_mask_is_one_per_call_and_the_same_at_every_step():
    rate = 0.5
    layer = _identity_rnn(dropout=rate, seed=3)
    ones = np.ones((64, T, F), np.float32)
    first = np.asarray(layer(ones, training=True))
    assert set(np.unique(first).tolist()) <= {0.0, 1.0 / (1.0 - rate)}
    for t in range(1, T):
        np.testing.assert_array_equal(first[:, t], first[:, 0])  # Keras: the same mask at every step
    assert 0.3 < np.mean(first == 0.0) < 0.7
    second = np.asarray(layer(ones, training=True))
    assert not np.array_equal(first, second)  # a new mask at each call


def test_recurrent_mask_is_the_same_at_every_step():
    """With x_t = 0 after the first step and an identity recurrent kernel, h_t = (h_{t-1} * m)
    each step: the same mask m applies at every step when h_t = h_1 * m**(t-1)."""
    rate = 0.5
    layer = gtf.keras.layers.SimpleRNN(F, activation="linear", return_sequences=True, recurrent_dropout=rate)
    layer(X)
    eye = np.eye(F, dtype=np.float32)
    layer.set_weights([eye, eye, np.zeros(F, np.float32)])
    x = np.zeros((64, T, F), np.float32)
    x[:, 0] = 1.0
    out = np.asarray(layer(x, training=True))
    np.testing.assert_array_equal(out[:, 0], np.ones((64, F)))
    mask = out[:, 1]
    assert set(np.unique(mask).tolist()) <= {0.0, 2.0}
    for t in range(2, T):
        np.testing.assert_allclose(out[:, t], out[:, t - 1] * mask)


def test_per_gate_masks_differ_between_gates():
    layer = gtf.keras.layers.LSTM(U, dropout=0.5, implementation=1)
    layer(X)
    masks = rnn_dropout.draw_masks(0.5, 4, (64, F), None)
    assert masks.shape == (4, 64, F)
    values = np.asarray(masks)
    assert not np.array_equal(values[0], values[1])


def test_gradient_through_dropout_is_the_mask():
    """d(sum of outputs)/dx of the identity RNN is the input mask (zero where dropped)."""
    layer = _identity_rnn(dropout=0.5)
    x = gtf.Variable(np.ones((8, 1, F), np.float32))
    with gtf.GradientTape() as tape:
        out = layer(x, training=True)
        loss = gtf.reduce_sum(out)
    np.testing.assert_allclose(np.asarray(tape.gradient(loss, x))[:, 0], np.asarray(out)[:, 0])


def test_compiled_step_draws_new_masks_and_compiles_once():
    layer = _identity_rnn(dropout=0.5)
    traces = []

    @gtf.function
    def step(x):
        traces.append(1)
        return layer(x, training=True)

    ones = np.ones((32, T, F), np.float32)
    step(ones)  # traces (more than once: it learns the Variables the step reads and draws with)
    traced = len(traces)
    outs = [np.asarray(step(ones)) for _ in range(3)]
    assert len(traces) == traced  # later calls run the same program
    assert not np.array_equal(outs[1], outs[2])  # which draws new masks at each call


def test_keras_rate_rules():
    tf = pytest.importorskip("tensorflow")
    # A GRU or LSTM applies dropout only for 0 < rate < 1: a rate of 1 drops nothing, as in Keras.
    keras_layer = tf.keras.layers.GRU(U, dropout=1.0, recurrent_dropout=1.0)
    expected = np.asarray(keras_layer(X, training=True))
    layer = gtf.keras.layers.GRU(U, dropout=1.0, recurrent_dropout=1.0)
    layer(X)
    layer.set_weights(keras_layer.get_weights())
    np.testing.assert_allclose(np.asarray(layer(X, training=True)), expected, rtol=1e-5, atol=1e-6)
    # Rates are clamped into [0, 1], and the config says so.
    for lib in (tf, gtf):
        cfg = lib.keras.layers.LSTM(U, dropout=-0.5, recurrent_dropout=1.5).get_config()
        assert (cfg["dropout"], cfg["recurrent_dropout"]) == (0.0, 1.0)
    assert gtf.keras.layers.SimpleRNN(U, dropout=0.25).get_config()["dropout"] == 0.25


def test_simple_rnn_rate_one_drops_everything_as_keras():
    tf = pytest.importorskip("tensorflow")
    keras_layer = tf.keras.layers.SimpleRNN(U, dropout=1.0, recurrent_dropout=1.0, return_sequences=True)
    expected = np.asarray(keras_layer(X, training=True))
    layer = gtf.keras.layers.SimpleRNN(U, dropout=1.0, recurrent_dropout=1.0, return_sequences=True)
    layer(X)
    layer.set_weights(keras_layer.get_weights())
    np.testing.assert_allclose(np.asarray(layer(X, training=True)), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(layer(X)), np.asarray(keras_layer(X)), rtol=1e-5, atol=1e-6)


def test_a_rate_that_is_not_a_number_is_refused():
    with pytest.raises(TypeError, match=r"\[gradkit\].*dropout='half'"):
        gtf.keras.layers.LSTM(U, dropout="half")
