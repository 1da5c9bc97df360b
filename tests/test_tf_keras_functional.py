"""Keras' functional API (``tf.keras.Input``, layers called on KerasTensors,
``tf.keras.Model(inputs, outputs)``) against Keras 3 on TensorFlow: the same graph from the same
weights gives the same outputs, gradients, training and summary."""

import sys
from pathlib import Path

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")

import gradkit.tf as gtf  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from _summary_table import summary  # noqa: E402

_RNG = np.random.default_rng(11)
_X = _RNG.normal(size=(6, 5)).astype(np.float32)
_Z = _RNG.normal(size=(6, 3)).astype(np.float32)
_Y = _RNG.normal(size=(6, 2)).astype(np.float32)
_TOKENS = np.array([[4, 2, 0, 0], [1, 3, 3, 0], [5, 0, 0, 0], [2, 2, 2, 2], [7, 1, 0, 0], [6, 6, 6, 0]], np.int32)


def _same_weights(model, seed=0):
    model.set_weights(
        [
            np.random.default_rng(seed + i).normal(scale=0.5, size=w.shape).astype(np.float32)
            for i, w in enumerate(model.get_weights())
        ]
    )
    return model


def m_mlp(tf):
    inputs = tf.keras.Input(shape=(5,), name="features")
    x = tf.keras.layers.Dense(8, activation="relu", name="hidden")(inputs)
    x = tf.keras.layers.Dropout(0.5, name="drop")(x)
    outputs = tf.keras.layers.Dense(2, name="out")(x)
    return tf.keras.Model(inputs, outputs, name="mlp"), _X


def m_two_inputs_shared_layer_and_operators(tf):
    a, b = tf.keras.Input(shape=(5,)), tf.keras.Input(shape=(3,))
    shared = tf.keras.layers.Dense(4, activation="tanh")
    left = shared(a[:, :3] * 2.0 + b)  # operators on KerasTensors, then a layer shared by two calls
    right = shared(b)
    merged = tf.keras.layers.Concatenate()([left, right - left, a])
    outputs = tf.keras.layers.Dense(2)(merged)
    return tf.keras.Model([a, b], outputs), [_X, _Z]


def m_dict_inputs_and_outputs(tf):
    inputs = {"u": tf.keras.Input(shape=(5,), name="u"), "v": tf.keras.Input(shape=(3,), name="v")}
    h = tf.keras.layers.Add()([tf.keras.layers.Dense(4)(inputs["u"]), tf.keras.layers.Dense(4)(inputs["v"])])
    outputs = {"first": tf.keras.layers.Dense(1)(h), "second": tf.keras.layers.Dense(2)(-h)}
    return tf.keras.Model(inputs=inputs, outputs=outputs), {"u": _X, "v": _Z}


def m_masked_sequence_model(tf):
    tokens = tf.keras.Input(shape=(None,), dtype="int32")
    x = tf.keras.layers.Embedding(10, 4, mask_zero=True)(tokens)
    x = tf.keras.layers.Bidirectional(tf.keras.layers.LSTM(3, return_sequences=True))(x)
    x = tf.keras.layers.GlobalAveragePooling1D()(x)
    return tf.keras.Model(tokens, tf.keras.layers.Dense(2)(x)), _TOKENS


def m_nested_model(tf):
    inner_in = tf.keras.Input(shape=(5,))
    inner = tf.keras.Model(inner_in, tf.keras.layers.Dense(3, activation="relu")(inner_in), name="inner")
    inputs = tf.keras.Input(shape=(5,))
    outputs = tf.keras.layers.Dense(2)(tf.keras.layers.BatchNormalization()(inner(inputs)))
    return tf.keras.Model(inputs, outputs), _X


MODELS = [
    m_mlp,
    m_two_inputs_shared_layer_and_operators,
    m_dict_inputs_and_outputs,
    m_masked_sequence_model,
    m_nested_model,
]


