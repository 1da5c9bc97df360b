"""``dropout`` and ``recurrent_dropout`` in SimpleRNNCell, GRUCell and LSTMCell called by
themselves and inside ``RNN(cell)``, against Keras 3 on TensorFlow.

As in ``test_tf_parity_keras_rnn_dropout.py``, the two libraries draw different masks, so the
parity tests hand both the same ones: Keras' ``DropoutRNNCell._create_dropout_mask`` and
gradkit's ``rnn_dropout.draw_masks`` are replaced by a table whose n-th draw is the same in
both. A new mask at every draw makes the parity tests check when masks are drawn: once, kept
by later calls until reset, reset by the RNN layer after each call. Without TensorFlow, a cell's
masks are checked against the same cell without dropout fed its masked inputs and states, and
``RNN(cell)`` against the cell called step by step.
"""

import numpy as np
import pytest

import gradkit.tf as gtf
from gradkit.tf._keras import rnn_dropout

B, T, F, U = 2, 3, 3, 2
X = np.sin(0.3 * np.arange(B * T * F, dtype=np.float32)).reshape(B, T, F)
CELLS = ["SimpleRNNCell", "GRUCell", "GRUCell_reset_before", "LSTMCell"]
CASES = {
    "input": {"dropout": 0.3},
    "recurrent": {"recurrent_dropout": 0.4},
    "both": {"dropout": 0.3, "recurrent_dropout": 0.4},
    "input_implementation_1": {"dropout": 0.3, "implementation": 1},
}


def _fixed_masks(index, rate, count, shape):
    """Masks of zeros and 1 / (1 - rate), different per draw, per gate and per row."""
    rng = np.random.default_rng(1000 * index + 7 * shape[-1] + count)
    keep = rng.random((count, *shape)) >= rate
    keep[:, 0, 0] = True  # never an all-dropped case that would hide a misplaced mask
    return (keep / (1.0 - rate)).astype(np.float32)


class _MaskTable:
    """The n-th draw of each library gets the n-th masks of the table (``draws`` counts them)."""

    def __init__(self, fixed=False):
        self.draws = 0
        self.fixed = fixed  # the same masks at every draw (a tf.function may trace more than once)

    def _next(self, rate, count, shape):
        masks = _fixed_masks(0 if self.fixed else self.draws, rate, count, tuple(shape))
        self.draws += 1
        return masks

    def keras_create_mask(self, cell, step_input, dropout_rate):
        count = getattr(cell, "dropout_mask_count", None)
        masks = self._next(dropout_rate, count or 1, tuple(step_input.shape))
        return list(masks) if count is not None else masks[0]

    def gradkit_draw_masks(self, rate, count, shape, seed):
        return gtf.constant(self._next(rate, count, shape))


@pytest.fixture
def tables(monkeypatch):
    """Install a mask table in each library: ``tables(fixed=False)`` gives (Keras', gradkit's)."""
    pytest.importorskip("tensorflow")
    from keras.src.layers.rnn import dropout_rnn_cell

    def install(fixed=False):
        keras_table, gradkit_table = _MaskTable(fixed), _MaskTable(fixed)
        monkeypatch.setattr(
            dropout_rnn_cell.DropoutRNNCell,
            "_create_dropout_mask",
            lambda cell, step_input, rate: keras_table.keras_create_mask(cell, step_input, rate),
        )
        monkeypatch.setattr(rnn_dropout, "draw_masks", gradkit_table.gradkit_draw_masks)
        return keras_table, gradkit_table

    return install


def _cell(lib, name, options):
    options = dict(options)
    if name == "GRUCell_reset_before":
        name, options["reset_after"] = "GRUCell", False
    return getattr(lib.keras.layers, name)(U, **options)


def _weighted_sum(lib, outputs):
    loss = 0.0
    for o in outputs:
        w = np.cos(np.arange(int(np.prod(o.shape)), dtype=np.float32)).reshape(tuple(o.shape))
        loss = loss + lib.reduce_sum(o * lib.constant(w))
    return loss


