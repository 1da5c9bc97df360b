"""``tf.sqrt``, ``tf.math.rsqrt`` and ``tf.math.reciprocal`` have TensorFlow's gradient kernels:
0 where the upstream gradient is 0, so a ``tf.where`` guard at 0 gives 0 (jax's chain rule
gives 0 * inf = NaN there), and infinite or NaN where TensorFlow's are. Second derivatives,
forward mode and Jacobians through them match too. Oracle: real TensorFlow."""

import pytest

tf_real = pytest.importorskip("tensorflow")

from test_tf_parity import run_both  # noqa: E402

OPS = {"sqrt": lambda tf: tf.sqrt, "rsqrt": lambda tf: tf.math.rsqrt, "reciprocal": lambda tf: tf.math.reciprocal}


@pytest.mark.parametrize("op", sorted(OPS))
def test_gradients_at_zero_guarded_or_not_match_tensorflow(op):
    def program(tf):
        fn = OPS[op](tf)
        x = tf.Variable([0.0, 4.0, -1.0])
        with tf.GradientTape(persistent=True) as t:
            direct = fn(x)
            weighted = tf.reduce_sum(fn(x) * tf.constant([2.0, 3.0, 0.0]))
            guarded = tf.where(x > 0, fn(x), 0.0)
        return [t.gradient(direct, x), t.gradient(weighted, x), t.gradient(guarded, x)]

    direct, weighted, guarded = run_both(program)
    # Hand derivation of the guard: the upstream gradient at x = 0 (and where x <= 0) is 0.
    assert guarded[0] == 0.0 and guarded[2] == 0.0 and weighted[2] == 0.0


@pytest.mark.parametrize("op", sorted(OPS))
def test_complex_inputs_follow_tensorflow(op):
    def program(tf):
        c = tf.Variable([0j, 1 + 1j], dtype=tf.complex64)
        with tf.GradientTape() as t:
            y = tf.where(tf.abs(c) > 0, OPS[op](tf)(c), 0)
            loss = tf.math.real(tf.reduce_sum(y * (2 - 1j)))
        return t.gradient(loss, c)

    run_both(program)


@pytest.mark.parametrize("op", sorted(OPS))
def test_second_derivatives_forward_mode_and_jacobians_match_tensorflow(op):
    def program(tf):
        fn = OPS[op](tf)
        v = tf.Variable([4.0, 0.25, 9.0])
        with tf.GradientTape(persistent=True) as outer:
            with tf.GradientTape() as inner:
                y = tf.reduce_sum(fn(v) * tf.constant([1.0, 2.0, 3.0]))
            g = inner.gradient(y, v)
            z = fn(v) * 2.0
        with tf.autodiff.ForwardAccumulator(v, tf.constant([1.0, -1.0, 0.5])) as acc:
            w = fn(v)
        return [outer.jacobian(g, v), outer.gradient(g, v), outer.jacobian(z, v), acc.jvp(w)]

    run_both(program)


def test_a_guarded_sqrt_inside_tf_function_matches_tensorflow():
    def program(tf):
        x = tf.Variable([0.0, 2.0, 0.0, 8.0])

        @tf.function
        def step():
            with tf.GradientTape() as t:
                loss = tf.reduce_sum(tf.where(x > 0, tf.sqrt(x), tf.zeros_like(x)))
            return t.gradient(loss, x)

        return [step(), step()]

    run_both(program)
