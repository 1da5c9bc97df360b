"""tf.while_loop hands back tensors, as TensorFlow does, whatever loop_vars started as.

Eagerly the loop ran in Python and returned its values as they were: loop_vars given as
Python numbers came back as Python numbers (no .numpy(), no .dtype), and a Variable that
no iteration replaced came back as the Variable itself.
"""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
from test_tf_parity import run_both  # noqa: E402


def _is_tensor(tf, x):
    return tf.is_tensor(x) and not isinstance(x, tf.Variable)


def test_python_numbers_and_variables_come_back_as_tensors():
    def program(tf):
        counted = tf.while_loop(lambda i, x: i < 10, lambda i, x: [i + 3, x * 2], [0, 1.0])
        untouched = tf.while_loop(lambda i: i < 0, lambda i: i + 1, [5])
        v = tf.Variable(2.0)
        skipped = tf.while_loop(lambda i, x: i < 0, lambda i, x: (i + 1, x * v), (0, v))
        nested = tf.while_loop(
            lambda i, d: i < 2, lambda i, d: (i + 1, {"a": d["a"] * 2, "b": d["b"]}), (0, {"a": 1.5, "b": 2})
        )
        leaves = [*counted, *untouched, *skipped, nested[0], nested[1]["a"], nested[1]["b"]]
        return [
            counted,
            untouched,
            skipped,
            nested,
            [_is_tensor(tf, x) for x in leaves],
            [x.dtype.name for x in leaves],
        ]

    out = run_both(program)
    assert not isinstance(out, Exception), out


@pytest.mark.parametrize("steps", [0, 3])
def test_gradient_through_a_loop_over_a_variable_matches_tensorflow(steps):
    def program(tf):
        v = tf.Variable(2.0)
        with tf.GradientTape() as tape:
            _, x = tf.while_loop(lambda i, x: i < steps, lambda i, x: (i + 1, x * v), (0, v))
        return [x, tape.gradient(x, v)]

    out = run_both(program)
    assert not isinstance(out, Exception), out


@pytest.mark.parametrize("maximum_iterations", [None, 6])
def test_a_draw_in_a_traced_loop_body_is_new_at_each_iteration(maximum_iterations):
    # gradkit traced the body once (jax.lax.while_loop / scan), so every iteration drew the
    # same numbers; TensorFlow's random op runs at each iteration. The rows the loop pushes
    # must all differ, and the next call draws anew.
    def program(tf):
        @tf.function
        def rows(n):
            def body(i, acc):
                return i + 1, tf.concat([acc[1:], tf.random.normal([1, 2])], 0)

            return tf.while_loop(
                lambda i, a: i < n, body, (tf.constant(0), tf.zeros([4, 2])), maximum_iterations=maximum_iterations
            )[1]

        first, second = rows(tf.constant(4)).numpy(), rows(tf.constant(4)).numpy()
        return [
            np.array(len({tuple(r) for r in first.tolist()}) == 4),
            np.array(not np.array_equal(first, second)),
        ]

    assert run_both(program) == [True, True]