def _states(name, batch=B):
    h = np.linspace(-0.5, 0.5, batch * U, dtype=np.float32).reshape(batch, U)
    return [h, 0.5 * h[::-1]] if name == "LSTMCell" else [h]


def _cell_calls(lib, name, options, table, weights=None):
    """Three training calls of one cell on different steps, its masks reset before the third;
    their outputs and gradients, and how many masks they drew."""
    cell = _cell(lib, name, options)
    states = [lib.Variable(s) for s in _states(name)]
    cell(X[:, 0], list(states))
    if weights is not None:
        cell.set_weights(weights)
    cell.reset_dropout_mask()
    cell.reset_recurrent_dropout_mask()
    table.draws = 0  # Keras' SimpleRNNCell also draws in an inference call, gradkit's does not
    xs = [lib.Variable(X[:, t]) for t in range(T)]
    outputs = []
    with lib.GradientTape() as tape:
        for t, x in enumerate(xs):
            if t == 2:
                cell.reset_dropout_mask()
                cell.reset_recurrent_dropout_mask()
            out, new_states = cell(x, list(states), training=True)
            outputs += [out, *new_states]
        loss = _weighted_sum(lib, outputs)
    grads = tape.gradient(loss, [*xs, *states, *cell.trainable_variables])
    return [np.asarray(o) for o in outputs + grads], cell.get_weights(), table.draws


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("name", CELLS)
def test_cell_calls_keep_their_masks_until_reset_as_keras(name, case, tables):
    tf = pytest.importorskip("tensorflow")
    if name == "SimpleRNNCell" and "implementation" in CASES[case]:
        pytest.skip("SimpleRNNCell has no implementation argument")
    keras_table, gradkit_table = tables()
    expected, weights, keras_draws = _cell_calls(tf, name, CASES[case], keras_table)
    got, _, draws = _cell_calls(gtf, name, CASES[case], gradkit_table, weights)
    assert draws == keras_draws == 2 * len([k for k in CASES[case] if "dropout" in k])  # once, again after reset
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-5)


def _rnn_calls(lib, cells, options, table, weights=None, compiled=False):
    """Two training calls of RNN(cell) (each draws new masks), outputs and gradients."""
    layer = lib.keras.layers.RNN(cells(lib), **options)
    xv = lib.Variable(X)
    layer(X)
    if weights is not None:
        layer.set_weights(weights)
    table.draws = 0  # Keras' RNN layer also draws in an inference call (and resets), gradkit's does not

    def both_calls(x):
        with lib.GradientTape() as tape:
            outs = []
            for scale in (1.0, -0.5):
                out = layer(x * scale, training=True)
                outs += list(out) if isinstance(out, (list, tuple)) else [out]
            loss = _weighted_sum(lib, outs)
        return outs, tape.gradient(loss, [x, *layer.trainable_variables])

    run = lib.function(both_calls) if compiled else both_calls
    outs, grads = run(xv)
    return [np.asarray(o) for o in [*outs, *grads]], layer


def _stack(lib):
    return [
        lib.keras.layers.SimpleRNNCell(3, dropout=0.3, recurrent_dropout=0.2),
        lib.keras.layers.LSTMCell(U, recurrent_dropout=0.4),
        lib.keras.layers.GRUCell(U, dropout=0.25, reset_after=False),
    ]


RNN_CASES = {
    "simple_rnn": (lambda lib: lib.keras.layers.SimpleRNNCell(U, dropout=0.3, recurrent_dropout=0.4), {}),
    "gru_sequences_backwards": (
        lambda lib: lib.keras.layers.GRUCell(U, dropout=0.3, recurrent_dropout=0.4),
        {"return_sequences": True, "go_backwards": True},
    ),
    "lstm_states": (
        lambda lib: lib.keras.layers.LSTMCell(U, dropout=0.3, recurrent_dropout=0.4),
        {"return_state": True},
    ),
    "stacked": (_stack, {"return_sequences": True}),
}


