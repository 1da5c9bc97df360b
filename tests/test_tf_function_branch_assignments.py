"""Inside ``tf.function``, a ``tf.cond`` / ``tf.while_loop`` / ``tf.switch_case`` driven by a value
known only when the program runs cannot assign Variables in its branches (gradkit runs them as
jax control flow, whose bodies are pure): the error says so and how to write it, the Variable is
unchanged, and the rewrite it suggests gives what TensorFlow gives for the original program."""

import numpy as np
import pytest

import gradkit.tf as gtf


def _original(tf):
    v = tf.Variable(0.0)

    @tf.function
    def f(x):
        def up():
            v.assign_add(x)
            return tf.constant(1)

        def down():
            v.assign_sub(x)
            return tf.constant(2)

        return tf.cond(x > 0, up, down), v.read_value()

    return v, f


def _rewritten(tf):
    v = tf.Variable(0.0)

    @tf.function
    def f(x):
        v.assign(tf.where(x > 0, v + x, v - x))
        return tf.where(x > 0, 1, 2), v.read_value()

    return v, f


@pytest.mark.parametrize(
    "what,program",
    [
        ("tf.cond", lambda tf, v, x: tf.cond(x > 0, lambda: v.assign_add(x), lambda: v.assign_sub(x))),
        (
            "tf.while_loop",
            lambda tf, v, x: tf.while_loop(lambda i: i < x, lambda i: (v.assign_add(i), i + 1)[1], [0.0]),
        ),
        (
            "tf.switch_case",
            lambda tf, v, x: tf.switch_case(tf.cast(x, tf.int32), [lambda: v.assign(1.0), lambda: v.assign(2.0)]),
        ),
    ],
)
def test_the_error_names_the_op_and_the_rewrite_and_leaves_the_variable(what, program):
    v = gtf.Variable(5.0)
    f = gtf.function(lambda x: program(gtf, v, x))
    with pytest.raises(ValueError) as info:
        f(gtf.constant(1.0))
    message = str(info.value)
    assert message.startswith(f"[gradkit] {what} inside tf.function"), message
    assert "v.assign(tf.where(pred, v + x, v - x))" in message
    assert float(v.numpy()) == 5.0


@pytest.mark.parametrize(
    "program",
    [
        # The value assigned is made outside the branch (an argument): the branch not taken must
        # not assign it, and a loop that runs no iteration must not either.
        lambda tf, v, x, y: tf.cond(x > 0, lambda: (v.assign(y), x * 1.0)[1], lambda: x * 1.0),
        lambda tf, v, x, y: tf.cond(x < 0, lambda: x * 1.0, lambda: (v.assign(y), x * 1.0)[1]),
        lambda tf, v, x, y: tf.while_loop(lambda i: i < x, lambda i: (v.assign(y), i + 1.0)[1], [tf.constant(0.0)]),
        lambda tf, v, x, y: tf.cond(x > 0, lambda: v.assign(7.0), lambda: v.assign(8.0)),
    ],
    ids=["untaken_true_branch", "untaken_false_branch", "loop_of_no_iteration", "constants_in_both"],
)
def test_a_value_made_outside_the_branch_is_refused_too(program):
    v = gtf.Variable(10.0)
    f = gtf.function(lambda x, y: program(gtf, v, x, y))
    with pytest.raises(ValueError, match=r"\[gradkit\] tf\.(cond|while_loop) inside tf.function"):
        f(gtf.constant(-2.0), gtf.constant(3.0))
    assert float(v.numpy()) == 10.0  # TensorFlow leaves it so where the branch is not taken


def test_the_suggested_rewrite_matches_tensorflow_on_the_original_program():
    tf_real = pytest.importorskip("tensorflow")
    v_tf, f_tf = _original(tf_real)
    v_gk, f_gk = _rewritten(gtf)
    for x in (1.0, -3.0, 2.5):
        want = [float(t) for t in f_tf(tf_real.constant(x))]
        got = [float(t) for t in f_gk(gtf.constant(x))]
        np.testing.assert_allclose(got, want)
    np.testing.assert_allclose(v_gk.numpy(), v_tf.numpy())
