"""A read of a Variable's slice (``v[0]``) is a tensor wherever TensorFlow takes one: as an op's
operand its gradient reaches the Variable, and ``tf.is_tensor`` says so.

Oracles: hand derivations, and real TensorFlow where it is installed."""

import numpy as np
import pytest

import gradkit.tf as gtf

X = np.array([[1.0, 2.0], [3.0, 5.0], [4.0, -1.0]], np.float32)


def _programs(tf):
    def normalize_moments(v):
        counts, mean_ss, var_ss = tf.constant(3.0), tf.constant([6.0, 9.0]), tf.constant([30.0, 40.0])
        mean, variance = tf.nn.normalize_moments(counts, mean_ss, var_ss, shift=v[0])
        return tf.reduce_sum(mean) + tf.reduce_sum(variance * 0.0)

    def sufficient_statistics(v):
        _, mean_ss, var_ss, _ = tf.nn.sufficient_statistics(tf.constant(X), [0], shift=v[1])
        return tf.reduce_sum(mean_ss) + 0.5 * tf.reduce_sum(var_ss)

    def scatter_sub(v):
        return tf.reduce_sum(tf.tensor_scatter_nd_sub(tf.zeros((2, 2)), [[1]], v[1:2]) * tf.constant([[1.0, 2.0]]))

    return {
        "normalize_moments": normalize_moments,
        "sufficient_statistics": sufficient_statistics,
        "tensor_scatter_nd_sub": scatter_sub,
    }


# d/dv of each program, by hand:
# normalize_moments: mean = mean_ss / counts + shift, so d sum(mean) / d v[0] = 1 per entry.
# sufficient_statistics: mean_ss = sum_i (x_i - s), var_ss = sum_i (x_i - s)^2 over 3 rows, so
#   d/ds [mean_ss + 0.5 var_ss] = -3 - sum_i (x_i - s) per column.
# tensor_scatter_nd_sub: -v[1] weighted by [1, 2].
def _expected(name):
    v = np.zeros_like(X)
    if name == "normalize_moments":
        v[0] = 1.0
    elif name == "sufficient_statistics":
        v[1] = -3.0 - (X - X[1]).sum(0)
    else:
        v[1] = [-1.0, -2.0]
    return v


@pytest.mark.parametrize("name", ["normalize_moments", "sufficient_statistics", "tensor_scatter_nd_sub"])
def test_a_slice_of_a_variable_carries_its_gradient_into_ops(name):
    v = gtf.Variable(X)
    with gtf.GradientTape() as tape:
        loss = _programs(gtf)[name](v)
    np.testing.assert_allclose(tape.gradient(loss, v).numpy(), _expected(name), rtol=1e-6)
    tf_real = pytest.importorskip("tensorflow")
    vt = tf_real.Variable(X)
    with tf_real.GradientTape() as tape:
        loss = _programs(tf_real)[name](vt)
    np.testing.assert_allclose(tape.gradient(loss, vt).numpy(), _expected(name), rtol=1e-6)


def test_is_tensor_counts_a_variable_slice():
    v = gtf.Variable(X)
    assert gtf.is_tensor(v[0]) and gtf.is_tensor(v) and not gtf.is_tensor(X)