@pytest.mark.parametrize("case", sorted(RNN_CASES))
def test_rnn_of_a_dropout_cell_draws_new_masks_per_call_as_keras(case, tables):
    tf = pytest.importorskip("tensorflow")
    cells, options = RNN_CASES[case]
    keras_table, gradkit_table = tables()
    expected, keras_layer = _rnn_calls(tf, cells, options, keras_table)
    got, layer = _rnn_calls(gtf, cells, options, gradkit_table, keras_layer.get_weights())
    assert gradkit_table.draws == keras_table.draws
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("case", ["gru_sequences_backwards", "stacked"])
def test_compiled_rnn_of_a_dropout_cell_matches_keras(case, tables):
    tf = pytest.importorskip("tensorflow")
    cells, options = RNN_CASES[case]
    keras_table, gradkit_table = tables(fixed=True)
    expected, keras_layer = _rnn_calls(tf, cells, options, keras_table, compiled=True)
    got, _ = _rnn_calls(gtf, cells, options, gradkit_table, keras_layer.get_weights(), compiled=True)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-5)


def test_stateful_rnn_of_a_dropout_cell_matches_keras(tables):
    tf = pytest.importorskip("tensorflow")
    keras_table, gradkit_table = tables()
    results = []
    for lib, table in ((tf, keras_table), (gtf, gradkit_table)):
        layer = lib.keras.layers.RNN(lib.keras.layers.LSTMCell(U, dropout=0.3, recurrent_dropout=0.4), stateful=True)
        layer(X)
        if results:
            layer.set_weights(results[0][1])
        layer.reset_state()
        table.draws = 0
        outs = [np.asarray(layer(X, training=True)), np.asarray(layer(X[:, ::-1], training=True))]
        results.append((outs + [np.asarray(v) for v in layer.states], layer.get_weights()))
    assert gradkit_table.draws == keras_table.draws
    for g, e in zip(results[1][0], results[0][0]):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["SimpleRNNCell", "GRUCell", "LSTMCell"])
def test_inference_calls_ignore_dropout_as_keras(name):
    tf = pytest.importorskip("tensorflow")
    options = {"dropout": 0.5, "recurrent_dropout": 0.5}
    keras_cell = getattr(tf.keras.layers, name)(U, **options)
    states = _states(name)
    expected = keras_cell(X[:, 0], states)
    cell = getattr(gtf.keras.layers, name)(U, **options)
    cell(X[:, 0], states)
    cell.set_weights(keras_cell.get_weights())
    for training in (None, False):
        out, new_states = cell(X[:, 0], states, training=training)
        np.testing.assert_allclose(np.asarray(out), np.asarray(expected[0]), rtol=1e-5, atol=1e-6)
        for s, e in zip(new_states, expected[1]):
            np.testing.assert_allclose(np.asarray(s), np.asarray(e), rtol=1e-5, atol=1e-6)


def test_rate_rules_of_cells_as_keras():
    tf = pytest.importorskip("tensorflow")
    # A GRUCell or LSTMCell drops nothing at a rate of 1; a SimpleRNNCell drops everything.
    for name in ("GRUCell", "SimpleRNNCell"):
        keras_cell = getattr(tf.keras.layers, name)(U, dropout=1.0, recurrent_dropout=1.0)
        expected, _ = keras_cell(X[:, 0], _states(name), training=True)
        cell = getattr(gtf.keras.layers, name)(U, dropout=1.0, recurrent_dropout=1.0)
        cell(X[:, 0], _states(name))
        cell.set_weights(keras_cell.get_weights())
        got, _ = cell(X[:, 0], _states(name), training=True)
        np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=1e-5, atol=1e-6)
    for lib in (tf, gtf):  # rates clamped into [0, 1], as the config says
        cfg = lib.keras.layers.LSTMCell(U, dropout=-0.5, recurrent_dropout=1.5).get_config()
        assert (cfg["dropout"], cfg["recurrent_dropout"]) == (0.0, 1.0)


