"""tf.cond / tf.switch_case / tf.case with a choice known while tf.function traces (a constant
predicate or index): TensorFlow's If/Case op reads what every branch's results are computed
from, so a gradient with respect to a tensor or Variable only a branch not taken reads is zeros
there (None eagerly, and None for one no branch's result depends on). Against real TensorFlow,
and by that rule without it; the branch not taken assigns nothing, prints nothing and leaves the
other draws alone; the predicates TensorFlow refuses are refused."""

import numpy as np
import pytest

import gradkit.tf as gtf


def _t(tf):
    return tf.constant(True)


def _assigning_other(tf, x, y, v):
    def other():
        v.assign(y * 5.0)
        return v * 1.0

    return tf.cond(_t(tf), lambda: x * 2.0, other)


# name: (program of (tf, x, y, v), the gradients [x, y, v] TensorFlow gives eagerly and inside tf.function)
CASES = {
    "cond_true": (
        lambda tf, x, y, v: tf.cond(_t(tf), lambda: x * 2.0, lambda: y * 3.0),
        ([2, None, None], [2, 0, None]),
    ),
    "cond_false": (
        lambda tf, x, y, v: tf.cond(tf.constant(False), lambda: x * 2.0, lambda: y * 3.0),
        ([None, 3, None], [0, 3, None]),
    ),
    "numpy_bool": (
        lambda tf, x, y, v: tf.cond(np.bool_(True), lambda: x * 2.0, lambda: y * 3.0),
        ([2, None, None], [2, 0, None]),
    ),
    "variable_not_taken": (
        lambda tf, x, y, v: tf.cond(_t(tf), lambda: x * 2.0, lambda: v * 3.0),
        ([2, None, None], [2, None, 0]),
    ),
    "read_but_unused": (
        lambda tf, x, y, v: tf.cond(_t(tf), lambda: x * 2.0, lambda: (y * 3.0, x * 5.0)[1]),
        ([2, None, None], [2, None, None]),
    ),
    "stop_gradient_not_taken": (
        lambda tf, x, y, v: tf.cond(_t(tf), lambda: x * 2.0, lambda: tf.stop_gradient(y) * 3.0),
        ([2, None, None], [2, None, None]),
    ),
    "tuple_results": (
        lambda tf, x, y, v: tf.cond(_t(tf), lambda: (x * 2.0, x), lambda: (y, y * 3.0))[0],
        ([2, None, None], [2, 0, None]),
    ),
    "nested": (
        lambda tf, x, y, v: tf.cond(_t(tf), lambda: tf.cond(_t(tf), lambda: x * 2.0, lambda: y), lambda: v * 1.0),
        ([2, None, None], [2, 0, 0]),
    ),
    "assigns_when_not_taken": (_assigning_other, ([2, None, None], [2, None, 0])),
    "switch_case": (
        lambda tf, x, y, v: tf.switch_case(tf.constant(0), [lambda: x * 2.0, lambda: y * 3.0]),
        ([2, None, None], [2, 0, None]),
    ),
    "switch_out_of_range_default": (
        lambda tf, x, y, v: tf.switch_case(tf.constant(7), [lambda: x * 2.0, lambda: y * 3.0], default=lambda: v),
        ([None, None, 1], [0, 0, 1]),
    ),
    "case": (
        lambda tf, x, y, v: tf.case(
            [(tf.constant(False), lambda: y * 2.0), (_t(tf), lambda: x * 3.0)], default=lambda: v * 1.0
        ),
        ([3, None, None], [3, 0, 0]),
    ),
    "empty_when_not_taken": (
        lambda tf, x, y, v: tf.cond(
            tf.size(tf.zeros([0])) > 0, lambda: tf.reduce_max(tf.zeros([0])) * y, lambda: x * 2.0
        ),
        ([2, None, None], [2, 0, None]),
    ),
}


