"""gradkit.tf's SimpleRNNCell, LSTMCell, GRUCell, StackedRNNCells and the generic RNN layer
against real TensorFlow 2.21 / Keras 3: the same program text and the same weights in both;
outputs, states and gradients (w.r.t. the inputs, the initial states and every weight), the
weights' names and shapes, and get_config / from_config compared. RNN runs gradkit's cells as
one scan, and a user-written cell step by step."""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")

import gradkit.tf as gtf  # noqa: E402

_rs = np.random.RandomState(0)
X = _rs.randn(2, 4, 3).astype(np.float32)
STEP = _rs.randn(2, 3).astype(np.float32)
MASK = np.array([[True, False, True, True], [False, False, True, False]])


def _flat(x):
    if isinstance(x, (list, tuple)):
        return [leaf for e in x for leaf in _flat(e)]
    return [x]


def _structure(x):
    return [_structure(e) for e in x] if isinstance(x, (list, tuple)) else "t"


def _run(tf, make, call, weights):
    """``make(tf)`` built by a first call, ``weights`` assigned (or made from the shapes), then
    ``call(tf, layer)`` under a tape: its outputs, the gradients of a weighted sum of them w.r.t.
    the tensors ``call`` returns as sources and the trainable weights, and the weights' names."""
    layer = make(tf)
    call(tf, layer)
    if callable(weights):
        weights = weights([tuple(v.shape) for v in layer.weights])
    for v, w in zip(layer.weights, weights):
        v.assign(w)
    with tf.GradientTape(persistent=True) as tape:
        out, sources = call(tf, layer, tape)
        loss = 0.0
        for i, o in enumerate(_flat(out)):
            loss = loss + tf.reduce_sum(o * np.random.RandomState(10 + i).randn(*o.shape).astype(np.float32))
    grads = tape.gradient(loss, [*sources, *layer.trainable_variables])
    return {
        "structure": _structure(out),
        "out": [np.asarray(o) for o in _flat(out)],
        "grads": [None if g is None else np.asarray(g) for g in grads],
        "names": [v.name if tf is gtf else v.path + ":0" for v in layer.weights],
        "shapes": [tuple(v.shape) for v in layer.weights],
    }


def check(make, call, same_names=True):
    weights = []

    def random_weights(shapes):
        weights.extend(np.float32(0.5 * np.random.RandomState(3 + i).randn(*s)) for i, s in enumerate(shapes))
        return weights

    want = _run(tf_real, make, call, random_weights)
    got = _run(gtf, make, call, weights)
    assert (got["shapes"], got["structure"]) == (want["shapes"], want["structure"])
    assert got["names"] == want["names"] or not same_names
    for g, w in zip(got["out"], want["out"]):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
    assert [g is None for g in got["grads"]] == [w is None for w in want["grads"]]
    for g, w in zip(got["grads"], want["grads"]):
        if w is not None:
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


CELLS = {
    "simple": lambda tf, **kw: tf.keras.layers.SimpleRNNCell(3, name="simple_rnn_cell", **kw),
    "simple_relu_nobias": lambda tf, **kw: tf.keras.layers.SimpleRNNCell(
        3, activation="relu", use_bias=False, name="simple_rnn_cell", **kw
    ),
    "lstm": lambda tf, **kw: tf.keras.layers.LSTMCell(3, name="lstm_cell", **kw),
    "lstm_hard_sigmoid": lambda tf, **kw: tf.keras.layers.LSTMCell(
        2, recurrent_activation="hard_sigmoid", name="lstm_cell", **kw
    ),
    "gru": lambda tf, **kw: tf.keras.layers.GRUCell(3, name="gru_cell", **kw),
    "gru_reset_before": lambda tf, **kw: tf.keras.layers.GRUCell(3, reset_after=False, name="gru_cell", **kw),
}


def _states(tf, cell_key, batch=2):
    units = 2 if cell_key == "lstm_hard_sigmoid" else 3
    n = 2 if cell_key.startswith("lstm") else 1
    return [tf.constant(np.float32(0.3 * np.random.RandomState(7 + i).randn(batch, units))) for i in range(n)]