def test_masks_as_keras_returns_them():
    tf = pytest.importorskip("tensorflow")
    for lib in (tf, gtf):
        per_gate = lib.keras.layers.LSTMCell(U, dropout=0.5, recurrent_dropout=0.5)
        one = lib.keras.layers.GRUCell(U, dropout=0.5)
        step, h = np.ones((4, F), np.float32), np.ones((4, U), np.float32)
        masks = per_gate.get_dropout_mask(step)
        assert per_gate.dropout_mask_count == 4 and len(masks) == 4
        assert [tuple(m.shape) for m in per_gate.get_recurrent_dropout_mask(h)] == [(4, U)] * 4
        assert tuple(one.get_dropout_mask(step).shape) == (4, F)
        assert one.get_recurrent_dropout_mask(h) is None
        assert not hasattr(one, "dropout_mask_count")
        for again, first in zip(per_gate.get_dropout_mask(step), masks):  # kept: the same masks again
            np.testing.assert_array_equal(np.asarray(again), np.asarray(first))


# Without TensorFlow.


def _identity_cell(rate, **options):
    """A linear SimpleRNNCell whose output is its input masked by the input dropout (identity
    kernel, zero recurrent kernel): the mask is visible in the output."""
    cell = gtf.keras.layers.SimpleRNNCell(F, activation="linear", dropout=rate, **options)
    cell(np.ones((1, F), np.float32), [np.zeros((1, F), np.float32)])
    cell.set_weights([np.eye(F, dtype=np.float32), np.zeros((F, F), np.float32), np.zeros(F, np.float32)])
    return cell


def test_kept_masks_are_reused_until_reset_and_hold_keras_values():
    rate, batch = 0.5, 64
    cell = _identity_cell(rate, seed=3)
    ones, zeros = np.ones((batch, F), np.float32), [np.zeros((batch, F), np.float32)]
    first = np.asarray(cell(ones, zeros, training=True)[0])
    assert set(np.unique(first).tolist()) <= {0.0, 1.0 / (1.0 - rate)}
    assert 0.3 < np.mean(first == 0.0) < 0.7
    np.testing.assert_array_equal(np.asarray(cell(ones, zeros, training=True)[0]), first)
    np.testing.assert_array_equal(np.asarray(cell.get_dropout_mask(ones)), first)
    cell.reset_dropout_mask()
    assert not np.array_equal(np.asarray(cell(ones, zeros, training=True)[0]), first)


def test_a_batch_of_another_shape_needs_a_reset():
    cell = _identity_cell(0.5)
    cell(np.ones((2, F), np.float32), [np.zeros((2, F), np.float32)], training=True)
    with pytest.raises(ValueError, match=r"\[gradkit\].*dropout mask of shape \(2, 3\).*\(4, 3\).*reset_dropout_mask"):
        cell(np.ones((4, F), np.float32), [np.zeros((4, F), np.float32)], training=True)
    cell.reset_dropout_mask()
    out, _ = cell(np.ones((4, F), np.float32), [np.zeros((4, F), np.float32)], training=True)
    assert tuple(out.shape) == (4, F)


def test_traced_masks_are_shared_within_a_run_new_at_each_run_and_stay_in_their_trace():
    cell = _identity_cell(0.5)
    ones, zeros = np.ones((32, F), np.float32), [np.zeros((32, F), np.float32)]
    eager_mask = np.asarray(cell(ones, zeros, training=True)[0])
    traces = []

    @gtf.function
    def steps(x):
        traces.append(1)
        return gtf.stack([cell(x, zeros, training=True)[0] for _ in range(T)])

    runs = [np.asarray(steps(ones)) for _ in range(3)]
    traced = len(traces)
    runs.append(np.asarray(steps(ones)))
    assert len(traces) == traced  # compiled once
    for run in runs:
        for t in range(1, T):
            np.testing.assert_array_equal(run[t], run[0])  # one mask for every call within a run
    assert not np.array_equal(runs[1][0], runs[2][0])  # new masks at each run
    # The eager calls keep their own mask, and no traced value is left on the cell.
    np.testing.assert_array_equal(np.asarray(cell(ones, zeros, training=True)[0]), eager_mask)
    assert [key for key in cell._kept_dropout_masks if key[1] != "eager"] == []


