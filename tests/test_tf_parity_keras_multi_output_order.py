"""Models with several inputs and outputs against real Keras 3: the order of ``evaluate``'s list
and ``metrics_names`` (the per-output losses in Keras' order), targets given only for the
outputs with a loss while metrics are compiled, and a dict of inputs refusing a list."""

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