@pytest.mark.parametrize("key", sorted(CELLS))
def test_cell_step_matches_keras(key):
    def call(tf, cell, tape=None):
        x, states = tf.constant(STEP), _states(tf, key)
        if tape is not None:
            for t in (x, *states):
                tape.watch(t)
        return cell(x, states), [x, *states]

    check(lambda tf: CELLS[key](tf), lambda tf, cell, tape=None: call(tf, cell, tape) if tape else call(tf, cell)[0])


def test_one_state_cell_called_with_one_tensor_gives_one_tensor_as_keras():
    for tf in (gtf, tf_real):
        _, state = tf.keras.layers.GRUCell(2)(STEP, np.zeros((2, 2), np.float32))
        assert not isinstance(state, (list, tuple))
        _, state = tf.keras.layers.GRUCell(2)(STEP, [np.zeros((2, 2), np.float32)])
        assert isinstance(state, list) and len(state) == 1


RNN_OPTIONS = {
    "last": ({}, False, False),
    "sequences_states": ({"return_sequences": True, "return_state": True}, False, False),
    "backwards_states": ({"go_backwards": True, "return_state": True, "unroll": True}, False, False),
    "initial_state": ({"return_state": True}, True, False),
    "mask": ({"return_sequences": True, "return_state": True}, False, True),
    "mask_zero_output_backwards": (
        {"zero_output_for_mask": True, "return_sequences": True, "go_backwards": True},
        True,
        True,
    ),
    "mask_last": ({}, False, True),
}


def _rnn_call(initial, masked, states_of):
    def call(tf, layer, tape=None):
        x = tf.constant(X)
        states = states_of(tf) if initial else None
        sources = [x, *(_flat(states) if states else [])]
        if tape is not None:
            for t in sources:
                tape.watch(t)
        out = layer(x, initial_state=states, mask=tf.constant(MASK) if masked else None)
        return (out, sources) if tape is not None else out

    return call


# Every option with the LSTM cell; the others with the options that exercise their states.
_CELL_OPTIONS = [("lstm", options) for options in sorted(RNN_OPTIONS)] + [
    (key, options)
    for key in sorted(CELLS)
    if key != "lstm"
    for options in ("initial_state", "mask_zero_output_backwards")
]


@pytest.mark.parametrize("key, options", _CELL_OPTIONS)
def test_rnn_over_a_cell_matches_keras(key, options):
    kwargs, initial, masked = RNN_OPTIONS[options]
    check(
        lambda tf: tf.keras.layers.RNN(CELLS[key](tf), name="rnn", **kwargs),
        _rnn_call(initial, masked, lambda tf: _states(tf, key)),
    )


_SOME_OPTIONS = ["backwards_states", "initial_state", "mask", "mask_zero_output_backwards"]


@pytest.mark.parametrize("options", _SOME_OPTIONS)
def test_rnn_over_stacked_cells_matches_keras(options):
    kwargs, initial, masked = RNN_OPTIONS[options]

    def make(tf):
        cells = [CELLS["lstm"](tf), CELLS["gru"](tf), CELLS["simple_relu_nobias"](tf)]
        return tf.keras.layers.RNN(tf.keras.layers.StackedRNNCells(cells, name="stacked"), name="rnn", **kwargs)

    check(make, _rnn_call(initial, masked, lambda tf: [_states(tf, "lstm"), _states(tf, "gru"), _states(tf, "simple")]))


def test_rnn_takes_a_list_of_cells_as_keras():
    def names(tf):
        layer = tf.keras.layers.RNN([tf.keras.layers.SimpleRNNCell(2), tf.keras.layers.GRUCell(3)], return_state=True)
        out = layer(X)
        return type(layer.cell).__name__, _structure(out), [tuple(o.shape) for o in _flat(out)]

    assert names(gtf) == names(tf_real)


def _minimal_cell(tf):
    """The cell of Keras' RNN docstring, with a tanh, and a second state."""

    class MinimalRNNCell(tf.keras.layers.Layer):
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
            prev_output, total = states
            h = tf.matmul(inputs, self.kernel)
            output = tf.tanh(h + tf.matmul(prev_output, self.recurrent_kernel))
            return output, [output, total + output]

    return MinimalRNNCell(3, name="minimal")


