"""NumPy numbers as operands of gradkit.tf's ops, against real TensorFlow 2.21: TensorFlow casts
them to the dtype of the op's tensors, wherever they stand (``tf.multiply(h, np.float32(0.5))``
of a float16 ``h`` is float16; ``tf.add(n, np.float32(3.5))`` of an int32 ``n`` is int32), where
NumPy's and JAX's promotion would widen the result. Values, dtypes and gradients compared."""

import numpy as np
import pytest


def _operands(tf):
    return tf.constant([1.0, 2.5], tf.float16), tf.constant([1, 2]), tf.constant([0.5, 2.0])


def p_half_precision_keeps_its_dtype(tf):
    h, _, _ = _operands(tf)
    return [
        tf.multiply(h, np.float32(0.5)),
        tf.multiply(np.float32(0.5), h),
        tf.maximum(h, np.float32(1.5)),
        tf.where(tf.constant([True, False]), h, np.float32(1.5)),
        tf.concat([h, np.array([3.0], np.float32)], 0),
        tf.clip_by_value(h, np.float32(0), np.float32(2)),
        tf.math.xlogy(h, np.float32(2.0)),
        tf.add(h, np.array([1e3, 0.1])),  # float64 NumPy data rounded to float16
    ]


def p_integers_keep_their_dtype(tf):
    _, n, _ = _operands(tf)
    return [tf.add(n, np.float32(3.5)), tf.add(n, np.array([3.5, 1.2], np.float32)), tf.add(n, np.array([True, False]))]


def p_float32_is_not_widened_by_float64_numpy(tf):
    _, _, x = _operands(tf)
    return [tf.subtract(x, np.array([0.1, 0.2])), tf.pow(x, np.int64(2)), tf.math.polygamma(np.array([1, 2]), x)]


def p_gradient_through_an_op_with_a_numpy_operand(tf):
    _, _, x = _operands(tf)
    v = tf.Variable(x)
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.multiply(v, np.array([3.0, -1.0])) + tf.math.xlogy(v, np.float64(2.0)))
    return [y, tape.gradient(y, v)]


def p_numpy_only_operands_keep_numpys_dtypes(tf):
    return tf.add(np.float32([1.0]), np.float16([1.0]))


PROGRAMS = [v for k, v in sorted(globals().items()) if k.startswith("p_")]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_parity(program):
    pytest.importorskip("tensorflow")
    from test_tf_parity import run_both

    run_both(program)


def test_half_precision_by_hand():
    import gradkit.tf as gtf

    h = gtf.constant([1.0, 2.5], gtf.float16)
    out = gtf.multiply(h, np.float32(0.5))
    assert out.dtype == gtf.float16
    np.testing.assert_array_equal(out.numpy(), np.array([0.5, 1.25], np.float16))
