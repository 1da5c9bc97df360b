"""gradkit.tf's Bidirectional and TimeDistributed against real TensorFlow 2.21 / Keras 3: the
same program text and weights in both; outputs, states and gradients (w.r.t. the inputs, the
initial states and every weight), the weights' names and shapes, get_config / from_config and
compute_output_shape compared."""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
from test_tf_parity_keras_rnn_cells import MASK, X, _comparable, _rnn_call, _states, check  # noqa: E402

import gradkit.tf as gtf  # noqa: E402


def _simple_rnn(tf, **kwargs):
    return tf.keras.layers.RNN(tf.keras.layers.SimpleRNNCell(3, name="cell"), name="rnn", **kwargs)


@pytest.mark.parametrize(
    "merge_mode, return_sequences",
    [("concat", False), ("concat", True), ("sum", True), ("mul", False), ("ave", True), (None, True)],
)
def test_bidirectional_merge_modes_match_keras(merge_mode, return_sequences):
    check(
        lambda tf: tf.keras.layers.Bidirectional(
            _simple_rnn(tf, return_sequences=return_sequences), merge_mode=merge_mode, name="bidirectional"
        ),
        _rnn_call(False, False, None),
    )


@pytest.mark.parametrize("merge_mode", ["concat", None])
def test_bidirectional_states_and_initial_state_match_keras(merge_mode):
    def make(tf):
        lstm = tf.keras.layers.RNN(
            tf.keras.layers.LSTMCell(3, name="lstm_cell"), return_sequences=True, return_state=True, name="lstm"
        )
        return tf.keras.layers.Bidirectional(lstm, merge_mode=merge_mode, name="bidirectional")

    check(make, _rnn_call(True, False, lambda tf: [*_states(tf, "lstm"), *_states(tf, "lstm")]))


@pytest.mark.parametrize("return_sequences", [False, True])
def test_bidirectional_with_a_mask_matches_keras(return_sequences):
    # Keras makes both layers give zeros at masked steps when they return sequences.
    check(
        lambda tf: tf.keras.layers.Bidirectional(_simple_rnn(tf, return_sequences=return_sequences), name="bi"),
        _rnn_call(False, True, None),
    )


@pytest.mark.parametrize("name", ["GRU", "LSTM", "SimpleRNN"])
def test_bidirectional_over_the_recurrent_layers_matches_keras(name):
    # Keras names these layers' weights under a cell ('forward_gru/gru_cell/kernel'); gradkit.tf's
    # recurrent layers hold them themselves ('forward_gru/kernel'): the values are compared.
    check(
        lambda tf: tf.keras.layers.Bidirectional(getattr(tf.keras.layers, name)(2, return_sequences=True)),
        _rnn_call(False, True, None),
        same_names=False,
    )


def test_bidirectional_with_a_backward_layer_matches_keras():
    def make(tf):
        forward = tf.keras.layers.RNN(tf.keras.layers.GRUCell(2, name="g"), name="f")
        backward = tf.keras.layers.RNN(tf.keras.layers.SimpleRNNCell(3, name="s"), go_backwards=True, name="b")
        return tf.keras.layers.Bidirectional(forward, backward_layer=backward, name="bi")

    check(make, _rnn_call(False, False, None))


@pytest.mark.parametrize("name", ["lstm", "forward_lstm", "backward_lstm"])
def test_bidirectional_names_match_keras(name):
    def names(tf):
        layer = tf.keras.layers.Bidirectional(tf.keras.layers.LSTM(2, name=name))
        return layer.forward_layer.name, layer.backward_layer.name, layer.backward_layer.go_backwards

    assert names(gtf) == names(tf_real)


# -- TimeDistributed -------------------------------------------------------------------------------


def _distributed_call(tf, layer, tape=None, x=X, **kwargs):
    x = tf.constant(x)
    if tape is None:
        return layer(x, **kwargs)
    tape.watch(x)
    return layer(x, **kwargs), [x]


_FRAMES = np.random.RandomState(5).randn(2, 3, 4, 4, 2).astype(np.float32)


