"""``RNN(cell, stateful=True)`` against Keras 3 on TensorFlow with the same weights: gradkit's
cells, stacked cells and a user-written cell with a ``state_size``; consecutive calls continue
from the states the last call left, ``reset_state`` starts again from zeros, ``fit``/``predict``
carry the states from batch to batch; and, as an oracle without TensorFlow, the same calls with
the states passed by hand (``return_state`` and ``initial_state``) on a layer without state."""

import numpy as np
import pytest

import gradkit.tf as gtf

B, T, F, U = 2, 3, 3, 2
X = np.sin(0.3 * np.arange(B * T * F, dtype=np.float32)).reshape(B, T, F)
X2 = np.cos(0.2 * np.arange(B * T * F, dtype=np.float32)).reshape(B, T, F)


def _min_cell_class(lib):
    """Keras' documented MinimalRNNCell, with two states of its own (h and the previous h)."""

    class MinimalRNNCell(lib.keras.layers.Layer):
        def __init__(self, units, **kwargs):
            super().__init__(**kwargs)
            self.units = units
            self.state_size = [units, units]

        def build(self, input_shape):
            self.kernel = self.add_weight(shape=(input_shape[-1], self.units), initializer="uniform", name="kernel")
            self.recurrent_kernel = self.add_weight(
                shape=(self.units, self.units), initializer="uniform", name="recurrent_kernel"
            )

        def call(self, inputs, states):
            h = lib.tanh(lib.matmul(inputs, self.kernel) + lib.matmul(states[0], self.recurrent_kernel))
            return h + 0.5 * states[1], [h, states[0]]

    return MinimalRNNCell


CELLS = {
    "simple_rnn": lambda lib: lib.keras.layers.SimpleRNNCell(U),
    "gru": lambda lib: lib.keras.layers.GRUCell(U),
    "lstm": lambda lib: lib.keras.layers.LSTMCell(U),
    "stacked": lambda lib: [lib.keras.layers.LSTMCell(3), lib.keras.layers.GRUCell(U)],
    "custom": lambda lib: _min_cell_class(lib)(U),
}
OPTIONS = {
    "last": {},
    "sequences_backwards": {"return_sequences": True, "go_backwards": True},
    "states": {"return_state": True},
}


def _flat_arrays(out) -> list:
    if isinstance(out, (list, tuple)):
        return [a for o in out for a in _flat_arrays(o)]
    return [np.asarray(out)]


def _calls(lib, cell, options, weights=None, reset=True):
    layer = lib.keras.layers.RNN(CELLS[cell](lib), stateful=True, **options)
    layer(X)
    if weights is not None:
        layer.set_weights(weights)
    if reset:
        layer.reset_state()
    else:  # Keras 3.15's reset_state fails for stacked cells: zero the states by hand
        for v in lib.nest.flatten(layer.states):
            v.assign(np.zeros(tuple(v.shape), np.float32))
    outs = [layer(X), layer(X2)]
    if reset:
        layer.reset_states()
        outs.append(layer(X2))
    return _flat_arrays(outs), layer


@pytest.mark.parametrize("options", sorted(OPTIONS))
@pytest.mark.parametrize("cell", sorted(CELLS))
def test_consecutive_calls_and_reset_match_keras(cell, options):
    tf = pytest.importorskip("tensorflow")
    reset = cell != "stacked"
    expected, keras_layer = _calls(tf, cell, OPTIONS[options], reset=reset)
    got, layer = _calls(gtf, cell, OPTIONS[options], keras_layer.get_weights(), reset=reset)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)
    assert len(layer.weights) == len(keras_layer.weights)  # the states are not weights
    states, keras_states = gtf.nest.flatten(layer.states), tf.nest.flatten(keras_layer.states)
    assert [tuple(v.shape) for v in states] == [tuple(v.shape) for v in keras_states]
    for v, k in zip(states, keras_states):
        np.testing.assert_allclose(np.asarray(v), np.asarray(k), rtol=1e-5, atol=1e-6)
    assert layer.get_config()["stateful"] is True


