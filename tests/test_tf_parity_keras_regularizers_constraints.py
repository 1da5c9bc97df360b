"""``tf.keras.regularizers`` and ``tf.keras.constraints`` against real Keras 3: values and
gradients (a zero slice included), configs, Keras' argument checks, and
``get``/``serialize``/``deserialize``."""

import copy

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")

from test_tf_parity import run_both_ok  # noqa: E402

import gradkit.tf as gtf  # noqa: E402

# A zero row: norms, square roots and |x| at 0 (TensorFlow's gradient of |x| there is 0).
MATRIX = [[0.5, -1.0, 2.0], [0.0, 0.0, 0.0], [1.5, 0.25, -0.75], [3.0, -2.0, 1.0]]
COTANGENT = np.asarray([[1.0, 2.0, -1.0], [0.5, -1.5, 2.0], [1.0, 1.0, 1.0], [-2.0, 0.5, 0.25]])

REGULARIZERS = {
    "l1": lambda r: r.L1(0.1),
    "l1_default": lambda r: r.l1(),
    "l2": lambda r: r.L2(0.3),
    "l1l2": lambda r: r.L1L2(0.05, 0.2),
    "l1l2_only_l2": lambda r: r.l1_l2(None, 0.2),
    "l1l2_zero": lambda r: r.L1L2(),
    "orthogonal_rows": lambda r: r.OrthogonalRegularizer(0.5),
    "orthogonal_columns": lambda r: r.orthogonal_regularizer(0.2, mode="columns"),
    "base": lambda r: r.Regularizer(),
}
CONSTRAINTS = {
    "max_norm": lambda c: c.MaxNorm(1.5),
    "max_norm_axes": lambda c: c.max_norm(2.0, axis=[0, 1]),
    "max_norm_axis_1": lambda c: c.MaxNorm(1.0, axis=1),
    "min_max_norm": lambda c: c.MinMaxNorm(0.5, 1.2, rate=0.7),
    "min_max_norm_default": lambda c: c.min_max_norm(axis=1),
    "non_neg": lambda c: c.NonNeg(),
    "unit_norm": lambda c: c.UnitNorm(),
    "unit_norm_axis_1": lambda c: c.unit_norm(axis=1),
    "base": lambda c: c.Constraint(),
}


def _value_and_gradient(tf, fn, dtype):
    x = tf.Variable(np.asarray(MATRIX, dtype))
    with tf.GradientTape() as tape:
        out = fn(x)
        out = tf.convert_to_tensor(out)
        loss = tf.reduce_sum(out * (COTANGENT.astype(dtype) if len(out.shape) else 1.0))
    return [out, tape.gradient(loss, x)]


@pytest.mark.parametrize("name", sorted(REGULARIZERS))
def test_regularizer_values_and_gradients_match_keras(name):
    run_both_ok(lambda tf: _value_and_gradient(tf, REGULARIZERS[name](tf.keras.regularizers), np.float32))


@pytest.mark.parametrize("name", sorted(CONSTRAINTS))
def test_constraint_values_and_gradients_match_keras(name):
    run_both_ok(lambda tf: _value_and_gradient(tf, CONSTRAINTS[name](tf.keras.constraints), np.float32))


def test_constraints_of_integer_weights_match_keras():
    def program(tf):
        w = tf.constant([[1, -2], [3, 4]])
        return [CONSTRAINTS[name](tf.keras.constraints)(w) for name in ("max_norm", "non_neg", "unit_norm")]

    run_both_ok(program)


@pytest.mark.parametrize(
    "module, table",
    [("regularizers", REGULARIZERS), ("constraints", CONSTRAINTS)],
)
def test_configs_and_serialize_match_keras_and_round_trip(module, table):
    for name, make in table.items():
        if name == "base" and module == "regularizers":
            continue  # Keras' base Regularizer has no config (tested below)
        want_obj, got_obj = make(getattr(tf_real.keras, module)), make(getattr(gtf.keras, module))
        assert got_obj.get_config() == want_obj.get_config(), name
        want = getattr(tf_real.keras, module).serialize(want_obj)
        got = getattr(gtf.keras, module).serialize(got_obj)
        assert got == want, name
        again = getattr(gtf.keras, module).deserialize(copy.deepcopy(got))
        assert type(again) is type(got_obj) and again.get_config() == got_obj.get_config()


@pytest.mark.parametrize(
    "module, identifier",
    [
        ("regularizers", "l2"),
        ("regularizers", "L1"),
        ("regularizers", "L1L2"),
        ("regularizers", "l1l2"),
        ("regularizers", "orthogonal_regularizer"),
        ("regularizers", {"class_name": "L2", "config": {"l2": 0.5}}),
        ("constraints", "non_neg"),
        ("constraints", "UnitNorm"),
        ("constraints", "max_norm"),
        ("constraints", {"module": "keras.constraints", "class_name": "MinMaxNorm", "config": {"min_value": 0.5}}),
    ],
)
def test_get_matches_keras(module, identifier):
    want = getattr(tf_real.keras, module).get(copy.deepcopy(identifier))
    got = getattr(gtf.keras, module).get(identifier)
    assert type(got).__name__ == type(want).__name__ and got.get_config() == want.get_config()


@pytest.mark.parametrize(
    "module, identifier",
    [("regularizers", "l1_l2"), ("regularizers", "nope"), ("constraints", "nope"), ("constraints", 3)],
    ids=["l1_l2_is_not_a_keras_name", "unknown_regularizer", "unknown_constraint", "number"],
)
def test_get_refuses_what_keras_refuses(module, identifier):
    for tf in (tf_real, gtf):
        with pytest.raises(ValueError) as info:
            getattr(tf.keras, module).get(identifier)
    assert str(info.value).startswith("[gradkit]") and "Could not interpret" in str(info.value)


def test_get_and_deserialize_pass_through_and_names_as_keras():
    def fn(w):
        return w

    for tf in (tf_real, gtf):
        assert tf.keras.regularizers.get(None) is None and tf.keras.constraints.get(fn) is fn
        assert tf.keras.regularizers.deserialize("nope") == "nope"
        assert type(tf.keras.regularizers.deserialize("l2")).__name__ == "L2"
        assert tf.keras.regularizers.serialize("l2") == "l2" and tf.keras.constraints.serialize(None) is None


@pytest.mark.parametrize(
    "make",
    [
        lambda r: r.L2(-1.0),
        lambda r: r.L1("a"),
        lambda r: r.L1L2(float("inf")),
        lambda r: r.OrthogonalRegularizer(mode="diagonal"),
        lambda r: r.OrthogonalRegularizer()(np.ones((2, 3, 4), np.float32)),
    ],
    ids=["negative", "string", "inf", "mode", "rank_3"],
)
def test_regularizer_arguments_keras_refuses_are_refused(make):
    for tf in (tf_real, gtf):
        with pytest.raises(ValueError) as info:
            make(tf.keras.regularizers)
    assert str(info.value).startswith("[gradkit]")


def test_base_regularizer_has_no_config_as_in_keras():
    for tf in (tf_real, gtf):
        assert float(tf.keras.regularizers.Regularizer()(tf.ones(3))) == 0.0
        with pytest.raises(NotImplementedError):
            tf.keras.regularizers.Regularizer().get_config()
