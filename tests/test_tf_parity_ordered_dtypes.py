"""Ops that need an order (comparisons, max/min, relu, clip, sort) refuse complex and bool tensors,
as TensorFlow has no kernel for them (jax would compare complex numbers lexicographically, a
meaningless answer), and softplus, log_sigmoid and softsign take real floats only. Against real
TensorFlow: both accept a dtype or both raise an error of the same builtin class."""

import numpy as np
import pytest

pytest.importorskip("tensorflow")

from test_tf_parity import run_both  # noqa: E402

OPS = {
    "less": lambda tf, a: tf.less(a, a),
    "greater_equal": lambda tf, a: tf.math.greater_equal(a, a),
    "maximum": lambda tf, a: tf.maximum(a, a),
    "minimum": lambda tf, a: tf.minimum(a, a),
    "relu": lambda tf, a: tf.nn.relu(a),
    "relu6": lambda tf, a: tf.nn.relu6(a),
    "leaky_relu": lambda tf, a: tf.nn.leaky_relu(a),
    "clip_by_value": lambda tf, a: tf.clip_by_value(a, a, a),
    "sort": lambda tf, a: tf.sort(a),
    "argsort": lambda tf, a: tf.argsort(a),
    "softplus": lambda tf, a: tf.nn.softplus(a),
    "log_sigmoid": lambda tf, a: tf.math.log_sigmoid(a),
    "softsign": lambda tf, a: tf.nn.softsign(a),
}
DTYPES = ["bool", "uint8", "int32", "float32", "complex64"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", sorted(OPS))
def test_an_ordered_op_takes_the_dtypes_tensorflow_takes(op, dtype):
    run_both(lambda tf: OPS[op](tf, tf.cast(tf.constant([1, 0, 2]), getattr(tf, dtype))))


def test_a_complex_comparison_says_what_to_compare_instead():
    import gradkit.tf as tf

    z = tf.constant([1 + 2j, -0.5 + 0.3j], tf.complex64)
    with pytest.raises(TypeError, match=r"^\[gradkit\] tf.math.less takes a tensor of dtype .*complex64"):
        tf.less(z, z)
    np.testing.assert_array_equal(tf.less(tf.abs(z), 1.0).numpy(), [False, True])
