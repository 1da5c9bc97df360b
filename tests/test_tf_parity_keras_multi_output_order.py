"""Models with several inputs and outputs against real Keras 3: the order of ``evaluate``'s list
and ``metrics_names`` (the per-output losses in Keras' order), targets given only for the
outputs with a loss while metrics are compiled, a dict of inputs refusing a list, and nested
outputs (``[out_a, [out_b, out_c]]``: nested or flat losses, nested metrics, Keras' ``1/out_b_loss``
names)."""

import warnings

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")

from test_tf_parity import programs, run_program  # noqa: E402

X = [np.linspace(-1, 1, 12, dtype="float32").reshape(4, 3), np.linspace(0, 1, 8, dtype="float32").reshape(4, 2)]
Y_A = np.linspace(-0.5, 0.5, 8, dtype="float32").reshape(4, 2)
Y_B = np.array([0, 1, 2, 0])


def _two_outputs(tf):
    K = tf.keras
    a, b = K.Input((3,), name="in_a"), K.Input((2,), name="in_b")
    h = K.layers.Dense(4, kernel_initializer="ones", name="h")(K.layers.Concatenate()([a, b]))
    out_a = K.layers.Dense(2, kernel_initializer=K.initializers.Constant(0.1), name="out_a")(h)
    out_b = K.layers.Dense(3, activation="softmax", kernel_initializer=K.initializers.Constant(-0.2), name="out_b")(h)
    return K.Model([a, b], [out_a, out_b])


def p_a_loss_dict_in_another_order_than_the_outputs(tf):
    model = _two_outputs(tf)
    model.compile("sgd", loss={"out_b": "sparse_categorical_crossentropy", "out_a": "mse"})
    results = model.evaluate(X, [Y_A, Y_B], verbose=0)
    return [results, model.metrics_names, model.test_on_batch(X, [Y_A, Y_B])]


def _dict_outputs(tf, keys):
    K = tf.keras
    a = K.Input((3,), name="in_a")
    h = K.layers.Dense(4, kernel_initializer="ones")(a)
    outputs = {
        key: K.layers.Dense(2, kernel_initializer=K.initializers.Constant(k * 0.1 + 0.1))(h)
        for k, key in enumerate(keys)
    }
    return K.Model(a, outputs)


def p_dict_outputs_in_the_order_written(tf):
    model = _dict_outputs(tf, ["zz", "aa"])
    model.compile("sgd", loss="mse")
    targets = {"zz": Y_A, "aa": Y_A * 2}
    return [model.evaluate(X[0], targets, verbose=0), model.metrics_names]


def p_targets_only_for_outputs_with_a_loss_and_metrics(tf):
    model = _two_outputs(tf)
    model.compile("sgd", loss=["mse", None], metrics=[["mae"], None])
    with warnings.catch_warnings():  # out_b has no loss: its weights get no gradient, as both warn
        warnings.simplefilter("ignore", UserWarning)
        first = model.train_on_batch(X, [Y_A], return_dict=True)
        history = model.fit(X, [Y_A], epochs=2, batch_size=2, verbose=0, shuffle=False)
    return [first, history.history, model.evaluate(X, [Y_A], verbose=0, return_dict=True)]


def _nested_outputs(tf):
    K = tf.keras
    a = K.Input((3,), name="in_a")
    out_a = K.layers.Dense(1, kernel_initializer=K.initializers.Constant(0.3), name="out_a")(a)
    out_b = K.layers.Dense(2, kernel_initializer=K.initializers.Constant(-0.2), name="out_b")(a)
    out_c = K.layers.Dense(1, kernel_initializer="ones", name="out_c")(a)
    return K.Model(a, [out_a, [out_b, out_c]])


NESTED_Y = [Y_A[:, :1], [Y_A, Y_A[:, 1:] * 3]]


def _nested_run(tf, **compile_args):
    model = _nested_outputs(tf)
    model.compile("sgd", **compile_args)
    first = model.evaluate(X[0], NESTED_Y, verbose=0, return_dict=True)
    history = model.fit(X[0], NESTED_Y, epochs=2, batch_size=2, verbose=0, shuffle=False)
    return [first, history.history, model.evaluate(X[0], NESTED_Y, verbose=0), model.metrics_names]


def p_nested_outputs_nested_losses_metrics_and_weights(tf):
    return _nested_run(
        tf, loss=["mse", ["mae", "mse"]], loss_weights=[1.0, [2.0, 0.5]], metrics=["mae", [["mse", "mae"], None]]
    )


