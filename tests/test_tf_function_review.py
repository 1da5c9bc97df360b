"""``tf.function`` combining Variables passed as arguments with Variables created on the first call,
against real TensorFlow (its default, non-XLA ``tf.function``: the same program text under both
modules, values and exception classes compared)."""

import numpy as np
import pytest

import gradkit.tf as gtf

X = np.array([[0.3, -0.2, 0.5], [1.0, 0.4, -0.7], [0.1, 0.2, 0.3], [-0.6, 0.9, 0.05]], np.float32)


def _tape(tf, **kw):
    if tf is gtf:
        kw.setdefault("track_assignments", False)  # gradkit.tf's TensorFlow parity mode
    return tf.GradientTape(**kw)


def p_lazy_layer_and_a_variable_argument(tf):
    class M(tf.Module):
        def __init__(self):
            self.w = None

        @tf.function
        def __call__(self, acc, x):
            if self.w is None:
                self.w = tf.Variable(tf.ones((3, 2)) * 0.5)
            y = x @ self.w
            acc.assign_add(tf.reduce_sum(y))
            return y

    m, acc, other = M(), tf.Variable(0.0), tf.Variable(10.0)
    x = tf.constant(X)
    outs = [m(acc, x), m(acc, x * 2.0), m(other, x)]
    return [*outs, acc, other, m.w]


def p_initial_value_read_from_a_variable_argument(tf):
    # Read as a Variable the function closes over would be: its value, before the call's assignment.
    class M(tf.Module):
        def __init__(self):
            self.s = None

        @tf.function
        def __call__(self, v, x):
            if self.s is None:
                self.s = tf.Variable(v * 2.0)
            v.assign(v * x)
            return self.s + v

    m, v = M(), tf.Variable([1.0, 2.0])
    return [m(v, tf.constant(3.0)), m(v, tf.constant(1.0)), v, m.s]


def p_initial_value_read_after_the_argument_is_assigned(tf):
    # Assigned from constants only (one from x would be the call's input): the value after it.
    class M(tf.Module):
        def __init__(self):
            self.s = None

        @tf.function
        def __call__(self, v, x):
            v.assign_add(tf.ones_like(v))
            if self.s is None:
                self.s = tf.Variable(v * 2.0)
            return tf.reduce_sum(self.s * v * x)

    m, v = M(), tf.Variable([1.0, 2.0])
    return [m(v, tf.constant(1.0)), m(v, tf.constant(1.0)), v, m.s]


def p_tape_over_the_first_call_with_an_initial_value_from_the_argument(tf):
    # The initial value is computed outside the call (init_scope): no gradient flows through it.
    c = tf.Variable([1.0, 2.0])

    class M(tf.Module):
        def __init__(self):
            self.w = None

        @tf.function
        def __call__(self, v, x):
            if self.w is None:
                self.w = tf.Variable(v * 2.0)
            return tf.reduce_sum(self.w * x * v)

    m = M()
    with _tape(tf, persistent=True) as tape:
        y = m(c, tf.constant([1.0, 3.0]))
    return [y, tape.gradient(y, c), tape.gradient(y, m.w), m.w, m(c, tf.constant([1.0, 1.0]))]


def p_tape_inside_with_a_lazy_layer_and_a_variable_argument(tf):
    class M(tf.Module):
        def __init__(self):
            self.w = None

        @tf.function
        def step(self, b, x):
            if self.w is None:
                self.w = tf.Variable(tf.ones((3,)) * 0.5)
            with tf.GradientTape() as tape:
                y = tf.reduce_sum(tf.sin(x * self.w + b))
            gw, gb = tape.gradient(y, [self.w, b])
            self.w.assign_sub(0.1 * gw)
            b.assign_sub(0.1 * gb)
            return y

    m, b = M(), tf.Variable([0.1, 0.2, 0.3])
    x = tf.constant([1.0, 2.0, 3.0])
    return [m.step(b, x), m.step(b, x), m.w, b]


PROGRAMS = [v for k, v in sorted(globals().items()) if k.startswith("p_")]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_parity(program):
    pytest.importorskip("tensorflow")
    from test_tf_parity import run_both

    # run_both asserts that TensorFlow's results (values, or exception class) and gradkit's agree.
    assert run_both(program) is not None
