"""``tf.quantization``'s simulated quantization against real TensorFlow 2.21 (the same program
text under both modules: values, gradients and exception classes), plus hand derivations where
TensorFlow has no kernel to compare with."""

import numpy as np
import pytest

import gradkit.tf as gtf
from gradkit import _errors

# Inputs inside, at the ends of and outside each range, and 0. None lies exactly half-way between
# two levels: there TensorFlow's compiled kernels round either way, depending on the code path.
X = np.array([-8.1, -6.05, -5.93, -2.47, -1.37, -0.013, 0.0, 0.29, 1.97, 3.14, 5.98, 6.0, 9.1], np.float32)
RANGES = [(-6.0, 6.0), (-1.0, 3.0), (0.0, 1.0), (-0.5, 0.0), (1.0, 6.0), (-0.1, 25.5), (-3.0, -1.0)]


def p_fake_quant_args_grid(tf):
    out = []
    for low, high in RANGES:
        for num_bits, narrow in ((8, False), (8, True), (2, False), (4, True), (12, False)):
            out.append(
                tf.quantization.fake_quant_with_min_max_args(X, low, high, num_bits=num_bits, narrow_range=narrow)
            )
    return out


def p_fake_quant_vars_grid(tf):
    out = []
    for low, high in RANGES + [(6.0, -6.0), (0.0, 0.0), (1.0, 1.0)]:
        for num_bits, narrow in ((8, False), (3, True), (10, True)):
            out.append(
                tf.quantization.fake_quant_with_min_max_vars(
                    tf.constant(X), tf.constant(low), tf.constant(high), num_bits=num_bits, narrow_range=narrow
                )
            )
    return out


def p_fake_quant_per_channel_any_rank(tf):
    low = tf.constant([-6.0, -1.0, 0.0, -0.5])
    high = tf.constant([6.0, 3.0, 1.0, 0.0])
    x = tf.reshape(tf.range(24.0) * 0.71 - 8.03, (2, 3, 4))
    return [
        tf.quantization.fake_quant_with_min_max_vars_per_channel(x, low, high),
        tf.quantization.fake_quant_with_min_max_vars_per_channel(tf.reshape(x, (6, 4)), low, high, 5, True),
        tf.quantization.fake_quant_with_min_max_vars_per_channel(x[0, 0], low, high, num_bits=2),
        tf.quantization.fake_quant_with_min_max_vars_per_channel(tf.reshape(x, (1, 2, 3, 1, 4)), low, high),
    ]


def p_fake_quant_gradients(tf):
    x = tf.Variable(X)
    low, high = tf.Variable(-5.0), tf.Variable(5.0)
    weights = tf.range(13.0)
    with tf.GradientTape(persistent=True) as tape:
        args = tf.quantization.fake_quant_with_min_max_args(x, -5.0, 5.0, num_bits=6)
        vars_ = tf.quantization.fake_quant_with_min_max_vars(x, low, high, narrow_range=True)
        loss = tf.reduce_sum(args * weights) + tf.reduce_sum(vars_ * vars_)
    return [tape.gradient(args, x), tape.gradient(loss, [x, low, high])]


def p_fake_quant_per_channel_gradients(tf):
    x = tf.Variable(tf.reshape(tf.range(12.0) * 1.3 - 7.0, (3, 4)))
    low, high = tf.Variable([-5.0, -4.0, -3.0, -2.0]), tf.Variable([5.0, 4.0, 3.0, 2.0])
    with tf.GradientTape() as tape:
        y = tf.quantization.fake_quant_with_min_max_vars_per_channel(x, low, high, num_bits=4)
        loss = tf.reduce_sum(y * tf.reshape(tf.range(12.0), (3, 4)))
    return tape.gradient(loss, [x, low, high])


