"""tf.math.cumulative_logsumexp against real TensorFlow: values (exclusive, reverse, axes,
large and infinite entries), dtypes, TensorFlow's gradient formula (also where x holds inf or
-inf), second derivatives, inside tf.function, and errors. (A NaN entry is not compared:
TensorFlow's CPU kernel skips over it, by the order its max/min take NaN in; gradkit's result
is NaN from there on.)"""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
from test_tf_parity import run_both  # noqa: E402
from test_tf_parity import run_both_ok as _ok  # noqa: E402

import gradkit.tf as gtf  # noqa: E402

X = np.array([[1.0, -2.0, 0.5, 3.0], [0.0, 0.25, -1.0, 2.0]], np.float32)
W = np.array([[1.0, 2.0, -3.0, 4.0], [-0.5, 0.0, 1.5, 2.0]], np.float32)


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_values_and_gradients_match_tensorflow(axis, exclusive, reverse):
    def program(tf):
        x = tf.Variable(X)
        with tf.GradientTape() as tape:
            y = tf.math.cumulative_logsumexp(x, axis=axis, exclusive=exclusive, reverse=reverse)
            loss = tf.reduce_sum(y * tf.constant(W))
        return [y, tape.gradient(loss, x)]

    _ok(program)


@pytest.mark.parametrize(
    "row", [[1.0, -np.inf, 2.0, 3.0], [-np.inf] * 4, [1.0, np.inf, 2.0, 4.0], [1e3, 1e3, 0, 0], [-np.inf, 0, 2, 0]]
)
@pytest.mark.parametrize("exclusive", [False, True])
def test_infinite_nan_and_large_entries_match_tensorflow(row, exclusive):
    def program(tf):
        x = tf.Variable(np.array(row, np.float32))
        with tf.GradientTape() as tape:
            y = tf.math.cumulative_logsumexp(x, exclusive=exclusive)
            loss = tf.reduce_sum(y * tf.constant(W[0]))
        return [y, tape.gradient(loss, x)]

    _ok(program)


def test_second_derivatives_match_tensorflow():
    def program(tf):
        x = tf.Variable(X)
        with tf.GradientTape() as outer:
            with tf.GradientTape() as inner:
                y = tf.math.cumulative_logsumexp(x, axis=1, exclusive=True)
                loss = tf.reduce_sum(y[:, 1:] * tf.constant(W[:, 1:]))
            g = inner.gradient(loss, x)
            gg = tf.reduce_sum(g * g)
        return [g, outer.gradient(gg, x)]

    want, got = program(tf_real), program(gtf)
    for w, g in zip(want, got):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=2e-4, atol=1e-6)  # float32 rounding of two formulas


def test_dtypes_empty_and_tf_function_match_tensorflow():
    def program(tf):
        x = tf.Variable(X)

        @tf.function
        def forward():
            return tf.math.cumulative_logsumexp(x, axis=1, reverse=True)

        with tf.GradientTape() as tape:
            y = forward()
            loss = tf.reduce_sum(y * tf.constant(W))
        half = tf.math.cumulative_logsumexp(tf.constant([1.0, 2.0], tf.float16))
        empty = tf.math.cumulative_logsumexp(tf.zeros([0]), exclusive=True)
        dtype = half.dtype.name if tf is tf_real else np.dtype(half.dtype).name
        return [y, tape.gradient(loss, x), half, dtype, empty]

    _ok(program)


BAD = {
    "int": lambda tf: tf.math.cumulative_logsumexp([1, 2]),
    "axis": lambda tf: tf.math.cumulative_logsumexp(tf.constant(X), axis=2),
    "scalar": lambda tf: tf.math.cumulative_logsumexp(1.0),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_arguments_raise_as_in_tensorflow_with_a_gradkit_message(name):
    assert isinstance(run_both(BAD[name]), Exception)
    with pytest.raises(Exception, match=r"^\[gradkit\] tf\.math\.cumulative_logsumexp"):
        BAD[name](gtf)