def _gradients(tf, name, compiled):
    x, y, v = tf.constant(1.0), tf.constant(2.0), tf.Variable(3.0)
    program = CASES[name][0]
    f = (lambda x, y: program(tf, x, y, v)) if not compiled else tf.function(lambda x, y: program(tf, x, y, v))
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([x, y])
        out = f(x, y)
    grads = [None if g is None else float(g) for g in tape.gradient(out, [x, y, v])]
    return float(out), grads, float(v.numpy())


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "tf_function"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_gradients_follow_tensorflows_rule(name, compiled):
    # Oracle: the If/Case op's reads as listed (TensorFlow 2.21's answers); the value by hand.
    out, grads, v_after = _gradients(gtf, name, compiled)
    assert grads == CASES[name][1][compiled]
    assert v_after == 3.0  # a branch not taken assigns nothing


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "tf_function"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_gradients_match_tensorflow(name, compiled):
    tf = pytest.importorskip("tensorflow")
    assert _gradients(gtf, name, compiled) == _gradients(tf, name, compiled)


def _tape_inside(tf):
    v = tf.Variable(3.0)

    @tf.function
    def grads(x, y):
        with tf.GradientTape() as t:
            t.watch([x, y])
            out = tf.switch_case(tf.constant(1), [lambda: v * y, lambda: x * 2.0])
        return t.gradient(out, [x, y, v])

    return [None if g is None else float(g) for g in grads(tf.constant(1.0), tf.constant(2.0))]


def test_tape_inside_the_function():
    assert _tape_inside(gtf) == [2.0, 0.0, 0.0]


def test_tape_inside_the_function_matches_tensorflow():
    tf = pytest.importorskip("tensorflow")
    assert _tape_inside(gtf) == _tape_inside(tf)


def test_branch_not_taken_prints_nothing_and_leaves_draws_alone(capfd):
    @gtf.function
    def f(x):
        def other():
            gtf.print("not taken")
            return x + gtf.random.normal([])

        return gtf.cond(gtf.constant(True), lambda: x * 2.0, other) + gtf.random.uniform([])

    gtf.random.set_seed(3)
    with_cond = float(f(gtf.constant(1.0)))
    assert "not taken" not in capfd.readouterr().err
    gtf.random.set_seed(3)
    alone = float(gtf.function(lambda x: x * 2.0 + gtf.random.uniform([]))(gtf.constant(1.0)))
    assert with_cond == alone  # the draw after the cond is the one it is without it
    assert f.experimental_get_tracing_count() == 1


def test_traced_predicate_unchanged():
    # A predicate known only at run time: jax.lax.cond, which reads both branches (zeros).
    x, y = gtf.constant(1.0), gtf.constant(2.0)
    with gtf.GradientTape() as tape:
        tape.watch([x, y])
        out = gtf.function(lambda x, y: gtf.cond(x > 0, lambda: x * 2.0, lambda: y * 3.0))(x, y)
    assert [float(g) for g in tape.gradient(out, [x, y])] == [2.0, 0.0]


REFUSED = {
    "cond_python_bool_in_function": lambda tf: tf.function(lambda x: tf.cond(True, lambda: x, lambda: -x))(
        tf.constant(1.0)
    ),
    "case_python_bool": lambda tf: tf.case([(True, lambda: tf.constant(1.0))], default=lambda: tf.constant(2.0)),
    "case_numpy_bool": lambda tf: tf.case(
        [(np.bool_(True), lambda: tf.constant(1.0))], default=lambda: tf.constant(2.0)
    ),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_predicates(name):
    with pytest.raises(TypeError, match=r"\[gradkit\]"):
        REFUSED[name](gtf)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_predicates_match_tensorflow(name):
    tf = pytest.importorskip("tensorflow")
    with pytest.raises(TypeError):
        REFUSED[name](tf)


def test_python_bool_still_accepted_eagerly():
    assert float(gtf.cond(True, lambda: gtf.constant(1.0), lambda: gtf.constant(2.0))) == 1.0