CELL_ORACLES = {
    "SimpleRNNCell": {"dropout": 0.3, "recurrent_dropout": 0.4},
    "GRUCell": {"dropout": 0.3},
    "LSTMCell": {"dropout": 0.3},
}


@pytest.mark.parametrize("name", sorted(CELL_ORACLES))
def test_a_dropout_cell_equals_the_plain_cell_fed_its_masked_inputs(name):
    options = CELL_ORACLES[name]
    cell = getattr(gtf.keras.layers, name)(U, **options)
    plain = getattr(gtf.keras.layers, name)(U)
    x = gtf.Variable(X[:, 0])
    states = [gtf.Variable(s) for s in _states(name)]
    cell(x, list(states))
    plain(x, list(states))
    plain.set_weights(cell.get_weights())
    input_mask = cell.get_dropout_mask(x)
    state_mask = cell.get_recurrent_dropout_mask(states[0])
    with gtf.GradientTape(persistent=True) as tape:
        got, got_states = cell(x, list(states), training=True)
        masked_states = list(states)
        if state_mask is not None:
            masked_states[0] = states[0] * state_mask
        want, want_states = plain(x * input_mask, masked_states)
        loss_got = _weighted_sum(gtf, [got, *got_states])
        loss_want = _weighted_sum(gtf, [want, *want_states])
    for g, w in zip([got, *got_states], [want, *want_states]):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6, atol=1e-6)
    for g, w in zip(
        tape.gradient(loss_got, [x, *states, *cell.trainable_variables]),
        tape.gradient(loss_want, [x, *states, *plain.trainable_variables]),
    ):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["SimpleRNNCell", "GRUCell", "LSTMCell", "stacked"])
def test_rnn_of_a_dropout_cell_equals_the_cell_called_step_by_step(name):
    """The layer uses the masks its cell keeps (here drawn by hand first) and resets them."""
    if name == "stacked":
        cell = gtf.keras.layers.StackedRNNCells(_stack(gtf))
    else:
        cell = getattr(gtf.keras.layers, name)(U, dropout=0.3, recurrent_dropout=0.4)
    layer = gtf.keras.layers.RNN(cell, return_sequences=True, return_state=True)
    layer(X)
    x = gtf.Variable(X)
    with gtf.GradientTape(persistent=True) as tape:
        states = layer.get_initial_state(B)
        cells = cell.cells if name == "stacked" else [cell]
        width = F
        for c, s in zip(cells, states if name == "stacked" else [states]):
            c.get_dropout_mask(np.ones((B, width), np.float32))
            c.get_recurrent_dropout_mask(s[0])
            width = c.units
        steps = []
        for t in range(T):
            out, states = cell(x[:, t], states, training=True)
            steps.append(out)
        by_hand = [gtf.stack(steps, axis=1), *states]
        got = layer(x, training=True)
        loss_hand = _weighted_sum(gtf, gtf.nest.flatten(by_hand))
        loss_got = _weighted_sum(gtf, gtf.nest.flatten(got))
    for g, w in zip(gtf.nest.flatten(got), gtf.nest.flatten(by_hand)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-6)
    for g, w in zip(
        tape.gradient(loss_got, [x, *layer.trainable_variables]),
        tape.gradient(loss_hand, [x, *layer.trainable_variables]),
    ):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-6)
    for c in cells:  # the layer reset the masks: the cell keeps none
        assert c._kept_dropout_masks == {}


def test_config_keeps_the_rates():
    cell = gtf.keras.layers.GRUCell(U, dropout=0.25, recurrent_dropout=0.5, seed=7)
    config = cell.get_config()
    assert (config["dropout"], config["recurrent_dropout"], config["seed"]) == (0.25, 0.5, 7)
    again = gtf.keras.layers.GRUCell.from_config(config)
    assert (again.dropout, again.recurrent_dropout, again.dropout_mask_count) == (0.25, 0.5, 3)
