"""A recurrent layer's ``cell`` (Keras 3's ``LSTM(...).cell``): the cell of its options, one step
of the layer computed with the layer's own weights. Oracles: the layer run on a one-step sequence
(the same step), the weights' identity, and Keras' cell from the same weights."""

import numpy as np
import pytest

import gradkit.tf as gtf

keras = gtf.keras
X = np.random.RandomState(0).randn(2, 1, 3).astype(np.float32)
KINDS = {"LSTM": ("LSTMCell", 2), "GRU": ("GRUCell", 1), "SimpleRNN": ("SimpleRNNCell", 1)}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_the_cell_steps_as_the_layer_with_its_weights(kind):
    cell_class, n_states = KINDS[kind]
    layer = getattr(keras.layers, kind)(4, return_state=True)
    out, *states = layer(X)
    cell = layer.cell
    assert type(cell).__name__ == cell_class and cell.units == 4
    assert cell.kernel is layer.kernel and cell.recurrent_kernel is layer.recurrent_kernel
    zeros = [np.zeros((2, 4), np.float32)] * n_states
    step_out, step_states = cell(X[:, 0], zeros if n_states > 1 else zeros[0])
    np.testing.assert_allclose(step_out.numpy(), out.numpy(), rtol=1e-6)
    for got, want in zip(step_states if n_states > 1 else [step_states], states):
        np.testing.assert_allclose(np.asarray(got), want.numpy(), rtol=1e-6)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_matches_keras(kind):
    pytest.importorskip("tensorflow")
    import keras as real_keras

    theirs = getattr(real_keras.layers, kind)(4)
    ours = getattr(keras.layers, kind)(4)
    theirs(X)
    ours(X)
    ours.set_weights(theirs.get_weights())
    zeros = [np.zeros((2, 4), np.float32)] * KINDS[kind][1]
    states = zeros if len(zeros) > 1 else zeros[0]
    want = np.asarray(theirs.cell(X[:, 0], states)[0])
    np.testing.assert_allclose(ours.cell(X[:, 0], states)[0].numpy(), want, rtol=1e-5, atol=1e-6)
    assert ours.cell.get_config().keys() == theirs.cell.get_config().keys()