@pytest.mark.parametrize("options", _SOME_OPTIONS)
def test_rnn_over_a_user_written_cell_matches_keras(options):
    kwargs, initial, masked = RNN_OPTIONS[options]
    check(
        lambda tf: tf.keras.layers.RNN(_minimal_cell(tf), name="rnn", **kwargs),
        _rnn_call(initial, masked, lambda tf: _states(tf, "lstm")),
    )


def test_rnn_over_a_user_cell_stacked_with_a_builtin_one_matches_keras():
    def make(tf):
        cells = [_minimal_cell(tf), CELLS["gru"](tf)]
        return tf.keras.layers.RNN(
            tf.keras.layers.StackedRNNCells(cells, name="stacked"), return_state=True, name="rnn"
        )

    check(make, _rnn_call(False, True, None))


def test_rnn_step_in_tf_function_matches_keras():
    def run(tf):
        tf.keras.utils.set_random_seed(0)
        layer = tf.keras.layers.RNN([_minimal_cell(tf), CELLS["lstm"](tf)], return_sequences=True, name="rnn")
        layer(X)
        layer.set_weights(
            [
                np.float32(0.4 * np.cos(np.arange(np.prod(s)))).reshape(s)
                for s in [tuple(w.shape) for w in layer.weights]
            ]
        )

        @tf.function
        def step(x):
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(layer(x) ** 2)
            return loss, tape.gradient(loss, layer.trainable_variables)

        loss, grads = step(tf.constant(X))
        return float(loss), [np.asarray(g) for g in grads]

    (got, got_grads), (want, want_grads) = run(gtf), run(tf_real)
    np.testing.assert_allclose(got, want, rtol=1e-5)
    for g, w in zip(got_grads, want_grads):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-6)


# -- configs ---------------------------------------------------------------------------------------


def _configured(tf):
    layers = tf.keras.layers
    return {
        "SimpleRNNCell": layers.SimpleRNNCell(4, activation="relu", use_bias=False, seed=3, name="a"),
        "LSTMCell": layers.LSTMCell(2, unit_forget_bias=False, recurrent_activation="hard_sigmoid", name="b"),
        "GRUCell": layers.GRUCell(3, reset_after=False, kernel_initializer="he_normal", name="c"),
        "StackedRNNCells": layers.StackedRNNCells(
            [layers.GRUCell(2, name="g"), layers.LSTMCell(3, name="l")], name="s"
        ),
        "RNN": layers.RNN(
            layers.LSTMCell(2, name="l"), return_sequences=True, go_backwards=True, unroll=True, name="r"
        ),
        "RNN_stacked": layers.RNN([layers.SimpleRNNCell(2, name="x"), layers.GRUCell(1, name="y")], name="r"),
    }


def _comparable(config):
    """Keras' config without its build_config entries and without the name of a stack RNN made
    itself from a list of cells (a unique name, which depends on what ran before)."""
    if isinstance(config, dict):
        config = {k: _comparable(v) for k, v in config.items() if k != "build_config"}
        if config.get("class_name") == "StackedRNNCells" and config["config"]["name"].startswith("stacked_rnn_cells"):
            config["config"] = {k: v for k, v in config["config"].items() if k != "name"}
        return config
    if isinstance(config, list):
        return [_comparable(v) for v in config]
    return config


@pytest.mark.parametrize("key", sorted(_configured(gtf)))
def test_configs_match_keras_both_ways(key):
    ours, theirs = _configured(gtf)[key], _configured(tf_real)[key]
    want = _comparable(theirs.get_config())
    assert _comparable(ours.get_config()) == want
    assert _comparable(type(theirs).from_config(ours.get_config()).get_config()) == want
    rebuilt = type(ours).from_config(theirs.get_config())
    assert type(rebuilt) is type(ours)
    assert _comparable(rebuilt.get_config()) == want


