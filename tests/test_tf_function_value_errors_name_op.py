"""Inside a ``tf.function``, an op whose result's shape depends on a traced tensor's value
(``tf.where(cond)``, ``tf.zeros([n])``, ``tf.range(n)``) is named in the error; Python control
flow on a tensor keeps the general explanation."""

import pytest

import gradkit.tf as tf


def test_the_op_that_needed_the_value_is_named():
    @tf.function
    def nonzero(x):
        return tf.where(x > 0)

    @tf.function
    def zeros(n):
        return tf.zeros([n])

    @tf.function
    def counting(n):
        return tf.range(n)

    for fn, arg, op in (
        (nonzero, tf.constant([1.0, -1.0]), "tf.where"),
        (zeros, tf.constant(3), "tf.zeros"),
        (counting, tf.constant(3), "tf.range"),
    ):
        with pytest.raises(TypeError, match=rf"{op} needed a tensor's value"):
            fn(arg)


def test_python_control_flow_keeps_the_general_message():
    @tf.function
    def branch(x):
        if x > 0:
            return x
        return -x

    with pytest.raises(TypeError, match="Python control flow on a tensor") as info:
        branch(tf.constant(1.0))
    assert "needed a tensor's value while being traced: the shape" not in str(info.value)
