"""Activation gradients at their kink are TensorFlow's.

TensorFlow's SeluGrad reads the output: at x = 0 (output 0) it takes the linear piece, scale;
jax.nn.selu takes the exponential piece there, scale * alpha (1.758 instead of 1.051).
"""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
from test_tf_parity import run_both  # noqa: E402

X = np.array([0.0, -0.0, 1.0, -1.0, 50.0, -50.0, 1e-3, -1e-3], np.float32)


@pytest.mark.parametrize("name", ["selu", "elu", "relu", "relu6", "leaky_relu", "softplus", "silu", "gelu"])
def test_value_and_gradient_at_and_around_zero_match_tensorflow(name):
    def program(tf):
        x = tf.Variable(X)
        with tf.GradientTape() as t:
            y = getattr(tf.nn, name)(x)
        return [y, t.gradient(y, x)]

    out = run_both(program)
    assert not isinstance(out, Exception), out