@pytest.mark.parametrize("key", ["RNN", "RNN_stacked"])
def test_compute_output_shape_matches_keras(key):
    for batch in (2, None):
        shape = (batch, 5, 3)
        for options in ({}, {"return_state": True, "return_sequences": True}):

            def make(tf, options=options):
                layer = _configured(tf)[key]
                layer.return_state = options.get("return_state", False)
                layer.return_sequences = options.get("return_sequences", layer.return_sequences)
                return layer

            assert _structure_of_shapes(make(gtf).compute_output_shape(shape)) == _structure_of_shapes(
                make(tf_real).compute_output_shape(shape)
            )


def _structure_of_shapes(s):
    if isinstance(s, (list, tuple)) and s and isinstance(s[0], (list, tuple)):
        return [_structure_of_shapes(e) for e in s]
    return tuple(s)


def _stacked_states_model(tf):
    K = tf.keras
    inputs = K.Input((4, 3))
    cells = [K.layers.GRUCell(3), K.layers.SimpleRNNCell(2), K.layers.LSTMCell(2)]
    out, gru_state, rnn_state, lstm_states = K.layers.RNN(cells, return_state=True)(inputs)
    merged = K.layers.Concatenate()([out, gru_state, rnn_state, *lstm_states])
    dense = K.layers.Dense(1, kernel_initializer="ones")
    model = K.Model(inputs, [dense(merged), gru_state, lstm_states])
    symbolic = [_structure_of_shapes(t.shape) for t in (out, gru_state, rnn_state)]
    symbolic.append([tuple(t.shape) for t in lstm_states])
    return model, symbolic


def test_stacked_cells_symbolic_states_are_laid_out_as_keras():
    # Keras' symbolic call gives a one-state cell's state as one tensor (its eager call as a list
    # of one), so the functional model takes and returns them unnested.
    ours, theirs = _stacked_states_model(gtf), _stacked_states_model(tf_real)
    assert ours[1] == theirs[1] == [(None, 2), (None, 3), (None, 2), [(None, 2), (None, 2)]]
    theirs[0].set_weights([np.asarray(w) for w in ours[0].get_weights()])
    ours_out, theirs_out = ours[0](gtf.constant(X)), theirs[0](tf_real.constant(X))
    assert _structure(ours_out) == _structure(theirs_out) == ["t", "t", ["t", "t"]]
    for a, b in zip(_flat(ours_out), _flat(theirs_out)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)


# -- errors ----------------------------------------------------------------------------------------


def test_a_cell_without_state_size_raises_value_error_as_keras():
    class NoStates(gtf.keras.layers.Layer):
        def call(self, inputs, states):
            return inputs, states

    class NoStatesTF(tf_real.keras.layers.Layer):
        def call(self, inputs, states):
            return inputs, states

    with pytest.raises(ValueError):
        tf_real.keras.layers.RNN(NoStatesTF())
    with pytest.raises(ValueError, match=r"\[gradkit\].*state_size"):
        gtf.keras.layers.RNN(NoStates())


def test_refused_options_say_so():
    with pytest.raises(NotImplementedError, match=r"\[gradkit\].*activity_regularizer"):
        gtf.keras.layers.LSTMCell(2, activity_regularizer="l2")


def test_wrong_initial_state_says_what_it_takes():
    layer = gtf.keras.layers.RNN(gtf.keras.layers.LSTMCell(2))
    with pytest.raises(ValueError, match=r"\[gradkit\].*state"):
        layer(X, initial_state=[np.zeros((2, 2), np.float32)])


def test_a_user_cell_returning_the_wrong_states_says_what_a_cell_returns():
    class Forgetful(gtf.keras.layers.Layer):
        state_size = [2, 2]

        def call(self, inputs, states):
            return states[0], [states[0]]  # one state back for two

    with pytest.raises(ValueError, match=r"\[gradkit\].*returned 1 states for 2"):
        gtf.keras.layers.RNN(Forgetful())(X)


def test_a_user_cell_with_nested_state_sizes_needs_its_own_initial_state():
    class Nested(gtf.keras.layers.Layer):
        state_size = [[2, 2]]

        def call(self, inputs, states):
            return states[0][0], states

    with pytest.raises(ValueError, match=r"\[gradkit\].*get_initial_state"):
        gtf.keras.layers.RNN(Nested())(X)