def p_fake_quant_gradient_ops(tf):
    g = tf.reshape(tf.range(12.0), (3, 4))
    x = tf.reshape(tf.constant(X[:12]), (3, 4))
    return [
        tf.quantization.fake_quant_with_min_max_args_gradient(g, x, -2.0, 3.0, num_bits=4),
        list(tf.quantization.fake_quant_with_min_max_vars_gradient(g, x, -2.0, 3.0, narrow_range=True)),
        list(
            tf.quantization.fake_quant_with_min_max_vars_per_channel_gradient(g, x, [-1.0, -2, -3, -4], [1.0, 2, 3, 4])
        ),
        list(tf.quantization.fake_quant_with_min_max_vars_gradient(g, x, 0.0, 0.0)),
    ]


def p_fake_quant_in_a_function(tf):
    f = tf.function(lambda x, lo, hi: tf.quantization.fake_quant_with_min_max_vars(x, lo, hi, num_bits=5))
    return [
        f(tf.constant(X), tf.constant(-2.0), tf.constant(2.5)),
        f(tf.constant(X * 3), tf.constant(-1.0), tf.constant(7.0)),
    ]


def p_quantization_aware_training_steps(tf):
    # A range trained with the weights: SGD on min, max and the weights through fake quantization.
    w = tf.Variable([[0.3, -1.2], [2.5, 0.7], [-0.4, 1.9]])
    low, high = tf.Variable(-1.0), tf.Variable(1.0)
    x = tf.constant([[1.0, -2.0, 0.5], [0.3, 0.8, -1.5]])
    target = tf.constant([[1.0, 0.0], [0.0, 1.0]])
    history = []
    for _ in range(4):
        with tf.GradientTape() as tape:
            q = tf.quantization.fake_quant_with_min_max_vars(w, low, high, num_bits=4)
            loss = tf.reduce_mean((x @ q - target) ** 2)
        grads = tape.gradient(loss, [w, low, high])
        for v, g in zip([w, low, high], grads):
            v.assign_sub(0.1 * g)
        history.append(loss)
    return [history, w, low, high]


def p_quantize_and_dequantize_v2(tf):
    x = tf.constant(X)
    out = []
    for low, high in ((-1.0, 1.0), (-7.0, 5.0), (0.0, 5.0), (-3.0, -1.0), (5.0, -5.0)):
        for signed, narrow in ((True, False), (True, True), (False, False)):
            for bits in (8, 3):
                out.append(
                    tf.quantization.quantize_and_dequantize_v2(
                        x, low, high, signed_input=signed, num_bits=bits, narrow_range=narrow
                    )
                )
                if low <= high:
                    out.append(
                        tf.quantization.quantize_and_dequantize_v2(
                            x, low, high, signed_input=signed, num_bits=bits, narrow_range=narrow, range_given=True
                        )
                    )
    ties = tf.constant([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5])
    out.append(tf.quantization.quantize_and_dequantize_v2(ties, -127.0, 127.0, range_given=True))
    out.append(tf.quantization.quantize_and_dequantize_v2(ties, -127.0, 127.0, range_given=True, round_mode="HALF_UP"))
    out.append(tf.quantization.quantize_and_dequantize_v2(tf.zeros(3), -1.0, 1.0))
    return out


def p_quantize_and_dequantize_per_slice(tf):
    x = tf.reshape(tf.constant(X[:12]), (3, 4))
    return [
        tf.quantization.quantize_and_dequantize_v2(x, [-1.0, -2, -3, -4], [1.0, 2, 3, 4], axis=1),
        tf.quantization.quantize_and_dequantize_v2(x, [-1.0, -2, -3], [1.0, 2, 3], axis=0, num_bits=4),
        tf.quantization.quantize_and_dequantize_v2(x, [-1.0, -2, -3, -4], [1.0, 2, 3, 4], axis=-1, signed_input=False),
    ]


