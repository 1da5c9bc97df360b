"""gradkit.tf against real TensorFlow: tf.vectorized_map of a function that reads Variables,
under a tape (first and second order), over a recorded tensor, and inside tf.function."""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
from test_tf_parity import _tape, run_both  # noqa: E402

XS = np.array([[1.0, 2.0], [0.5, -1.0], [-2.0, 0.3]], np.float32)
W0 = np.array([0.7, -1.2], np.float32)


def p_gradient_through_vectorized_map(tf):
    w, b = tf.Variable(W0), tf.Variable(0.25)
    with _tape(tf) as tape:
        y = tf.vectorized_map(lambda x: tf.tanh(tf.reduce_sum(x * w) + b), tf.constant(XS))
        loss = tf.reduce_sum(y * y)
    return tape.gradient(loss, [w, b])


def p_vectorized_map_over_a_recorded_tensor(tf):
    w = tf.Variable(W0)
    with _tape(tf) as tape:
        xs = tf.sin(tf.constant(XS) * tf.reshape(w, (1, 2)))
        y = tf.vectorized_map(lambda x: tf.reduce_sum(x * w), xs)
        loss = tf.reduce_sum(y * y)
    return tape.gradient(loss, w)


def p_second_order_through_vectorized_map(tf):
    w = tf.Variable(W0)
    with _tape(tf) as outer:
        with _tape(tf) as inner:
            loss = tf.reduce_sum(tf.vectorized_map(lambda x: tf.tanh(tf.reduce_sum(x * w)), tf.constant(XS)) ** 2)
        g = inner.gradient(loss, w)
    return g, outer.jacobian(g, w)


def p_vectorized_map_in_tf_function(tf):
    w = tf.Variable(W0)

    @tf.function
    def step(xs):
        with _tape(tf) as tape:
            loss = tf.reduce_sum(tf.vectorized_map(lambda x: tf.reduce_sum(x * w) ** 2, xs))
        return loss, tape.gradient(loss, w)

    return step(tf.constant(XS)), step(tf.constant(XS * 2.0))


def p_vectorized_map_closing_over_recorded_tensors(tf):
    # fn closes over an intermediate the tape records and a watched tensor: a call per element
    # (TensorFlow falls back to a loop where it cannot vectorise too).
    x, z = tf.constant(XS[:, 0]), tf.constant(3.0)
    v = tf.Variable(1.5)
    with _tape(tf) as tape:
        tape.watch([x, z])
        scale = v * 2.0
        y = tf.vectorized_map(lambda e: e * scale * z, x)
    return y, tape.gradient(y, [x, z, v])


PROGRAMS = [
    p_vectorized_map_closing_over_recorded_tensors,
    p_gradient_through_vectorized_map,
    p_vectorized_map_over_a_recorded_tensor,
    p_second_order_through_vectorized_map,
    p_vectorized_map_in_tf_function,
]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_parity(program):
    # run_both asserts gradkit's values equal TensorFlow's; both must compute these programs.
    out = run_both(program)
    assert not isinstance(out, Exception), out


def test_a_draw_inside_vectorized_map_is_each_elements_own():
    # TensorFlow's vectorization draws with the batch prepended to the shape: each element its
    # own numbers (eagerly, inside tf.function, and a dropout mask); gradkit gave every element
    # the same draw. The gradient through the mapped draw is each element's own (hand derivation).
    def program(tf):
        x = tf.zeros([5])
        eager = tf.vectorized_map(lambda r: r + tf.random.normal([]), x).numpy()
        compiled = tf.function(lambda x: tf.vectorized_map(lambda r: r + tf.random.normal([3]), x))
        rows = compiled(tf.zeros([4, 3])).numpy()
        masks = tf.vectorized_map(lambda r: tf.nn.dropout(r + 1.0, 0.5), tf.zeros([6, 40])).numpy()
        w = tf.Variable(1.5)
        with tf.GradientTape() as tape:
            y = tf.vectorized_map(lambda r: w * tf.random.normal([]) + r, x)
        g = tape.gradient(y, w).numpy()
        return [
            np.array(len(set(eager.tolist())) == 5),
            np.array(len({tuple(r) for r in rows.tolist()}) == 4),
            np.array(len({tuple(m) for m in masks.tolist()}) == 6),
            np.array(abs(g - float(np.sum(y.numpy())) / 1.5) < 1e-4),
        ]

    assert run_both(program) == [True, True, True, True]
