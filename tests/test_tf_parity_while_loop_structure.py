"""``tf.while_loop`` inside ``tf.function`` checks that the body returns ``loop_vars``' nesting,
as TensorFlow's graph loop does (its eager loop does not), and hands the results back in
``loop_vars``' sequence types. Checked against real TensorFlow."""

import pytest

tf_real = pytest.importorskip("tensorflow")

from test_tf_parity import programs, run_program  # noqa: E402


def p_refuses_a_dict_with_other_keys(tf):
    @tf.function
    def f(x):
        return tf.while_loop(lambda s: s["a"] < 3.0, lambda s: {"b": s["a"] + 1.0}, [{"a": x}])

    return f(tf.constant(1.0))


def p_refuses_a_regrouped_tuple(tf):
    @tf.function
    def f(x):
        return tf.while_loop(lambda a, bc: a < 3.0, lambda a, bc: ((a + 1, bc[0]), bc[1]), (x, (x, x)))

    return f(tf.constant(1.0))


def p_refuses_a_regrouped_tuple_with_a_known_counter(tf):
    @tf.function
    def f(x):
        return tf.while_loop(lambda i, a, bc: i < 2, lambda i, a, bc: (i + 1, (a, bc[0]), bc[1]), (0, x, (x, x)))

    return f(tf.constant(1.0))


def p_a_list_for_a_tuple_is_taken(tf):
    @tf.function
    def f(x):
        i, (a,) = tf.while_loop(lambda i, a: i < 3, lambda i, a: [i + 1, [a[0] * 2.0]], (0, (x,)))
        return [i, a]

    return f(tf.constant(1.0))


def p_a_lone_result_for_one_loop_variable(tf):
    @tf.function
    def f(x):
        return tf.while_loop(lambda a: a < 10.0, lambda a: a * 2.0, [x])

    return f(tf.constant(1.0))


def p_eagerly_refuses_a_list_for_a_tuple(tf):
    return tf.while_loop(lambda a, bc: a < 3.0, lambda a, bc: (a + 1, (bc[0], bc[1])), (1.0, [2.0, 3.0]))


def p_eagerly_refuses_a_regrouped_tuple(tf):
    return tf.while_loop(lambda a, bc: a < 3.0, lambda a, bc: ((a + 1, bc[0]), bc[1]), (1.0, (2.0, 2.0)))


def p_eagerly_a_list_for_the_outer_tuple_is_taken(tf):
    return tf.while_loop(lambda a, bc: a < 3.0, lambda a, bc: [a + 1, [bc[0], bc[1]]], (1.0, [2.0, 3.0]))[1]


PROGRAMS = programs(globals())


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_parity(program):
    outcome = run_program(program)
    assert isinstance(outcome, Exception) == ("refuses" in program.__name__), outcome