def p_quantize_and_dequantize_gradients(tf):
    x = tf.Variable(X)
    low, high = tf.Variable(-3.0), tf.Variable(2.0)
    with tf.GradientTape(persistent=True) as tape:
        v2 = tf.quantization.quantize_and_dequantize_v2(x, low, high) * tf.range(13.0)
        given = tf.quantization.quantize_and_dequantize_v2(x, low, high, range_given=True) * tf.range(13.0)
        v1 = tf.quantization.quantize_and_dequantize(x, low, high, range_given=True) * tf.range(13.0)
    return [tape.gradient(v2, [x, low, high]), tape.gradient(given, [x, low, high]), tape.gradient(v1, x)]


def p_quantize_and_dequantize_per_slice_gradient(tf):
    x = tf.Variable(tf.reshape(tf.constant(X[:12]), (3, 4)))
    with tf.GradientTape() as tape:
        y = tf.quantization.quantize_and_dequantize_v2(x, [-1.0, -2, -3, -4], [1.0, 2, 3, 4], axis=1)
        loss = tf.reduce_sum(y * tf.reshape(tf.range(12.0), (3, 4)))
    return tape.gradient(loss, x)


def p_error_args_range(tf):
    return tf.quantization.fake_quant_with_min_max_args(X, 6.0, -6.0)


def p_error_args_num_bits(tf):
    return tf.quantization.fake_quant_with_min_max_args(X, num_bits=17)


def p_error_vars_num_bits(tf):
    return tf.quantization.fake_quant_with_min_max_vars(X, -1.0, 1.0, num_bits=1)


def p_error_vars_vector_range(tf):
    return tf.quantization.fake_quant_with_min_max_vars(X, [-1.0], [1.0])


def p_error_per_channel_size(tf):
    return tf.quantization.fake_quant_with_min_max_vars_per_channel(tf.zeros((2, 4)), [-1.0] * 3, [1.0] * 3)


def p_error_fake_quant_integers(tf):
    return tf.quantization.fake_quant_with_min_max_args(tf.constant([1, 2]))


def p_error_qdq_range(tf):
    return tf.quantization.quantize_and_dequantize_v2(X, 5.0, -5.0, range_given=True)


def p_error_qdq_num_bits(tf):
    return tf.quantization.quantize_and_dequantize_v2(X, -1.0, 1.0, num_bits=62)


def p_error_qdq_round_mode(tf):
    return tf.quantization.quantize_and_dequantize_v2(X, -1.0, 1.0, round_mode="HALF_DOWN")


def p_error_qdq_axis(tf):
    return tf.quantization.quantize_and_dequantize_v2(tf.zeros((2, 3)), -1.0, 1.0, axis=2)


def p_error_qdq_integers(tf):
    return tf.quantization.quantize_and_dequantize_v2(tf.constant([1, 2]), -1, 1)


PROGRAMS = [v for k, v in sorted(globals().items()) if k.startswith("p_")]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_parity(program):
    pytest.importorskip("tensorflow")
    from test_tf_parity import run_both

    out = run_both(program)
    if isinstance(out, Exception):
        assert isinstance(out, _errors.GradkitError), out
        assert str(out).startswith("[gradkit] "), out


def _levels(y, low, high, num_bits=8, narrow=False):
    """The grid index of each fake-quantized value, from a NumPy float32 copy of the nudging."""
    f32 = np.float32
    qmin, qmax = f32(1 if narrow else 0), f32((1 << num_bits) - 1)
    scale = f32(f32(high) - f32(low)) / (qmax - qmin)
    zero = qmin - f32(low) / scale
    zero = qmin if zero < qmin else qmax if zero > qmax else np.floor(zero + f32(0.5))
    return np.rint((np.asarray(y, np.float64) - float((qmin - zero) * scale)) / float(scale)), scale


