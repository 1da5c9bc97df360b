"""Loops inside and outside ``tf.function`` as TensorFlow users write them: a counter made
with ``tf.constant(0)``, a ``tf.TensorArray`` among the loop variables, a Variable returned
by a branch of a traced ``tf.cond``. Checked against pure-JAX rewrites, and against real
TensorFlow where it is installed."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gradkit as gk
import gradkit.tf as gtf

V0 = np.array([2.0, 3.0], np.float32)
X0 = np.array([1.0, 1.0], np.float32)


def counter_loop_differentiated_outside(tf):
    """``i = tf.constant(0)``: inside tf.function its value is known, so the loop runs in
    Python and a tape outside the function differentiates it."""
    v = tf.Variable(V0)

    @tf.function
    def f(x):
        _, y = tf.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * v + x), (tf.constant(0), x))
        return tf.reduce_sum(y)

    with tf.GradientTape() as tape:
        y = f(tf.constant(X0))
    return float(y), np.asarray(tape.gradient(y, v))


def test_a_counter_made_with_tf_constant_unrolls_inside_tf_function():
    def loop(v):
        y = jnp.asarray(X0)
        for _ in range(3):
            y = y * v + X0
        return jnp.sum(y)

    value, grad = counter_loop_differentiated_outside(gtf)
    np.testing.assert_allclose(value, loop(V0), rtol=1e-6)
    np.testing.assert_allclose(grad, jax.grad(loop)(jnp.asarray(V0)), rtol=1e-6)


def growing_loop_variable(tf):
    """A loop variable that grows each step (``shape_invariants`` with a None dimension)."""

    @tf.function
    def f(n):
        def body(i, acc):
            return i + 1, tf.concat([acc, [tf.cast(i, tf.float32)]], 0)

        return tf.while_loop(
            lambda i, acc: i < n,
            body,
            (tf.constant(0), tf.zeros([0])),
            shape_invariants=(tf.TensorShape([]), tf.TensorShape([None])),
        )

    i, acc = f(4)
    return int(i), np.asarray(acc)


def test_a_loop_variable_that_grows_inside_tf_function():
    i, acc = growing_loop_variable(gtf)
    assert i == 4
    np.testing.assert_array_equal(acc, [0.0, 1.0, 2.0, 3.0])


def tensor_array_loop(tf):
    """TensorFlow's idiom: a TensorArray written in a while_loop's body, under a tape."""
    v = tf.Variable(0.9)
    with tf.GradientTape() as tape:
        ta = tf.TensorArray(tf.float32, size=3)

        def body(i, y, ta):
            y = y * v
            return i + 1, y, ta.write(i, y)

        _, _, ta = tf.while_loop(lambda i, y, ta: i < 3, body, (0, tf.constant(1.0), ta))
        stacked = ta.stack()
    return np.asarray(stacked), float(tape.gradient(stacked, v))


def test_a_tensor_array_among_the_loop_variables():
    stacked, grad = tensor_array_loop(gtf)
    np.testing.assert_allclose(stacked, [0.9, 0.81, 0.729], rtol=1e-6)
    np.testing.assert_allclose(grad, 1 + 2 * 0.9 + 3 * 0.81, rtol=1e-6)  # d/dv (v + v^2 + v^3)


def tensor_array_loop_in_function(tf):
    @tf.function
    def f(x):
        ta = tf.TensorArray(tf.float32, size=3)

        def body(i, y, ta):
            y = y * x
            return i + 1, y, ta.write(i, y)

        _, _, ta = tf.while_loop(lambda i, y, ta: i < 3, body, (0, tf.constant(1.0), ta))
        return ta.stack()

    return np.asarray(f(tf.constant(0.9)))


def test_a_tensor_array_among_the_loop_variables_inside_tf_function():
    np.testing.assert_allclose(tensor_array_loop_in_function(gtf), [0.9, 0.81, 0.729], rtol=1e-6)


@pytest.mark.parametrize("kind", ["cond", "switch_case", "while_loop", "cond_both"])
def test_a_variable_from_a_traced_branch_under_a_tape_in_tf_function_is_refused(kind):
    """A traced cond/switch/while is not recorded op by op; a Variable it returns is a read
    the inner tape records, so the call raises, as for a recorded tensor, instead of
    dropping that path."""
    v = gtf.Variable([1.0, 2.0])
    five = gtf.constant([5.0, 5.0])
    branches = {
        "cond": lambda x: gtf.cond(x > 0, lambda: v, lambda: five),
        "switch_case": lambda x: gtf.switch_case(gtf.cast(x, gtf.int32), [lambda: v, lambda: five]),
        "while_loop": lambda x: gtf.while_loop(
            lambda y: gtf.reduce_sum(y) < x * 10.0, lambda y: y * 2.0, [v], maximum_iterations=5
        )[0],
        "cond_both": lambda x: gtf.cond(x > 0, lambda: v, lambda: v),
    }

    @gtf.function
    def f(x):
        with gtf.GradientTape() as tape:
            y = branches[kind](x)
            loss = gtf.reduce_sum(y * v)
        return loss, tape.gradient(loss, v)

    with pytest.raises(gk.GradkitError, match="GradientTape"):
        f(gtf.constant(1.0))
    np.testing.assert_array_equal(v.numpy(), [1.0, 2.0])


def bound_known_when_run(tf):
    """``maximum_iterations`` a tf.function argument: one program for every bound."""

    @tf.function
    def f(x, n):
        return tf.while_loop(lambda y: tf.reduce_sum(y) < 1000.0, lambda y: y * 1.5, [x], maximum_iterations=n)

    return tuple(np.asarray(f(tf.constant([1.0, 2.0]), tf.constant(n))[0]) for n in (3, 5))


def test_maximum_iterations_known_only_when_the_program_runs():
    for got, n in zip(bound_known_when_run(gtf), (3, 5)):
        np.testing.assert_allclose(got, np.array([1.0, 2.0]) * 1.5**n, rtol=1e-6)


PROGRAMS = [
    bound_known_when_run,
    counter_loop_differentiated_outside,
    growing_loop_variable,
    tensor_array_loop,
    tensor_array_loop_in_function,
]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_the_same_programs_in_tensorflow(program):
    tf = pytest.importorskip("tensorflow")
    want, got = program(tf), program(gtf)
    for w, g in zip(want, got) if isinstance(want, tuple) else [(want, got)]:
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5)
