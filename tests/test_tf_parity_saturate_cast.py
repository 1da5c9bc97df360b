"""``tf.saturate_cast``, ``tf.cast``'s wrap of floats into narrow integers and
``tf.parallel_stack`` against real TensorFlow 2.21: the same program text under both modules (values, None-ness and exception classes compared)."""

import warnings

import numpy as np
import pytest

import gradkit.tf as gtf
from gradkit import _errors

INF = float("inf")


def p_float_to_integers(tf):
    x = tf.constant([-5.0, 3.7, 300.0, INF, -INF, 0.5])
    return [
        tf.saturate_cast(x, tf.uint8),
        tf.saturate_cast(x, tf.int8),
        tf.saturate_cast(x, "uint16"),
        tf.saturate_cast([-5e9, 3e9, 2147483647.0, -2.5], tf.int32),
        tf.saturate_cast(tf.constant([5e9, -1.0, 7.0]), tf.uint32),
    ]


def p_cast_wraps_floats_into_narrow_and_unsigned_integers(tf):
    # tf.cast truncates toward zero, then wraps (image code: tf.cast(x * 255, tf.uint8)).
    x = tf.constant([-1.0, -2.7, 300.0, 255.5, -0.9, 127.6, -129.0, 200.0, 65536.5, 3e9, INF, float("nan")])
    halves = tf.constant([-1.5, 2.5, 300.0, INF], tf.float16)
    return [
        tf.cast(x, tf.uint8),
        tf.cast(x, tf.int8),
        tf.cast(x, tf.int16),
        tf.cast(x, tf.uint16),
        tf.cast(x[:9], tf.uint32),
        tf.cast(halves, tf.uint8),
        tf.cast(tf.cast(halves, tf.bfloat16), tf.int8),
        tf.function(lambda t: tf.cast(t * 255.0, tf.uint8))(tf.constant([-0.01, 0.5, 1.01])),
    ]


def p_float_to_narrower_floats(tf):
    x = tf.constant([1e6, -1e6, INF, -INF, 1.5, 65504.0])
    return [tf.saturate_cast(x, tf.float16), tf.saturate_cast(x, tf.bfloat16), tf.saturate_cast(x, tf.float32)]


def p_narrow_floats_to_integers(tf):
    b = tf.constant([300.0, -300.0, 1.5, 70000.0], tf.bfloat16)
    h = tf.constant([300.0, -300.0, 1.5, 65504.0], tf.float16)
    with warnings.catch_warnings():
        # TensorFlow's bound computation overflows to float16 or bfloat16 with a NumPy warning.
        warnings.simplefilter("ignore", RuntimeWarning)
        return [
            tf.saturate_cast(b, tf.int8),
            tf.saturate_cast(b, tf.uint8),
            tf.saturate_cast(b, tf.int32),
            tf.saturate_cast(h, tf.int8),
            tf.saturate_cast(h, tf.int32),
            tf.saturate_cast(h, tf.bfloat16),
            tf.saturate_cast(b, tf.float16),
        ]


def p_integer_to_integers(tf):
    x = tf.constant([-1, 256, 7, -129, 40000])
    return [tf.saturate_cast(x, tf.uint8), tf.saturate_cast(x, tf.int8), tf.saturate_cast(x, tf.int16)]


def p_integer_to_floats(tf):
    with warnings.catch_warnings():
        # TensorFlow's bound computation overflows int32's max to float16 with a NumPy warning.
        warnings.simplefilter("ignore", RuntimeWarning)
        wide = tf.saturate_cast(tf.constant([70000, -70000, 3]), tf.float16)
    return [
        wide,
        tf.saturate_cast(tf.constant([1, 200], tf.uint8), tf.float32),
        tf.saturate_cast(tf.constant([-3, 4], tf.int8), tf.uint16),
    ]


def p_complex(tf):
    z = tf.constant([1e10 + 2j, -3.7 + 1j, 500 - 500j])
    return [
        tf.saturate_cast(z, tf.int8),
        tf.saturate_cast(z, tf.uint8),
        tf.saturate_cast(tf.constant([1.5, -2.0]), tf.complex64),
        tf.saturate_cast(z, tf.complex64),
    ]


