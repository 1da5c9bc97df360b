"""A Python number or list given to a gradkit.tf op with a tensor takes that tensor's dtype.

TensorFlow converts an op's Python operands to the dtype of its tensor operand: ``tf.multiply(h,
2.0)`` of a float16 ``h`` is float16, and ``tf.add(n, 2.5)`` of an int32 ``n`` raises. gradkit.tf
made every Python number a float32 constant, so a bfloat16/float16 computation silently became
float32 (and an int32 one float32). Oracles: TensorFlow (values, dtypes, errors), and JAX's weak
types where TensorFlow's own functions disagree with each other (``tf.add(2.0, h)`` raises in
TensorFlow, ``tf.maximum(0.0, h)`` does not).
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from test_tape_dtypes import _name, run_both

import gradkit.tf as gtf

pytest.importorskip("tensorflow")

LOW = ["float16", "bfloat16"]


def _t(tf, dtype):
    return tf.constant([1.5, -2.0], getattr(tf, dtype))


FUNCTIONS = {
    "multiply": lambda tf, x: tf.multiply(x, 2.0),
    "add": lambda tf, x: tf.add(x, 1),
    "subtract": lambda tf, x: tf.subtract(x, 0.5),
    "divide": lambda tf, x: tf.divide(x, 3.0),
    "pow": lambda tf, x: [tf.pow(x, 2.0), tf.pow(2.0, x)],
    "maximum_minimum": lambda tf, x: [tf.maximum(x, 0.0), tf.minimum(0.0, x)],
    "squared_difference": lambda tf, x: tf.math.squared_difference(x, 1.0),
    "floormod_floordiv": lambda tf, x: [tf.math.floormod(x, 1.0), tf.math.floordiv(x, 1.0)],
    "where": lambda tf, x: [tf.where(x > 0, x, 0.0), tf.where(x > 0, 1.0, x)],
    "clip_by_value": lambda tf, x: tf.clip_by_value(x, -1.0, 1.0),
    "clip_by_norm": lambda tf, x: tf.clip_by_norm(x, 1.0),
    "linspace": lambda tf, x: tf.linspace(x[0], 3.0, 4),
    "stack_concat": lambda tf, x: [tf.stack([x, [1.0, 2.0]]), tf.concat([x, [1.0]], 0)],
    "list_operand": lambda tf, x: tf.multiply(x, [1.0, 0.5]),
}


@pytest.mark.parametrize("dtype", LOW)
@pytest.mark.parametrize("fn", sorted(FUNCTIONS))
def test_python_operands_keep_a_low_precision_dtype(fn, dtype):
    def program(tf):
        out = FUNCTIONS[fn](tf, _t(tf, dtype))
        out = out if isinstance(out, list) else [out]
        return out + [_name(o) for o in out]

    out = run_both(program)
    assert not isinstance(out, Exception), out


@pytest.mark.parametrize("dtype", LOW)
def test_under_a_tape_the_step_and_its_gradient_keep_the_dtype(dtype):
    def program(tf):
        v = tf.Variable([0.5, -1.25, 2.0], dtype=getattr(tf, dtype))
        with tf.GradientTape() as t:
            h = tf.maximum(tf.multiply(v, 3.0), 0.0)
            y = tf.reduce_sum(tf.clip_by_value(tf.subtract(h, 1.0), 0.0, 4.0))
        g = t.gradient(y, v)
        return [h, y, g, _name(h), _name(y), _name(g)]

    run_both(program)


def test_an_int_tensor_with_a_python_float_raises_as_in_tensorflow():
    def program(tf):
        return tf.add(tf.constant([1, 2]), 2.5)

    out = run_both(program)
    assert isinstance(out, TypeError) and "int32" in str(out), out


def test_int_tensors_keep_their_dtype_with_python_ints():
    def program(tf):
        n = tf.constant([3, 4])
        out = [tf.add(n, 2), tf.multiply(3, n), tf.maximum(n, 0), tf.math.floormod(n, 3)]
        return out + [_name(o) for o in out]

    run_both(program)


@pytest.mark.parametrize("dtype", LOW)
def test_a_python_number_before_the_tensor_takes_its_dtype_as_jax_weak_types_do(dtype):
    # TensorFlow's tf.add(2.0, h) raises (it converts 2.0 alone first), while its tf.maximum(0.0, h)
    # converts 2.0 to h's dtype: gradkit.tf does the latter for every op, as JAX's weak types do.
    h = jnp.asarray([1.5, -2.0], dtype)
    for tf_fn, jax_fn in ((gtf.add, jnp.add), (gtf.multiply, jnp.multiply), (gtf.subtract, jnp.subtract)):
        got, want = tf_fn(2.0, gtf.constant(h)), jax_fn(2.0, h)
        assert got.dtype == want.dtype == jnp.dtype(dtype)
        np.testing.assert_array_equal(np.asarray(got.numpy(), np.float32), np.asarray(want, np.float32))
    assert jax.numpy.result_type(2.0, h) == h.dtype
