"""Keras' functional API against Keras 3 (through real TensorFlow 2.21): the operators Keras maps
to ``keras.ops`` functions, tensors on the left of a KerasTensor, ``clone_model`` of graphs with
``keras.ops`` calls, inputs that are outputs or unused, and the build configs layers record."""

import os
import tempfile

import numpy as np
import pytest

_IDS = np.array([[3, 5, 0, 0], [1, 0, 2, 7]], np.int32)


def _values(outputs):
    return [np.asarray(o) for o in outputs]


def p_not_equal_is_an_elementwise_mask(tf):
    K = tf.keras
    ids = K.Input((4,), dtype="int32")
    embedded = K.layers.Embedding(8, 2, embeddings_initializer="ones")(ids)
    summed = K.ops.sum(embedded * K.ops.cast(ids != 0, "float32")[..., None], axis=1)
    reflected = K.ops.cast(0 != ids, "float32")
    return _values(K.Model(ids, [summed, reflected])(_IDS))


def p_logical_operators_on_integer_tensors(tf):
    K = tf.keras
    ids = K.Input((4,), dtype="int32")
    outputs = [
        ids & 3,
        3 | ids,
        ~(ids > 2),
        (ids > 1) ^ (ids < 4),
        2 ^ ids,
        round(K.ops.cast(ids, "float32") / 3, 1),
        round(K.ops.cast(ids, "float32") / 4),
    ]
    model = K.Model(ids, outputs)
    rebuilt = K.Model.from_config(model.get_config())
    got = model(_IDS)
    return (
        _values(got)
        + [str(o.dtype.name if hasattr(o.dtype, "name") else o.dtype) for o in got]
        + _values(rebuilt(_IDS))
    )


def p_a_tensor_on_the_left_of_a_keras_tensor(tf):
    K = tf.keras
    x = K.Input((3,))
    row = np.array([[1.0, 2.0, 3.0]], np.float32)
    outputs = [
        tf.constant(row) * x,
        K.ops.ones((1, 3)) + x,
        tf.Variable(row) - x,
        tf.constant(row) @ K.ops.ones((3, 3)) - x,
    ]
    return _values(K.Model(x, outputs)(np.arange(6, dtype=np.float32).reshape(2, 3)))


def p_clone_model_replays_keras_ops_calls(tf):
    K = tf.keras
    x = K.Input((4,), name="x")
    dense = K.layers.Dense(4, name="dense")(x)
    outputs = [
        K.ops.concatenate([x, dense], -1),
        K.ops.where(x > 0, x, -x),
        K.ops.sum(dense, axis=1),
        K.ops.pad(x, [[0, 0], [1, 1]]),
        K.ops.einsum("bi,bj->bij", x, dense),
        x + dense * 2,
    ]
    model = K.Model(x, outputs)
    clone = K.models.clone_model(model)
    clone.set_weights(model.get_weights())
    data = np.arange(8, dtype=np.float32).reshape(2, 4) - 3
    same = [bool(np.allclose(a, b)) for a, b in zip(model(data), clone(data))]
    return same + [[layer.name for layer in clone.layers]]


def p_an_input_that_is_an_output(tf):
    K = tf.keras
    a = K.Input((3,), name="a")
    model = K.Model(a, [a, K.layers.Dense(2, name="d", kernel_initializer="ones")(a)])
    model.compile(optimizer="sgd", loss="mse")
    history = model.fit(
        np.ones((4, 3), np.float32), [np.zeros((4, 3), np.float32), np.zeros((4, 2), np.float32)], epochs=2, verbose=0
    )
    return [model.output_names, sorted(history.history), history.history["loss"], K.Model(a, a).output_names]


def p_an_unused_input_is_one_of_the_layers(tf):
    K = tf.keras
    a, b, c = (K.Input((3,), name=n) for n in "abc")
    first, second = K.layers.Dense(2, name="first"), K.layers.Dense(2, name="second")
    x = second(first(a))
    model = K.Model([a, b], x)
    rebuilt = K.Model.from_config(model.get_config())
    path = os.path.join(tempfile.mkdtemp(), "unused.keras")
    model.save(path)
    loaded = K.models.load_model(path)
    data = [np.ones((1, 3), np.float32), np.zeros((1, 3), np.float32)]
    return [
        [layer.name for layer in model.layers],
        [layer.name for layer in K.Model([b, a, c], [x, K.layers.Dense(1, name="e")(c)]).layers],
        [layer.name for layer in K.Model([a, b], a).layers],
        [layer.name for layer in rebuilt.layers],
        rebuilt.get_layer("b").name,
        [layer.name for layer in loaded.layers],
        bool(np.allclose(loaded(data), model(data))),
    ]