def p_bool_has_no_range(tf):
    return tf.saturate_cast(tf.constant([True, False]), tf.int32)


def p_to_bool_has_no_range(tf):
    return tf.saturate_cast(tf.constant([1.0]), tf.bool)


def p_unknown_dtype(tf):
    return tf.saturate_cast(tf.constant([1.0]), "nope")


def p_gradient_passes_inside_the_range(tf):
    x = tf.Variable([-1e6, 3.0, 65504.0, 1e6, -65504.0])
    with tf.GradientTape(persistent=True) as tape:
        half = tf.saturate_cast(x, tf.float16)
        y = tf.reduce_sum(tf.cast(half, tf.float32) * x)
        counted = tf.saturate_cast(x, tf.int32)
    return [half, tape.gradient(half, x), tape.gradient(y, x), tape.gradient(counted, x)]


def p_saturate_cast_in_a_function(tf):
    f = tf.function(lambda x: tf.saturate_cast(x * 100.0, tf.int8))
    return [f(tf.constant([0.5, 2.0, -3.0])), tf.dtypes.saturate_cast(tf.constant([300.0]), tf.uint8)]


def p_parallel_stack_eagerly(tf):
    return tf.parallel_stack([tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0])])


def p_parallel_stack_in_a_function(tf):
    f = tf.function(lambda a, b: tf.parallel_stack([a, b * 2, [5.0, 6.0]]))
    g = tf.function(lambda: tf.parallel_stack([[1, 2], [3, 4]]))
    return [f(tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0])), g()]


def p_parallel_stack_shapes_differ(tf):
    return tf.function(lambda a, b: tf.parallel_stack([a, b]))(tf.constant([1.0, 2.0]), tf.constant([1.0]))


def p_parallel_stack_dtypes_differ(tf):
    return tf.function(lambda a, b: tf.parallel_stack([a, b]))(tf.constant([1.0]), tf.constant([1]))


def p_parallel_stack_of_nothing(tf):
    return tf.function(lambda: tf.parallel_stack([]))()


PROGRAMS = [v for k, v in sorted(globals().items()) if k.startswith("p_")]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_parity(program):
    pytest.importorskip("tensorflow")
    from test_tf_parity import run_both

    out = run_both(program)
    if isinstance(out, Exception):
        assert isinstance(out, _errors.GradkitError), out


def test_parallel_stack_gradient_is_tf_stacks():
    # TensorFlow registers no gradient for ParallelConcat (LookupError); gradkit's is tf.stack's,
    # which TensorFlow gives for the same program written with tf.stack.
    tf = pytest.importorskip("tensorflow")

    def program(tf, stack):
        @tf.function
        def f(a):
            with tf.GradientTape() as tape:
                tape.watch(a)
                y = tf.reduce_sum(stack([a, a * 2.0]) ** 2)
            return tape.gradient(y, a)

        return f(tf.constant([1.0, -2.0])).numpy()

    ours = program(gtf, gtf.parallel_stack)
    np.testing.assert_allclose(ours, program(tf, tf.stack), rtol=1e-6)
    with pytest.raises(Exception, match="gradient registry has no entry for: ParallelConcat"):
        program(tf, tf.parallel_stack)


def test_no_numpy_warning_where_tensorflows_bounds_overflow():
    tf = pytest.importorskip("tensorflow")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = tf.saturate_cast(tf.constant([70000, -70000, 3]), tf.float16).numpy()
    ours = gtf.saturate_cast(gtf.constant([70000, -70000, 3]), gtf.float16)  # warnings are errors here
    np.testing.assert_array_equal(ours.numpy(), expected)
    for dtype in (gtf.int8, gtf.uint8, gtf.int32, gtf.float16):
        gtf.saturate_cast(gtf.constant([300.0, 70000.0], gtf.bfloat16), dtype)
    gtf.saturate_cast(gtf.constant([65504.0], gtf.float16), gtf.bfloat16)
