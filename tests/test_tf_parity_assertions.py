"""TensorFlow's assertions (``tf.assert_equal``, ``tf.assert_greater``, ``tf.assert_less``,
``tf.assert_rank``, ``tf.Assert`` and their ``tf.debugging`` names) and the top-level aliases
``tf.eig``, ``tf.eigvals``, ``tf.matrix_square_root`` and ``tf.is_symbolic_tensor`` against real
TensorFlow 2.21: the same program text under both modules (values, None-ness and exception
classes compared)."""

import pytest

from gradkit import _errors


def p_assertions_that_hold(tf):
    x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    return [
        tf.assert_equal([1, 2], [1, 2]),
        tf.assert_equal([[1, 1]], 1),
        tf.assert_equal(tf.zeros([0]), 1.0),
        tf.assert_equal(x, x, message="same"),
        tf.assert_greater(x, 0.5),
        tf.assert_greater([2, 3], [1, 2]),
        tf.assert_less(x, [[5.0, 5.0]]),
        tf.assert_less(0.0, 0.5),
        tf.assert_rank(x, 2),
        tf.assert_rank(x, tf.constant(2)),
        tf.assert_rank(3.0, 0),
        tf.Assert(True, ["never shown"]),
        tf.Assert(tf.reduce_all(x > 0), [x]),
        tf.Assert(True, "data need not be a list"),
        tf.debugging.assert_equal(x, x),
        tf.debugging.Assert(tf.constant(True), [x]),
    ]


FAILING = {
    "equal_values": lambda tf: tf.assert_equal([1, 2], [1, 3], message="msg"),
    "equal_shapes": lambda tf: tf.assert_equal([1, 2], [1, 2, 3]),
    "equal_dtypes": lambda tf: tf.assert_equal(tf.constant([1, 2]), tf.constant([1.0, 2.0])),
    "greater_ties": lambda tf: tf.assert_greater([2, 3], [2, 2]),
    "less_scalars": lambda tf: tf.assert_less(1.0, 0.5),
    "less_debugging": lambda tf: tf.debugging.assert_less(tf.constant([1.0, 3.0]), 2.0, summarize=1),
    "rank_wrong": lambda tf: tf.assert_rank(tf.zeros([2, 3]), 1, message="m"),
    "rank_not_scalar": lambda tf: tf.assert_rank(tf.zeros([2, 3]), [2]),
    "rank_debugging": lambda tf: tf.debugging.assert_rank(tf.zeros([2]), 2),
    "assert_false": lambda tf: tf.Assert(tf.constant(False), ["x is", tf.constant([1, 2])]),
    "assert_python_false": lambda tf: tf.Assert(False, [tf.constant(1.5)], summarize=3),
    "assert_not_scalar": lambda tf: tf.Assert(tf.constant([True, True]), ["x"]),
}


@pytest.mark.parametrize("name", sorted(FAILING))
def test_failed_assertions_raise(name):
    pytest.importorskip("tensorflow")
    from test_tf_parity import run_both

    out = run_both(FAILING[name])
    assert isinstance(out, Exception), out
    if not isinstance(out, _errors.OpInputError):  # the shapes or dtypes an op refuses: its own error
        assert isinstance(out, _errors.GradkitError) and str(out).startswith("[gradkit]"), out


def p_a_failed_assertion_names_the_values(tf):
    try:
        tf.assert_equal([1, 2], [1, 3], message="the message")
    except Exception as e:  # TensorFlow's InvalidArgumentError, gradkit's ValueError
        text = str(e)
    return ["the message" in text, "Condition x == y did not hold." in text, "Corresponding y values:\n[3]" in text]


def p_assertions_in_a_function(tf):
    @tf.function
    def f(x):
        tf.assert_rank(x, 1)
        tf.assert_equal(tf.constant(1), 1)
        tf.Assert(True, [x])
        return x * 2

    return f(tf.constant([1.0, 2.0]))


def p_a_known_failure_in_a_function_raises_while_tracing(tf):
    @tf.function
    def f(x):
        tf.assert_equal(tf.constant(1), 2)
        return x

    return f(tf.constant(1.0))


def p_a_wrong_rank_in_a_function(tf):
    return tf.function(lambda x: tf.assert_rank(x, 3))(tf.zeros([2]))


def p_linalg_aliases(tf):
    a = tf.constant([[4.0, 1.0], [1.0, 3.0]])
    values = tf.eigvals(a)
    e, v = tf.eig(a)
    with tf.GradientTape() as tape:
        tape.watch(a)
        root = tf.matrix_square_root(a)
        y = tf.reduce_sum(root)
    return [
        tf.eig is tf.linalg.eig,
        tf.eigvals is tf.linalg.eigvals,
        tf.matrix_square_root is tf.linalg.sqrtm,
        tf.sort(tf.math.real(values)),
        tf.sort(tf.math.real(e)),
        v.shape == (2, 2),
        root,
        tape.gradient(y, a),
    ]


def p_is_symbolic_tensor(tf):
    seen = []

    @tf.function
    def f(x):
        seen.append([tf.is_symbolic_tensor(x), tf.is_symbolic_tensor(x * 2), tf.is_symbolic_tensor(1.0)])
        return x

    f(tf.constant(1.0))
    eager = [
        tf.is_symbolic_tensor(tf.constant(1.0)),
        tf.is_symbolic_tensor(1.0),
        tf.is_symbolic_tensor(tf.Variable(1.0)),
    ]
    return [eager, seen]


PROGRAMS = [v for k, v in sorted(globals().items()) if k.startswith("p_")]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_parity(program):
    pytest.importorskip("tensorflow")
    from test_tf_parity import run_both

    run_both(program)
