"""``tf.VariableAggregation``, ``tf.VariableSynchronization``, ``tf.AggregationMethod`` and
``tf.Variable(..., synchronization=, aggregation=)`` against real TensorFlow 2.21: the same program
text under both modules (values, None-ness and exception classes compared)."""

import pickle

import numpy as np
import pytest

import gradkit.tf as gtf
from gradkit import _errors


def _members(enum_type):
    return [[m.name, m.value, repr(m), str(m)] for m in enum_type]


def p_the_enums(tf):
    return [
        _members(tf.VariableAggregation),
        _members(tf.VariableSynchronization),
        tf.VariableAggregation(2) is tf.VariableAggregation.MEAN,
        tf.VariableSynchronization(3) is tf.VariableSynchronization.ON_READ,
        tf.VariableAggregation.SUM == 1,
        pickle.loads(pickle.dumps(tf.VariableAggregation.MEAN)) is tf.VariableAggregation.MEAN,
        type(tf.VariableAggregation.SUM).__name__,
    ]


def p_aggregation_method(tf):
    m = tf.AggregationMethod
    return [m.ADD_N, m.DEFAULT, m.EXPERIMENTAL_TREE, m.EXPERIMENTAL_ACCUMULATE_N]


def _options(v):
    return [v.aggregation.name, v.synchronization.name, v.trainable]


def p_a_variable_reports_its_options(tf):
    sync, agg = tf.VariableSynchronization, tf.VariableAggregation
    return [
        _options(tf.Variable(1.0)),
        _options(tf.Variable(1.0, aggregation=agg.SUM)),
        _options(tf.Variable(1.0, aggregation=agg.MEAN, synchronization=sync.ON_WRITE)),
        _options(tf.Variable(1.0, synchronization=sync.ON_READ)),
        _options(tf.Variable(1.0, synchronization=sync.ON_READ, trainable=True)),
        _options(tf.Variable(1.0, synchronization=sync.NONE, trainable=False)),
        _options(tf.Variable(1.0, aggregation=1, synchronization=2)),
        _options(tf.Variable(1.0, aggregation=agg.ONLY_FIRST_REPLICA, synchronization=sync.AUTO)),
        tf.Variable(1.0, aggregation=agg.SUM).aggregation == agg.SUM,
    ]


@pytest.mark.parametrize(
    "kwargs",
    [{"aggregation": "sum"}, {"aggregation": 9}, {"synchronization": "on_read"}, {"synchronization": 7}],
    ids=repr,
)
def test_refused_options(kwargs):
    pytest.importorskip("tensorflow")
    from test_tf_parity import run_both

    out = run_both(lambda tf: tf.Variable(1.0, **kwargs))
    assert isinstance(out, _errors.GradkitValueError) and str(out).startswith("[gradkit]")


def p_options_change_no_gradient(tf):
    w = tf.Variable([1.0, 2.0], aggregation=tf.VariableAggregation.MEAN)
    s = tf.Variable(3.0, synchronization=tf.VariableSynchronization.ON_READ, aggregation=tf.VariableAggregation.SUM)
    u = tf.Variable(5.0, aggregation=tf.VariableAggregation.SUM)
    with tf.GradientTape(persistent=True) as tape:
        y = tf.reduce_sum(w * w) * s
    return [
        tape.gradient(y, [w, s]),
        tape.gradient(y, u),
        tape.gradient(y, u, unconnected_gradients=tf.UnconnectedGradients.ZERO),
        tape.gradient(y, u, unconnected_gradients="zero"),
    ]


def p_a_module_lists_on_read_variables_as_not_trainable(tf):
    class Counter(tf.Module):
        def __init__(self):
            super().__init__()
            self.w = tf.Variable(2.0)
            self.count = tf.Variable(0.0, synchronization=tf.VariableSynchronization.ON_READ)

    m = Counter()
    return [len(m.trainable_variables), len(m.variables), m.count.trainable]


def p_options_in_a_function(tf):
    made = []

    @tf.function
    def f(x):
        if not made:
            made.append(tf.Variable(2.0, aggregation=tf.VariableAggregation.MEAN))
        return x * made[0]

    return [f(tf.constant(3.0)), made[0].aggregation.name, made[0].synchronization.name]


def _dtype_outcomes(tf, cases):
    out = []
    for make in cases:
        try:
            out.append(np.dtype(make().dtype.name).name)
        except ValueError:
            out.append("ValueError")
    return out


def p_a_tensor_initial_value_keeps_its_dtype(tf):
    """A Python or NumPy value is converted to ``dtype``; a tensor or Variable of another dtype is refused."""
    cases = [
        lambda: tf.Variable(tf.constant([1, 2]), dtype=tf.float32),
        lambda: tf.Variable(tf.constant([1.5, 2.0]), dtype=tf.int32),
        lambda: tf.Variable(tf.Variable([1.0, 2.0]), dtype=tf.int32),
        lambda: tf.Variable(lambda: tf.constant([1, 2]), dtype=tf.float32),
        lambda: tf.Variable(tf.constant(1.0), dtype=tf.float16),
        lambda: tf.Variable(tf.constant([1.0, 2.0]), dtype=tf.float32),
        lambda: tf.Variable(np.array([1, 2]), dtype=tf.float32),
        lambda: tf.Variable([1, 2], dtype="float32"),
    ]
    return _dtype_outcomes(tf, cases)


PROGRAMS = [v for k, v in sorted(globals().items()) if k.startswith("p_")]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_parity(program):
    pytest.importorskip("tensorflow")
    from test_tf_parity import run_both

    run_both(program)


def test_a_refused_option_makes_no_variable_and_runs_no_initializer():
    ran = []
    with pytest.raises(_errors.GradkitValueError, match=r"^\[gradkit\] Invalid variable aggregation mode: 'sum'"):
        gtf.Variable(lambda: ran.append(1) or 1.0, aggregation="sum")
    assert ran == []


def test_a_tensor_initial_value_of_another_dtype_is_refused_by_hand():
    assert p_a_tensor_initial_value_keeps_its_dtype(gtf) == ["ValueError"] * 5 + ["float32"] * 3