@pytest.mark.parametrize(
    "make, x, kwargs",
    [
        (lambda tf: tf.keras.layers.Dense(3, activation="tanh", name="dense"), X, {}),
        (lambda tf: tf.keras.layers.Conv2D(2, 3, padding="same", name="conv2d"), _FRAMES, {}),
        # Batch statistics per step, as Keras' per-step calls compute them.
        (lambda tf: tf.keras.layers.BatchNormalization(name="batch_normalization"), X, {"training": True}),
    ],
    ids=["dense", "conv2d", "batch_norm_training"],
)
def test_time_distributed_matches_keras(make, x, kwargs):
    check(
        lambda tf: tf.keras.layers.TimeDistributed(make(tf), name="time_distributed"),
        lambda tf, layer, tape=None: _distributed_call(tf, layer, tape, x, **kwargs),
    )


# -- configs and shapes ----------------------------------------------------------------------------


def _configured(tf):
    layers = tf.keras.layers
    return {
        "Bidirectional": layers.Bidirectional(layers.LSTM(2, return_sequences=True, name="lstm"), name="bi"),
        "Bidirectional_ave": layers.Bidirectional(
            layers.GRU(3, name="g"), merge_mode="ave", backward_layer=layers.GRU(3, go_backwards=True, name="b")
        ),
        "TimeDistributed": layers.TimeDistributed(layers.Dense(3, activation="relu", name="d"), name="td"),
    }


@pytest.mark.parametrize("key", sorted(_configured(gtf)))
def test_configs_match_keras_both_ways(key):
    ours, theirs = _configured(gtf)[key], _configured(tf_real)[key]
    want = _comparable(theirs.get_config())
    want.pop("name") if key == "Bidirectional_ave" else None
    got = _comparable(ours.get_config())
    got.pop("name") if key == "Bidirectional_ave" else None
    assert got == want
    rebuilt = type(ours).from_config(theirs.get_config())
    assert _comparable(rebuilt.get_config()) == _comparable(theirs.get_config())
    assert _comparable(type(theirs).from_config(ours.get_config()).get_config()) == _comparable(ours.get_config())


@pytest.mark.parametrize(
    "make",
    [
        lambda tf: tf.keras.layers.Bidirectional(tf.keras.layers.GRU(3, return_sequences=True, return_state=True)),
        lambda tf: tf.keras.layers.Bidirectional(tf.keras.layers.LSTM(2, return_state=True), merge_mode=None),
        lambda tf: tf.keras.layers.Bidirectional(tf.keras.layers.SimpleRNN(2), merge_mode="mul"),
        lambda tf: tf.keras.layers.TimeDistributed(tf.keras.layers.Dense(4)),
    ],
    ids=["gru_states", "lstm_states_no_merge", "simple_mul", "time_distributed"],
)
def test_compute_output_shape_matches_keras(make):
    shape = (None, 5, 3)

    def shapes(s):
        return [shapes(e) for e in s] if s and isinstance(s[0], (list, tuple)) else list(s)

    assert shapes(make(gtf).compute_output_shape(shape)) == shapes(make(tf_real).compute_output_shape(shape))


def test_bad_arguments_raise_value_error_as_keras():
    for tf in (tf_real, gtf):
        with pytest.raises(ValueError):
            tf.keras.layers.Bidirectional(tf.keras.layers.GRU(2), merge_mode="max")
        with pytest.raises(ValueError):
            tf.keras.layers.Bidirectional(tf.keras.layers.GRU(2), backward_layer=tf.keras.layers.GRU(2))
        with pytest.raises(ValueError):
            tf.keras.layers.TimeDistributed("dense")
    with pytest.raises(ValueError, match=r"\[gradkit\].*go_backwards"):
        gtf.keras.layers.Bidirectional(gtf.keras.layers.GRU(2), backward_layer=gtf.keras.layers.GRU(2))
    with pytest.raises(NotImplementedError, match=r"\[gradkit\].*weights"):
        gtf.keras.layers.Bidirectional(gtf.keras.layers.GRU(2), weights=[np.zeros((3, 6))])