def _np(x):
    if isinstance(x, dict):
        return {k: _np(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_np(e) for e in x]
    return np.asarray(x.numpy() if hasattr(x, "numpy") else x)


def _close(a, b, path="result"):
    if isinstance(a, dict):
        assert sorted(a) == sorted(b), (path, sorted(a), sorted(b))
        for k in a:
            _close(a[k], b[k], f"{path}[{k!r}]")
    elif isinstance(a, list):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            _close(x, y, f"{path}[{i}]")
    else:
        np.testing.assert_allclose(b, a, rtol=2e-5, atol=2e-6, err_msg=path)


def _forward_and_gradients(make):
    def program(tf):
        model, data = make(tf)
        _same_weights(model)
        with tf.GradientTape() as tape:
            out = model(data, training=False)
            flat = list(out.values()) if isinstance(out, dict) else [out]
            loss = sum(tf.reduce_sum(o**2) for o in flat)
        grads = [tf.convert_to_tensor(g) for g in tape.gradient(loss, model.trainable_weights)]
        shapes = [list(w.shape) for w in model.weights]
        return {"out": out, "grads": grads, "shapes": shapes, "layers": len(model.layers)}

    return program


@pytest.mark.parametrize("make", MODELS, ids=lambda m: m.__name__)
def test_functional_models_match_keras(make):
    program = _forward_and_gradients(make)
    expected, got = _np(program(tf_real)), _np(program(gtf))
    assert expected.pop("layers") == got.pop("layers")
    _close(expected, got)


def test_functional_model_trains_with_fit_as_keras():
    def program(tf):
        model, data = m_two_inputs_shared_layer_and_operators(tf)
        _same_weights(model)
        model.compile(optimizer=tf.keras.optimizers.SGD(0.05), loss="mse", metrics=["mae"])
        history = model.fit(data, _Y, batch_size=3, epochs=2, shuffle=False, verbose=0)
        return [history.history["loss"], history.history["mae"], model.get_weights(), model.predict(data, verbose=0)]

    _close(_np(program(tf_real)), _np(program(gtf)))


def test_functional_summary_matches_keras():
    expected, got = summary(m_mlp(tf_real)[0]), summary(m_mlp(gtf)[0])
    assert got == expected


@pytest.mark.parametrize("tf", [tf_real, gtf], ids=["tensorflow", "gradkit"])
def test_two_layers_of_one_name_are_refused(tf):
    # Keras refuses them (a saved model's weights are kept by layer name); so does gradkit.tf.
    x = tf.keras.Input(shape=(3,))
    y = tf.keras.layers.Dense(2, name="same")(tf.keras.layers.Dense(2, name="same")(x))
    with pytest.raises(ValueError, match='The name "same" is used 2 times in the model'):
        tf.keras.Model(x, y)
    with pytest.raises(ValueError, match="should have unique names. Name 'same' is already"):
        tf.keras.Sequential([tf.keras.layers.Dense(2, name="same"), tf.keras.layers.Dense(2, name="same")])


def test_symbolic_misuse_is_refused():
    x = gtf.keras.Input(shape=(3,))
    with pytest.raises(TypeError, match=r"\[gradkit\].*KerasTensor.*Lambda"):
        gtf.reduce_sum(x)
    with pytest.raises(TypeError, match=r"\[gradkit\].*neither True nor False"):
        bool(x)
    other = gtf.keras.Input(shape=(3,))
    y = gtf.keras.layers.Add()([x, other])
    with pytest.raises(ValueError, match=r"\[gradkit\].*Graph disconnected"):
        gtf.keras.Model(x, y)
    with pytest.raises(ValueError, match=r"\[gradkit\].*tf.keras.Input"):
        gtf.keras.Model(gtf.ones([2, 3]), y)
    # A Lambda layer takes TensorFlow functions, as Keras asks.
    summed = gtf.keras.layers.Lambda(lambda t: gtf.reduce_sum(t, axis=-1, keepdims=True))(x)
    np.testing.assert_allclose(gtf.keras.Model(x, summed)(np.ones((2, 3), np.float32)).numpy(), [[3.0], [3.0]])


def _two_heads(tf, as_dict):
    inputs = tf.keras.Input(shape=(5,))
    hidden = tf.keras.layers.Dense(4, activation="tanh", name="hidden")(inputs)
    regression = tf.keras.layers.Dense(1, name="reg")(hidden)
    classes = tf.keras.layers.Dense(3, activation="softmax", name="cls")(hidden)
    outputs = {"r": regression, "c": classes} if as_dict else [regression, classes]
    return _same_weights(tf.keras.Model(inputs, outputs))


_Y_REG = _RNG.normal(size=(6, 1)).astype(np.float32)
_Y_CLS = np.array([0, 2, 1, 1, 0, 2], np.int32)
_SW = np.linspace(0.5, 2.0, 6).astype(np.float32)


@pytest.mark.parametrize(
    "as_dict, one_hot, compile_kwargs, fit_kwargs",
    [
        (
            False,
            False,
            dict(
                loss=["mse", "sparse_categorical_crossentropy"],
                loss_weights=[1.0, 0.5],
                metrics=[["mae"], ["accuracy"]],
            ),
            {},
        ),
        (
            True,
            False,
            dict(loss={"r": "mse", "c": "ce"}, metrics={"r": "mae"}, weighted_metrics={"c": ["accuracy"]}),
            dict(sample_weight=_SW),
        ),
        (True, False, dict(loss={"r": "huber", "c": None}, metrics={"c": "accuracy"}), dict(validation_split=0.5)),
        (False, True, dict(loss="mse", metrics=["mse", "mae"]), {}),
    ],
    ids=["list", "dict_weighted", "dict_one_loss", "one_loss_for_both"],
)
# An output without a loss leaves its layer without gradients: Keras warns (gradkit may not).
@pytest.mark.filterwarnings("ignore:Gradients do not exist:UserWarning")
def test_several_outputs_compile_and_fit_as_keras(as_dict, one_hot, compile_kwargs, fit_kwargs):
    def program(tf):
        model = _two_heads(tf, as_dict)
        model.compile(optimizer=tf.keras.optimizers.SGD(0.1), **compile_kwargs)
        y_cls = np.eye(3, dtype=np.float32)[_Y_CLS] if one_hot else _Y_CLS
        y = {"r": _Y_REG, "c": y_cls} if as_dict else [_Y_REG, y_cls]
        history = model.fit(_X, y, batch_size=3, epochs=2, shuffle=False, verbose=0, **fit_kwargs)
        return {
            "history": history.history,
            "weights": model.get_weights(),
            "evaluate": model.evaluate(_X, y, verbose=0),
            "names": model.metrics_names,
        }

    expected, got = program(tf_real), program(gtf)
    assert expected.pop("names") == got.pop("names")
    assert list(expected["history"]) == list(got["history"])
    _close(_np(expected), _np(got))


def test_layers_are_in_keras_order():
    """Keras orders a functional model's layers by depth, then by a walk from the outputs (so
    the weights are in that order too)."""

    def names(tf):
        x = tf.keras.Input((3,), name="x")
        a = tf.keras.layers.Dense(2, name="a")(x)
        b = tf.keras.layers.Dense(2, name="b")(x)
        c = tf.keras.layers.Dense(2, name="c")(a)
        d = tf.keras.layers.Add(name="d")([c, b])
        return [
            [layer.name for layer in tf.keras.Model(x, outputs).layers]
            for outputs in ([b, c], [c, b], d, {"p": c, "o": b})
        ]

    assert names(gtf) == names(tf_real)


def test_each_outputs_loss_counts_each_batch_alike_and_the_total_by_size():
    """With a learning rate of 0, each output's logged loss over batches of 4 and 2 is the mean of
    the two batches' losses (Keras on TensorFlow traces its step with an unknown batch size and so
    weighs each batch 1); the total loss is the loss over all 6 examples."""
    model = _two_heads(gtf, as_dict=True)
    model.compile(optimizer=gtf.keras.optimizers.SGD(0.0), loss={"r": "mse", "c": "sparse_categorical_crossentropy"})
    history = model.fit(_X, {"r": _Y_REG, "c": _Y_CLS}, batch_size=4, epochs=1, shuffle=False, verbose=0)
    predicted = model.predict(_X, verbose=0)
    squared = np.mean((predicted["r"] - _Y_REG) ** 2, axis=-1)
    cross = -np.log(predicted["c"][np.arange(6), _Y_CLS])
    batches = (slice(0, 4), slice(4, 6))
    np.testing.assert_allclose(history.history["r_loss"][0], np.mean([squared[b].mean() for b in batches]), rtol=1e-5)
    np.testing.assert_allclose(history.history["c_loss"][0], np.mean([cross[b].mean() for b in batches]), rtol=1e-5)
    np.testing.assert_allclose(history.history["loss"][0], squared.mean() + cross.mean(), rtol=1e-5)


def _built_for_unknown_length(tf):
    """A custom layer called on KerasTensors is built for their shape, None where unknown."""
    seen = []

    class PositionTable(tf.keras.layers.Layer):
        def build(self, input_shape):
            seen.append(tuple(input_shape))
            length = input_shape[1] if input_shape[1] is not None else 50
            self.table = self.add_weight(shape=(length, input_shape[-1]), initializer="ones", name="table")

        def call(self, x):
            return x + self.table[None, : tf.shape(x)[1]]

    inputs = tf.keras.Input((None, 4))
    model = tf.keras.Model(inputs, PositionTable()(inputs))
    out = model(np.zeros((1, 20, 4), np.float32))
    return seen[0], tuple(model.layers[1].table.shape), np.asarray(out)


def test_a_custom_layer_is_built_for_unknown_sizes_as_none():
    seen, table, out = _built_for_unknown_length(gtf)
    assert seen == (None, None, 4) and table == (50, 4)
    np.testing.assert_array_equal(out, np.ones((1, 20, 4), np.float32))  # zeros plus the table's ones
    assert _built_for_unknown_length(tf_real)[:2] == (seen, table)


def _two_input_build(tf):
    seen = []

    class Gate(tf.keras.layers.Layer):
        def build(self, x_shape, gate_shape):
            seen.append((tuple(x_shape), tuple(gate_shape)))
            self.w = self.add_weight(shape=(gate_shape[-1], x_shape[-1]), initializer="ones", name="w")

        def call(self, x, gate):
            return x * tf.sigmoid(tf.matmul(gate, self.w))

    Gate()(np.ones((2, 3), np.float32), np.zeros((2, 4), np.float32))
    x, gate = tf.keras.Input((3,)), tf.keras.Input((4,))
    model = tf.keras.Model([x, gate], Gate()(x, gate))
    out = model([np.ones((2, 3), np.float32), np.zeros((2, 4), np.float32)])
    return seen, np.asarray(out)


def test_a_build_of_several_shapes_gets_one_per_tensor_argument():
    seen, out = _two_input_build(gtf)
    assert seen == [((2, 3), (2, 4)), ((None, 3), (None, 4))]  # Keras 3: build(x_shape, gate_shape)
    np.testing.assert_allclose(out, np.full((2, 3), 0.5))  # x * sigmoid(0), by hand
    assert _two_input_build(tf_real)[0] == seen


def test_a_model_of_one_output_in_a_list_returns_the_tensor_on_data_and_the_list_symbolically():
    """Keras 3's unpack_singleton: ``Model(x, [y])(data)`` is y's tensor, ``predict`` an array; on
    KerasTensors the call keeps the list. Training with ``y`` or ``[y]`` is the same."""
    keras = pytest.importorskip("keras")
    pytest.importorskip("tensorflow")
    x, y = np.ones((4, 3), np.float32), np.ones((4, 2), np.float32)
    seen = []
    for k in (keras, gtf.keras):
        a = k.Input((3,))
        model = k.Model(a, [k.layers.Dense(2, kernel_initializer="ones")(a)])
        called, predicted, symbolic = model(x), model.predict(x, verbose=0), model(k.Input((3,)))
        model.compile("sgd", loss=["mse"])
        history = model.fit(x, [y], verbose=0).history["loss"]
        seen.append((isinstance(called, (list, tuple)), type(predicted), type(symbolic), history))
        np.testing.assert_allclose(np.asarray(called), np.full((4, 2), 3.0))
    (theirs, ours) = seen
    assert ours[:3] == (False, np.ndarray, list) and theirs[:3] == (False, np.ndarray, list)
    np.testing.assert_allclose(ours[3], theirs[3], rtol=1e-6)
