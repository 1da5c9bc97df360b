"""SimpleRNN, LSTM and GRU called with ``mask=`` (batch, timesteps): at a masked step the states
stay as they were and the output is the previous step's (zeros with ``zero_output_for_mask``),
as in Keras 3. Outputs, states and gradients (inputs and weights) against Keras on the same
weights, and SimpleRNN against a NumPy loop without TensorFlow."""

import numpy as np
import pytest

import gradkit.tf as gtf

X = np.sin(0.3 * np.arange(2 * 4 * 3, dtype=np.float32)).reshape(2, 4, 3)
MASKS = {
    "gaps": np.array([[True, True, False, True], [False, False, True, True]]),
    "float_all_masked_row": np.array([[1, 0, 1, 1], [0, 0, 0, 0]], np.float32),
}
OPTIONS = {
    "last": {},
    "sequences": {"return_sequences": True},
    "states_backwards": {"return_state": True, "go_backwards": True},
    "zero_output": {"zero_output_for_mask": True, "return_sequences": True},
    "zero_output_last": {"zero_output_for_mask": True},
}


def _run(lib, name, options, mask, initial, weights=None):
    layer = getattr(lib.keras.layers, name)(2, **options)
    xv = lib.Variable(X)
    states = None
    if initial:
        states = [lib.constant(np.full((2, 2), 0.5, np.float32))] * (2 if name == "LSTM" else 1)
    if weights is not None:
        layer(xv)
        layer.set_weights(weights)
    with lib.GradientTape() as tape:
        out = layer(xv, initial_state=states, mask=lib.constant(mask))
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
        loss = 0.0
        for o in outs:
            w = np.cos(np.arange(int(np.prod(o.shape)), dtype=np.float32)).reshape(tuple(o.shape))
            loss = loss + lib.reduce_sum(o * lib.constant(w))
    grads = tape.gradient(loss, [xv, *layer.trainable_variables])
    return [np.asarray(o) for o in outs], [np.asarray(g) for g in grads], layer.get_weights()


@pytest.mark.parametrize("initial", [False, True])
@pytest.mark.parametrize("mask", sorted(MASKS))
@pytest.mark.parametrize("options", sorted(OPTIONS))
@pytest.mark.parametrize("name", ["SimpleRNN", "LSTM", "GRU"])
def test_masked_recurrent_layers_match_keras(name, options, mask, initial):
    tf = pytest.importorskip("tensorflow")
    expected, expected_grads, weights = _run(tf, name, OPTIONS[options], MASKS[mask], initial)
    got, got_grads, _ = _run(gtf, name, OPTIONS[options], MASKS[mask], initial, weights)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)
    for g, e in zip(got_grads, expected_grads):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("zero_output", [False, True])
@pytest.mark.parametrize("go_backwards", [False, True])
def test_masked_simple_rnn_matches_a_numpy_loop(go_backwards, zero_output):
    mask = MASKS["gaps"]
    layer = gtf.keras.layers.SimpleRNN(
        2, return_sequences=True, return_state=True, go_backwards=go_backwards, zero_output_for_mask=zero_output
    )
    outputs, state = layer(gtf.constant(X), mask=gtf.constant(mask))
    kernel, recurrent, bias = layer.get_weights()
    xs, ms = (X[:, ::-1], mask[:, ::-1]) if go_backwards else (X, mask)
    h, previous, expected = np.zeros((2, 2), np.float32), np.zeros((2, 2), np.float32), []
    for t in range(xs.shape[1]):
        new = np.tanh(xs[:, t] @ kernel + h @ recurrent + bias)
        keep = ms[:, t, None]
        h = np.where(keep, new, h)
        previous = np.where(keep, new, 0.0 if zero_output else previous)
        expected.append(previous)
    np.testing.assert_allclose(outputs.numpy(), np.stack(expected, axis=1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(state.numpy(), h, rtol=1e-5, atol=1e-6)


def test_a_mask_of_another_shape_is_refused():
    with pytest.raises(ValueError, match=r"^\[gradkit\].*\(batch, timesteps\)"):
        gtf.keras.layers.GRU(2)(gtf.constant(X), mask=gtf.constant(np.ones((2, 3), bool)))
