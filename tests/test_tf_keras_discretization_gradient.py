"""A Discretization layer's output has no gradient in any output mode (TensorFlow: None), compared
with TensorFlow where it is installed."""

import numpy as np
import pytest

import gradkit.tf as gtf


def _gradient(tf, mode):
    x = np.array([[-2.0, -0.5, 0.5, 2.0]], np.float32)
    xt = tf.constant(x if mode != "one_hot" else x[0])
    with tf.GradientTape() as tape:
        tape.watch(xt)
        y = tf.cast(tf.keras.layers.Discretization(bin_boundaries=[-1.0, 0.0, 1.0], output_mode=mode)(xt), "float32")
    return tape.gradient(y, xt)


@pytest.mark.parametrize("mode", ["int", "one_hot", "count", "multi_hot"])
def test_discretization_has_no_gradient(mode):
    assert _gradient(gtf, mode) is None
    tf = pytest.importorskip("tensorflow")
    assert _gradient(tf, mode) is None