def test_stacked_states_are_one_list_per_cell_and_reset_all():
    layer = gtf.keras.layers.RNN(CELLS["stacked"](gtf), stateful=True)
    layer(X)
    assert [[tuple(v.shape) for v in cell_states] for cell_states in layer.states] == [[(B, 3), (B, 3)], [(B, U)]]
    assert all(np.any(np.asarray(v) != 0) for v in gtf.nest.flatten(layer.states))
    layer.reset_state()  # Keras 3.15 raises AttributeError here; gradkit zeroes every cell's states
    assert all(not np.any(np.asarray(v)) for v in gtf.nest.flatten(layer.states))


@pytest.mark.parametrize("cell", sorted(CELLS))
def test_stateful_calls_equal_states_passed_by_hand(cell):
    """No TensorFlow: a stateful layer equals the same layer fed its last states explicitly,
    in values and in the gradient of both calls (which flows through the carried state)."""
    stateful = gtf.keras.layers.RNN(CELLS[cell](gtf), stateful=True, return_sequences=True)
    plain = gtf.keras.layers.RNN(CELLS[cell](gtf), return_sequences=True, return_state=True)
    stateful(X)
    plain(X)
    plain.set_weights(stateful.get_weights())
    stateful.reset_state()
    with gtf.GradientTape(persistent=True) as tape:
        a = stateful(X) + 2.0 * stateful(X2)
        first, *states = plain(X)
        second, *_ = plain(X2, initial_state=states)
        b = first + 2.0 * second
        loss_a, loss_b = gtf.reduce_sum(a * a), gtf.reduce_sum(b * b)
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6, atol=1e-6)
    for ga, gb in zip(
        tape.gradient(loss_a, stateful.trainable_variables), tape.gradient(loss_b, plain.trainable_variables)
    ):
        np.testing.assert_allclose(np.asarray(ga), np.asarray(gb), rtol=1e-5, atol=1e-6)
    for v, s in zip(gtf.nest.flatten(stateful.states), gtf.nest.flatten(plain(X2, initial_state=states)[1:])):
        np.testing.assert_allclose(np.asarray(v), np.asarray(s), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("cell", ["lstm", "custom"])
def test_compiled_calls_carry_the_states_and_compile_once(cell):
    tf = pytest.importorskip("tensorflow")
    keras_layer = tf.keras.layers.RNN(CELLS[cell](tf), stateful=True)
    expected = [np.asarray(keras_layer(x)) for x in (X, X2, X)]
    layer = gtf.keras.layers.RNN(CELLS[cell](gtf), stateful=True)
    layer(X)
    layer.set_weights(keras_layer.get_weights())
    layer.reset_state()
    traces = []

    @gtf.function
    def step(x):
        traces.append(1)
        return layer(x)

    got = [np.asarray(step(X))]
    traced = len(traces)
    got += [np.asarray(step(x)) for x in (X2, X)]
    assert len(traces) == traced
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


def _model(lib, weights=None):
    model = lib.keras.Sequential(
        [
            lib.keras.Input((T, F), batch_size=B),
            lib.keras.layers.RNN(
                [lib.keras.layers.GRUCell(U), lib.keras.layers.SimpleRNNCell(U)], stateful=True, return_sequences=True
            ),
            lib.keras.layers.RNN(lib.keras.layers.LSTMCell(U), stateful=True),
            lib.keras.layers.Dense(1),
        ]
    )
    if weights is not None:
        model.set_weights(weights)
    return model


def test_fit_and_predict_carry_the_states_as_keras():
    tf = pytest.importorskip("tensorflow")
    x = np.concatenate([X, X2, X[::-1]]).astype(np.float32)
    y = np.linspace(-1, 1, len(x), dtype=np.float32)[:, None]
    keras_model = _model(tf)
    model = _model(gtf, keras_model.get_weights())
    results = []
    for lib, m in ((tf, keras_model), (gtf, model)):
        m.compile(optimizer=lib.keras.optimizers.SGD(0.1), loss="mse")
        history = m.fit(x, y, batch_size=B, epochs=2, shuffle=False, verbose=0)
        results.append((history.history["loss"], m.predict(x, batch_size=B, verbose=0), m.get_weights()))
    (k_loss, k_pred, k_weights), (g_loss, g_pred, g_weights) = results
    np.testing.assert_allclose(g_loss, k_loss, rtol=1e-5)
    np.testing.assert_allclose(g_pred, k_pred, rtol=1e-4, atol=1e-6)
    for g, k in zip(g_weights, k_weights):
        np.testing.assert_allclose(g, k, rtol=1e-4, atol=1e-6)
    for g, k in zip(gtf.nest.flatten(model.layers[0].states), tf.nest.flatten(keras_model.layers[0].states)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(k), rtol=1e-4, atol=1e-6)


def test_bidirectional_of_a_stateful_rnn_matches_keras():
    tf = pytest.importorskip("tensorflow")
    results = []
    for lib in (tf, gtf):
        layer = lib.keras.layers.Bidirectional(
            lib.keras.layers.RNN(lib.keras.layers.GRUCell(U), stateful=True, return_sequences=True)
        )
        layer(X)
        if results:
            layer.set_weights(results[0][1])
        layer.reset_state()
        outs = [np.asarray(layer(X)), np.asarray(layer(X2))]
        layer.reset_state()
        outs.append(np.asarray(layer(X2)))
        results.append((outs, layer.get_weights()))
    for g, e in zip(results[1][0], results[0][0]):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


def test_another_batch_size_is_refused_and_changes_nothing():
    tf = pytest.importorskip("tensorflow")
    keras_layer = tf.keras.layers.RNN(tf.keras.layers.LSTMCell(U), stateful=True)
    keras_layer(X)
    with pytest.raises(ValueError):
        keras_layer(X[:1])
    layer = gtf.keras.layers.RNN(gtf.keras.layers.LSTMCell(U), stateful=True)
    layer(X)
    before = [np.asarray(v) for v in layer.states]
    for kwargs in ({}, {"initial_state": [np.zeros((1, U), np.float32)] * 2}):
        with pytest.raises(ValueError, match=r"\[gradkit\].*expected 2, got 1"):
            layer(X[:1], **kwargs)
    for v, b in zip(layer.states, before):
        np.testing.assert_array_equal(np.asarray(v), b)


def test_a_model_without_a_batch_size_is_refused():
    tf = pytest.importorskip("tensorflow")
    with pytest.raises(ValueError):
        tf.keras.Sequential([tf.keras.Input((T, F)), tf.keras.layers.RNN(tf.keras.layers.GRUCell(U), stateful=True)])
    with pytest.raises(ValueError, match=r"\[gradkit\].*static batch size.*batch_size="):
        gtf.keras.Sequential(
            [gtf.keras.Input((T, F)), gtf.keras.layers.RNN(gtf.keras.layers.GRUCell(U), stateful=True)]
        )


def test_initial_state_given_to_a_stateful_layer_is_used_and_kept():
    tf = pytest.importorskip("tensorflow")
    h0 = np.full((B, U), 0.3, np.float32)
    results = []
    for lib in (tf, gtf):
        layer = lib.keras.layers.RNN(lib.keras.layers.SimpleRNNCell(U), stateful=True)
        layer(X)
        if results:
            layer.set_weights(results[0][1])
        outs = [np.asarray(layer(X, initial_state=[h0])), np.asarray(layer(X2))]
        results.append((outs, layer.get_weights()))
    for g, e in zip(results[1][0], results[0][0]):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


def test_building_a_model_changes_no_state_and_config_round_trips():
    model = gtf.keras.Sequential(
        [
            gtf.keras.Input((T, F), batch_size=B),
            gtf.keras.layers.RNN(gtf.keras.layers.SimpleRNNCell(U, bias_initializer="ones"), stateful=True),
        ]
    )
    for v in model.layers[0].states:
        np.testing.assert_array_equal(np.asarray(v), np.zeros((B, U)))
    again = gtf.keras.layers.RNN.from_config(model.layers[0].get_config())
    assert again.stateful is True and again.states is None