def p_nested_outputs_flat_losses_and_weighted_metrics(tf):
    return _nested_run(
        tf, loss=["mse", "mae", "mse"], loss_weights=[1.0, 2.0, 0.5], weighted_metrics=["mae", ["mse", "mae"]]
    )


def p_nested_outputs_loss_dict_by_output_name(tf):
    return _nested_run(tf, loss={"out_c": "mse", "out_a": "mae", "out_b": "mse"})


def p_nested_outputs_one_output_without_loss(tf):
    model = _nested_outputs(tf)
    model.compile("sgd", loss=["mse", ["mae", None]])
    return [model.evaluate(X[0], NESTED_Y, verbose=0, return_dict=True), model.metrics_names]


def p_nested_outputs_targets_only_for_outputs_with_a_loss(tf):
    model = _nested_outputs(tf)
    model.compile("sgd", loss=["mse", ["mae", None]])
    with warnings.catch_warnings():  # out_c has no loss: its weights get no gradient, as both warn
        warnings.simplefilter("ignore", UserWarning)
        history = model.fit(X[0], [NESTED_Y[0], [NESTED_Y[1][0]]], epochs=2, batch_size=2, verbose=0, shuffle=False)
    return [history.history, model.evaluate(X[0], NESTED_Y, verbose=0, return_dict=True)]


def p_nested_outputs_refuses_flat_metrics(tf):
    return _nested_run(tf, loss="mse", metrics=["mae", "mse", "mae"])


def _dict_of_nested_outputs(tf, inner_dict):
    K = tf.keras
    a = K.Input((3,), name="in_a")
    out_a = K.layers.Dense(2, kernel_initializer=K.initializers.Constant(0.3), name="out_a")(a)
    out_b = K.layers.Dense(1, kernel_initializer=K.initializers.Constant(-0.2), name="out_b")(a)
    out_c = K.layers.Dense(1, kernel_initializer="ones", name="out_c")(a)
    return K.Model(a, {"a": out_a, "b": {"p": out_b, "q": out_c} if inner_dict else [out_b, out_c]})


def p_dict_outputs_holding_a_list(tf):
    model = _dict_of_nested_outputs(tf, inner_dict=False)
    model.compile("sgd", loss={"a": "mse", "b": ["mse", "mae"]}, loss_weights={"a": 1.0, "b": [0.5, 2.0]})
    y = {"a": Y_A, "b": [Y_A[:, :1], Y_A[:, 1:] * 3]}
    history = model.fit(X[0], y, epochs=2, batch_size=2, verbose=0, shuffle=False)
    return [history.history, model.evaluate(X[0], y, verbose=0, return_dict=True), model.metrics_names]


def p_dict_outputs_holding_a_dict_with_metrics_and_sample_weights(tf):
    model = _dict_of_nested_outputs(tf, inner_dict=True)
    model.compile(
        "sgd",
        loss={"a": "mse", "b": {"p": "mse", "q": "mae"}},
        metrics={"a": ["mae"], "b": {"p": [], "q": ["mse"]}},
        weighted_metrics={"a": [], "b": {"p": ["mae"], "q": []}},
    )
    y = {"a": Y_A, "b": {"p": Y_A[:, :1], "q": Y_A[:, 1:] * 3}}
    weights = {"a": np.ones(4, "float32"), "b": {"p": np.array([1, 2, 0, 1], "float32"), "q": np.ones(4, "float32")}}
    history = model.fit(X[0], y, sample_weight=weights, epochs=2, batch_size=2, verbose=0, shuffle=False)
    return [history.history, model.evaluate(X[0], y, verbose=0, return_dict=True)]


def _dict_inputs(tf):
    K = tf.keras
    zz, aa = K.Input((3,), name="zz_in"), K.Input((3,), name="aa_in")
    out = K.layers.Dense(1, kernel_initializer="ones")(K.layers.Concatenate()([zz, 2.0 * aa]))
    return K.Model({"zz_in": zz, "aa_in": aa}, out)


def p_dict_inputs_by_name(tf):
    return _dict_inputs(tf)({"zz_in": X[0], "aa_in": X[0] * 3})


def p_dict_inputs_refuses_a_list(tf):
    return _dict_inputs(tf)([X[0], X[0] * 3])


PROGRAMS = programs(globals())


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_parity(program):
    outcome = run_program(program)
    assert isinstance(outcome, Exception) == ("refuses" in program.__name__), outcome