def test_time_distributed_mask_shape_is_checked():
    layer = gtf.keras.layers.TimeDistributed(gtf.keras.layers.Dense(2))
    with pytest.raises(ValueError, match=r"\[gradkit\].*mask"):
        layer(X, mask=np.ones((2, 3), bool))
    assert MASK.shape == X.shape[:2]


def test_a_sequential_of_the_new_layers_round_trips_through_keras_configs():
    def model(tf):
        layers = tf.keras.layers
        return tf.keras.Sequential(
            [
                tf.keras.Input((4, 3)),
                layers.TimeDistributed(layers.EinsumDense("ab,bc->ac", 5, bias_axes="c", name="e"), name="td"),
                layers.Bidirectional(layers.RNN([layers.GRUCell(2, name="g")], return_sequences=True), name="bi"),
                layers.Conv1D(2, 2, name="c"),
                layers.DepthwiseConv1D(2, name="dw"),
            ],
            name="model",
        )

    theirs = model(tf_real)
    ours = gtf.keras.Sequential.from_config(theirs.get_config())
    ours(X)
    assert [tuple(w.shape) for w in ours.weights] == [tuple(w.shape) for w in theirs.weights]
    rebuilt = tf_real.keras.Sequential.from_config(model(gtf).get_config())
    assert [type(layer).__name__ for layer in rebuilt.layers] == [type(layer).__name__ for layer in theirs.layers]


def test_bidirectional_over_a_user_cell_fails_clearly_as_keras_fails():
    # Keras remakes the layer from its config and cannot find a class written in the user's code.
    def make(tf):
        class Cell(tf.keras.layers.Layer):
            def __init__(self, units, **kwargs):
                super().__init__(**kwargs)
                self.units, self.state_size = units, units

            def call(self, x, states):
                return x, states

        return tf.keras.layers.Bidirectional(tf.keras.layers.RNN(Cell(2)))

    with pytest.raises(TypeError):
        make(tf_real)
    with pytest.raises(TypeError, match=r"\[gradkit\].*Bidirectional.*'Cell'"):
        make(gtf)


def test_time_distributed_config_holds_the_inner_layers_build_config_as_keras():
    """Made again from its config, the wrapper's inner layer is built, so set_weights works."""
    x = np.ones((2, 5, 4), np.float32)
    configs = []
    for k in (tf_real.keras, gtf.keras):
        td = k.layers.TimeDistributed(k.layers.Dense(3))
        td(x)
        config = td.get_config()
        configs.append(config["layer"]["build_config"])
        again = k.layers.TimeDistributed.from_config(config)  # (Keras' pops "layer" from config)
        again.set_weights(td.get_weights())
        np.testing.assert_allclose(np.asarray(again(x)), np.asarray(td(x)), rtol=1e-6)
    assert configs[0] == configs[1]


@pytest.mark.parametrize("kind", ["rnn_of_a_cell", "stacked_cells", "bidirectional"])
def test_nested_layer_configs_hold_build_configs_as_keras(kind):
    """RNN's cell, StackedRNNCells' cells and Bidirectional's layers carry their build_config, so a
    layer made from the config is built and takes the original's weights."""
    x = np.ones((2, 5, 4), np.float32)

    def make(k):
        if kind == "rnn_of_a_cell":
            return k.layers.RNN(k.layers.LSTMCell(3))
        if kind == "stacked_cells":
            return k.layers.RNN(k.layers.StackedRNNCells([k.layers.LSTMCell(3), k.layers.GRUCell(2)]))
        return k.layers.Bidirectional(k.layers.LSTM(2))

    def build_configs(config):
        if kind == "rnn_of_a_cell":
            return [config["cell"]["build_config"]]
        if kind == "stacked_cells":
            return [c["build_config"] for c in config["cell"]["config"]["cells"]]
        return [config["layer"]["build_config"], config["backward_layer"]["build_config"]]

    seen = []
    for k in (tf_real.keras, gtf.keras):
        layer = make(k)
        layer(x)
        config = layer.get_config()
        seen.append(build_configs(config))
        again = type(layer).from_config(config)
        again.set_weights(layer.get_weights())
        np.testing.assert_allclose(np.asarray(again(x)), np.asarray(layer(x)), rtol=1e-6)
    assert seen[0] == seen[1]