def p_build_configs_keep_an_unknown_batch_size(tf):
    K = tf.keras
    inner = K.Sequential([K.layers.Dense(3)])
    model = K.Sequential([K.Input((4,)), K.layers.Dense(5), inner])
    x = K.Input((5, 4))
    lstm, conv = K.layers.LSTM(3, return_sequences=True), K.layers.Conv1D(2, 3)
    functional = K.Model(x, conv(lstm(x)))
    a, b = K.Input((3,)), K.Input((2,))
    concat = K.layers.Concatenate()
    K.Model([a, b], concat([a, b]))
    called = K.layers.Dense(2)
    called(np.ones((7, 3), np.float32))
    configs = [
        model.get_build_config(),
        model.layers[0].get_build_config(),
        inner.get_build_config(),
        functional.get_build_config(),
        lstm.get_build_config(),
        conv.get_build_config(),
        concat.get_build_config(),
        called.get_build_config(),
    ]
    return [None if c is None else {k: str(v) for k, v in c.items()} for c in configs]


def _einsum_model(K):
    x = K.Input((4,), name="x")
    return K.Model(x, K.ops.einsum("bi,bj->bij", x, K.layers.Dense(4, name="dense")(x)))


def p_einsum_config_passes_each_operand_as_an_argument(tf):
    import json

    model = _einsum_model(tf.keras)
    entry = next(layer for layer in model.get_config()["layers"] if layer["class_name"] == "Einsum")
    rebuilt = tf.keras.Model.from_config(model.get_config())
    rebuilt.set_weights(model.get_weights())
    data = np.arange(8, dtype=np.float32).reshape(2, 4)
    # (Not its name: op names are numbered across the whole process.)
    options = {k: v for k, v in entry["config"].items() if k != "name"}
    return [
        json.dumps(entry["inbound_nodes"]),
        json.dumps(options),
        bool(np.allclose(model(data), rebuilt(data))),
    ]


def test_a_keras_einsum_model_loads_from_its_json():
    tf = pytest.importorskip("tensorflow")
    import gradkit.tf as gtf

    theirs = _einsum_model(tf.keras)
    ours = gtf.keras.models.model_from_json(theirs.to_json())
    ours.set_weights(theirs.get_weights())
    data = np.arange(8, dtype=np.float32).reshape(2, 4)
    np.testing.assert_allclose(np.asarray(ours(data)), theirs(data).numpy(), rtol=1e-6)


def p_a_merge_layer_takes_a_constant_of_batch_size_one(tf):
    K = tf.keras
    x = K.Input((3,))
    one_row = tf.constant(np.ones((1, 3), np.float32))
    model = K.Model(x, [K.layers.Add()([x, one_row]), K.layers.Maximum()([x, 4.0 * one_row])])
    return _values(model(np.arange(18, dtype=np.float32).reshape(6, 3)))


def p_a_merge_layer_first_called_on_batch_sizes_that_differ_is_refused(tf):
    return tf.keras.layers.Add()([np.ones((6, 3), np.float32), np.ones((2, 3), np.float32)])


def p_tf_shape_of_a_keras_tensor_is_refused(tf):
    return tf.shape(tf.keras.Input((3,)))


def p_tf_reduce_sum_of_a_keras_tensor_is_refused(tf):
    return tf.reduce_sum(tf.keras.Input((3,)))


def p_int_of_a_keras_tensor_is_refused(tf):
    return int(tf.keras.Input((1,)))


def p_float_of_a_keras_tensor_is_refused(tf):
    return float(tf.keras.Input((1,)))


def p_keras_tensor_is_a_public_class(tf):
    x = tf.keras.Input((3,))
    return [isinstance(x, tf.keras.KerasTensor), isinstance(tf.keras.layers.Dense(2)(x), tf.keras.KerasTensor)]


PROGRAMS = [v for k, v in sorted(globals().items()) if k.startswith("p_")]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_parity(program):
    pytest.importorskip("tensorflow")
    from test_tf_parity import run_both, run_both_ok

    if "refused" in program.__name__:
        assert isinstance(run_both(program), Exception)
    else:
        run_both_ok(program)