def test_fake_quant_by_hand():
    # 4 bits over [-6, 6]: the step is 12/15 = 0.8, 6/0.8 = 7.5 rounds to the zero point 8, so the
    # grid runs from -8 * 0.8 = -6.4 to 7 * 0.8 = 5.6 and each input goes to its nearest level.
    x = np.array([-7.0, -6.1, -1.0, -0.39, 0.41, 2.0, 5.7, 9.0], np.float32)
    y = gtf.quantization.fake_quant_with_min_max_args(x, -6.0, 6.0, num_bits=4).numpy()
    expected = np.array([-8, -8, -1, 0, 1, 3, 7, 7]) * 0.8
    np.testing.assert_allclose(y, expected, rtol=1e-6, atol=1e-6)
    levels, _ = _levels(y, -6.0, 6.0, num_bits=4)
    np.testing.assert_array_equal(levels, [0, 0, 7, 8, 9, 11, 15, 15])


def test_qdq_per_slice_given_range_by_hand():
    # Per slice with range_given, TensorFlow 2.21's kernel refuses every shape of min and max, so
    # this is checked by hand: column j's range [-(j+1), j+1] gives scale 127/(j+1) (8 bits, the
    # max side), and min becomes -128/127 * (j+1) before the input is clamped to it.
    x = np.array([[-9.0, 0.5, 0.3, 3.99], [0.26, -2.5, 9.0, -0.02]], np.float32)
    y = gtf.quantization.quantize_and_dequantize_v2(
        x, [-1.0, -2.0, -3.0, -4.0], [1.0, 2.0, 3.0, 4.0], range_given=True, axis=1
    ).numpy()
    bound = np.arange(1, 5, dtype=np.float64)
    clamped = np.clip(x, -128 / 127 * bound, bound)
    expected = np.round(clamped * 127 / bound) * bound / 127
    np.testing.assert_allclose(y, expected, rtol=1e-6)


def test_qdq_half_precision_matches_its_float32_grid():
    # TensorFlow has no CPU kernel for float16 or bfloat16, so by hand: 4 signed bits over [-8, 7]
    # is scale 1 (both sides fill the grid), so the result is the input clamped to [-8, 7] and
    # rounded half to even; every value is exact in both dtypes.
    x = np.array([-9.0, -1.5, 0.0, 0.75, 2.5, 3.0, 7.5], np.float32)
    for dtype in (gtf.float16, gtf.bfloat16):
        got = gtf.quantization.quantize_and_dequantize_v2(gtf.cast(x, dtype), -8.0, 7.0, num_bits=4, range_given=True)
        assert got.dtype == dtype
        np.testing.assert_array_equal(gtf.cast(got, gtf.float32).numpy(), [-8.0, -2.0, 0.0, 1.0, 2.0, 3.0, 7.0])


def test_straight_through_forward_mode_matches_reverse():
    # The gradients are JVP rules: forward mode must give the transpose of reverse mode.
    import jax
    import jax.numpy as jnp

    from gradkit.tf import _quantization as q

    x = jnp.asarray(X)
    low, high = jnp.float32(-2.0), jnp.float32(3.0)

    def f(x, low, high):
        return q._fake_quant_op(x, low, high, quant_min=0, quant_max=255)

    jac_fwd = jax.jacfwd(f, argnums=(0, 1, 2))(x, low, high)
    jac_rev = jax.jacrev(f, argnums=(0, 1, 2))(x, low, high)
    for a, b in zip(jac_fwd, jac_rev):
        np.testing.assert_array_equal(a, b)
    # By hand: the nudged range is [-2.0, 3.0] on a grid of 5/255 (zero point 102 exactly).
    inside = (X >= -2.0) & (X <= 3.0)
    np.testing.assert_array_equal(np.diag(jac_rev[0]), inside.astype(np.float32))
    np.testing.assert_array_equal(jac_rev[1], (X < -2.0).astype(np.float32))
    np.testing.assert_array_equal(jac_rev[2], (X > 3.0).astype(np.float32))


def test_failed_call_leaves_the_variable_alone():
    v = gtf.Variable(X)
    with pytest.raises(_errors.InvalidArgumentValueError, match=r"^\[gradkit\] .*min has to be smaller than max"):
        v.assign(gtf.quantization.fake_quant_with_min_max_args(v, 1.0, -1.0))
    np.testing.assert_array_equal(v.numpy(), X)
