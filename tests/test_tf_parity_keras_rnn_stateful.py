"""``stateful=True`` SimpleRNN, GRU, LSTM (and Bidirectional of them) against Keras 3 on
TensorFlow with the same weights: consecutive calls continue from the states the last call
left, ``reset_state`` starts again from zeros, ``fit``/``predict`` carry the states from batch
to batch; and, as an oracle without TensorFlow, the same calls with the states passed by hand
(``return_state`` and ``initial_state``) on a layer without state."""

import numpy as np
import pytest

import gradkit.tf as gtf

B, T, F, U = 2, 4, 3, 2
X = np.sin(0.3 * np.arange(B * T * F, dtype=np.float32)).reshape(B, T, F)
X2 = np.cos(0.2 * np.arange(B * T * F, dtype=np.float32)).reshape(B, T, F)
CASES = {
    "last": {},
    "sequences_backwards": {"return_sequences": True, "go_backwards": True},
    "states": {"return_state": True},
}


def _calls(lib, name, options, weights=None, mask=None):
    layer = getattr(lib.keras.layers, name)(U, stateful=True, **options)
    layer(X)
    if weights is not None:
        layer.set_weights(weights)
    layer.reset_state()
    kwargs = {} if mask is None else {"mask": lib.constant(mask)}
    outs = [layer(X, **kwargs), layer(X2, **kwargs)]
    layer.reset_states()
    outs.append(layer(X2, **kwargs))
    flat = []
    for out in outs:
        flat += [np.asarray(o) for o in (out if isinstance(out, (list, tuple)) else [out])]
    return flat, layer


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("name", ["SimpleRNN", "GRU", "LSTM"])
def test_consecutive_calls_and_reset_match_keras(name, case):
    tf = pytest.importorskip("tensorflow")
    expected, keras_layer = _calls(tf, name, CASES[case])
    got, layer = _calls(gtf, name, CASES[case], keras_layer.get_weights())
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)
    assert len(layer.weights) == len(keras_layer.weights)  # the states are not weights
    assert [tuple(v.shape) for v in layer.states] == [tuple(v.shape) for v in keras_layer.states]
    for v, k in zip(layer.states, keras_layer.states):
        np.testing.assert_allclose(np.asarray(v), np.asarray(k), rtol=1e-5, atol=1e-6)
    assert layer.get_config()["stateful"] is True


def test_masked_stateful_calls_match_keras():
    tf = pytest.importorskip("tensorflow")
    mask = np.array([[True, True, False, True], [False, True, True, True]])
    expected, keras_layer = _calls(tf, "LSTM", {"return_sequences": True}, mask=mask)
    got, _ = _calls(gtf, "LSTM", {"return_sequences": True}, keras_layer.get_weights(), mask=mask)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["SimpleRNN", "GRU", "LSTM"])
def test_stateful_calls_equal_states_passed_by_hand(name):
    """No TensorFlow: a stateful layer equals the same layer fed its last states explicitly,
    in values and in the gradient of both calls (which flows through the carried state)."""
    stateful = getattr(gtf.keras.layers, name)(U, stateful=True, return_sequences=True)
    plain = getattr(gtf.keras.layers, name)(U, return_sequences=True, return_state=True)
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


def test_compiled_calls_carry_the_states_and_compile_once():
    tf = pytest.importorskip("tensorflow")
    keras_layer = tf.keras.layers.GRU(U, stateful=True)
    expected = [np.asarray(keras_layer(x)) for x in (X, X2, X)]
    layer = gtf.keras.layers.GRU(U, stateful=True)
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
            lib.keras.layers.LSTM(U, stateful=True, return_sequences=True),
            lib.keras.layers.SimpleRNN(U, stateful=True),
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
    for g, k in zip(model.layers[0].states, keras_model.layers[0].states):
        np.testing.assert_allclose(np.asarray(g), np.asarray(k), rtol=1e-4, atol=1e-6)


def test_bidirectional_stateful_matches_keras():
    tf = pytest.importorskip("tensorflow")
    keras_layer = tf.keras.layers.Bidirectional(tf.keras.layers.LSTM(U, stateful=True, return_sequences=True))
    expected = [np.asarray(keras_layer(X)), np.asarray(keras_layer(X2))]
    keras_layer.reset_state()
    expected.append(np.asarray(keras_layer(X2)))
    layer = gtf.keras.layers.Bidirectional(gtf.keras.layers.LSTM(U, stateful=True, return_sequences=True))
    layer(X)
    layer.set_weights(keras_layer.get_weights())
    layer.reset_state()
    got = [np.asarray(layer(X)), np.asarray(layer(X2))]
    layer.reset_states()
    got.append(np.asarray(layer(X2)))
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)
    assert len(layer.states) == len(keras_layer.states) == 4
    with pytest.raises(AttributeError, match=r"\[gradkit\].*must be stateful"):
        gtf.keras.layers.Bidirectional(gtf.keras.layers.LSTM(U)).reset_state()


def test_another_batch_size_is_refused_and_changes_nothing():
    tf = pytest.importorskip("tensorflow")
    keras_layer = tf.keras.layers.LSTM(U, stateful=True)
    keras_layer(X)
    with pytest.raises(ValueError):
        keras_layer(X[:1])
    layer = gtf.keras.layers.LSTM(U, stateful=True)
    layer(X)
    before = [np.asarray(v) for v in layer.states]
    with pytest.raises(ValueError, match=r"\[gradkit\].*expected 2, got 1"):
        layer(X[:1])
    for v, b in zip(layer.states, before):
        np.testing.assert_array_equal(np.asarray(v), b)


def test_a_model_without_a_batch_size_is_refused():
    tf = pytest.importorskip("tensorflow")
    for lib in (tf,):
        with pytest.raises(ValueError):
            lib.keras.Sequential([lib.keras.Input((T, F)), lib.keras.layers.GRU(U, stateful=True)])
    with pytest.raises(ValueError, match=r"\[gradkit\].*static batch size.*batch_size="):
        gtf.keras.Sequential([gtf.keras.Input((T, F)), gtf.keras.layers.GRU(U, stateful=True)])


def test_building_a_model_changes_no_state():
    """Shapes are found by running the layers on zeros; a stateful layer keeps zero states."""
    model = gtf.keras.Sequential(
        [gtf.keras.Input((T, F), batch_size=B), gtf.keras.layers.SimpleRNN(U, stateful=True, bias_initializer="ones")]
    )
    for v in model.layers[0].states:
        np.testing.assert_array_equal(np.asarray(v), np.zeros((B, U)))
