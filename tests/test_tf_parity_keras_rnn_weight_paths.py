"""A recurrent layer's weights are named in its cell's scope, as Keras 3 makes them
('lstm/lstm_cell/kernel'), so options keyed by weight names match the same weights: an AdamW
that excludes 'lstm_cell' from weight decay trains as Keras' does. Oracle: Keras 3 itself."""

import numpy as np
import pytest

import gradkit.tf as gtf


def _models(keras):
    keras.backend.clear_session()  # default names numbered from the start, in either library
    layers = keras.layers
    return [
        keras.Sequential([keras.Input((5, 3)), layers.Bidirectional(layers.LSTM(2), name="b"), layers.Dense(2)]),
        keras.Sequential(
            [keras.Input((5, 3)), layers.SimpleRNN(2, return_sequences=True, name="s"), layers.GRU(2, name="g")]
        ),
    ]


def _paths(model):
    # Without the model's own name, which both put first (its number depends on the models made before).
    return [w.path.split("/", 1)[1] if w.path.startswith("sequential") else w.path for w in model.weights]


def test_recurrent_weight_paths_are_keras():
    got = [_paths(m) for m in _models(gtf.keras)]
    assert got[1][:3] == ["s/simple_rnn_cell/kernel", "s/simple_rnn_cell/recurrent_kernel", "s/simple_rnn_cell/bias"]
    keras = pytest.importorskip("keras")
    assert got == [_paths(m) for m in _models(keras)]


def test_adamw_excluding_the_cells_from_weight_decay_trains_as_keras():
    keras = pytest.importorskip("keras")
    rng = np.random.RandomState(0)
    xs, ys = rng.randn(4, 5, 3).astype("float32"), rng.randn(4, 2).astype("float32")
    start = None
    trained = []
    for lib in (keras, gtf.keras):
        model = _models(lib)[0]
        if start is None:
            start = model.get_weights()
        model.set_weights(start)
        optimizer = lib.optimizers.AdamW(learning_rate=0.1, weight_decay=0.5)
        optimizer.exclude_from_weight_decay(var_names=["lstm_cell"])
        model.compile(optimizer, "mse")
        model.fit(xs, ys, epochs=2, batch_size=4, verbose=0, shuffle=False)
        trained.append(model.get_weights())
    for want, got in zip(*trained):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
