"""tf.while_loop hands back tensors, as TensorFlow does, whatever loop_vars started as.

Eagerly the loop ran in Python and returned its values as they were: loop_vars given as
Python numbers came back as Python numbers (no .numpy(), no .dtype), and a Variable that
no iteration replaced came back as the Variable itself.
"""

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
