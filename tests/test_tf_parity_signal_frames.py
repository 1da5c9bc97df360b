"""``tf.signal.frame``, ``overlap_and_add``, ``stft``, ``inverse_stft`` and
``inverse_stft_window_fn`` against real TensorFlow 2.21: the same program text under both
modules (values, shapes, gradients, exception classes), odd and even lengths, batch axes.
Each program takes the dtype it runs in; ``test_tf_parity_signal_float64.py`` runs them again
in float64.
"""

import numpy as np
import pytest

import gradkit.tf as gtf

RNG = np.random.default_rng(3)
S11 = RNG.normal(size=11)
S2x9 = RNG.normal(size=(2, 9))
S3x4x2 = RNG.normal(size=(3, 4, 2))
F3x4 = RNG.normal(size=(2, 3, 4))
W = RNG.normal(size=40)


def _weights(tf, y):
    """A fixed weighting of ``y``'s entries, so each entry's gradient differs."""
    n = int(np.prod(y.shape))
    return tf.reshape(tf.constant(W[:n].astype(y.dtype.name)), y.shape) if n else tf.zeros(y.shape, y.dtype)


def _frame_and_gradient(tf, value, dtype, **kwargs):
    x = tf.Variable(tf.constant(value.astype(dtype)))
    with tf.GradientTape() as tape:
        y = tf.signal.frame(x, **kwargs)
        loss = tf.reduce_sum(y * _weights(tf, y))
    return [y, tape.gradient(loss, x)]


def p_frame_lengths_and_steps(tf, dtype="float32"):
    out = []
    for length, step in ((3, 2), (4, 4), (5, 1), (2, 3), (11, 2), (12, 5), (0, 2)):
        for pad_end in (False, True):
            out += _frame_and_gradient(tf, S11, dtype, frame_length=length, frame_step=step, pad_end=pad_end)
    return out


def p_frame_batches_and_axes(tf, dtype="float32"):
    return [
        *_frame_and_gradient(tf, S2x9, dtype, frame_length=4, frame_step=3),
        *_frame_and_gradient(tf, S2x9, dtype, frame_length=4, frame_step=3, pad_end=True, pad_value=-2.5),
        *_frame_and_gradient(tf, S3x4x2, dtype, frame_length=2, frame_step=1, axis=1),
        *_frame_and_gradient(tf, S3x4x2, dtype, frame_length=2, frame_step=2, axis=0, pad_end=True),
        *_frame_and_gradient(tf, S3x4x2, dtype, frame_length=3, frame_step=2, axis=-2, pad_end=True),
        *_frame_and_gradient(tf, S3x4x2, dtype, frame_length=tf.constant(3), frame_step=tf.constant(1), axis=-3),
    ]


def p_frame_integer_and_empty_signals(tf, dtype="float32"):
    return [
        tf.signal.frame(tf.range(7), 3, 2, pad_end=True, pad_value=-1),
        tf.signal.frame(tf.zeros([0], getattr(tf, dtype)), 3, 1, pad_end=True),
        tf.signal.frame(tf.zeros([2, 0], getattr(tf, dtype)), 3, 1),
    ]


def p_frame_inside_a_function(tf, dtype="float32"):
    f = tf.function(lambda x: tf.signal.frame(x, 4, 2, pad_end=True))
    return [f(tf.constant(S11.astype(dtype))), f(tf.constant(S2x9.astype(dtype)))]


def _overlap_and_add_and_gradient(tf, value, step, dtype):
    x = tf.Variable(tf.constant(value.astype(dtype)))
    with tf.GradientTape() as tape:
        y = tf.signal.overlap_and_add(x, step)
        loss = tf.reduce_sum(y * _weights(tf, y))
    return [y, tape.gradient(loss, x)]


def p_overlap_and_add(tf, dtype="float32"):
    out = []
    for step in (1, 2, 3, 4, 6):
        out += _overlap_and_add_and_gradient(tf, F3x4, step, dtype)
    out += _overlap_and_add_and_gradient(tf, F3x4[0, :1], 3, dtype)
    return out + [
        tf.signal.overlap_and_add(tf.zeros([0, 4], getattr(tf, dtype)), 2),
        tf.signal.overlap_and_add(tf.zeros([0, 4], getattr(tf, dtype)), 6),
        tf.signal.overlap_and_add(tf.zeros([3, 0], getattr(tf, dtype)), 2),
        tf.signal.overlap_and_add(tf.reshape(tf.range(12), [3, 4]), 3),
        tf.signal.overlap_and_add(tf.ones([3, 4], getattr(tf, dtype)), tf.constant(2)),
    ]


def _stft_and_gradient(tf, value, dtype, *args, **kwargs):
    x = tf.Variable(tf.constant(value.astype(dtype)))
    with tf.GradientTape() as tape:
        y = tf.signal.stft(x, *args, **kwargs)
        loss = tf.reduce_sum(tf.abs(y) ** 2) + tf.reduce_sum(tf.math.real(y) * _weights(tf, tf.math.real(y)))
    return [y, tape.gradient(loss, x), y.dtype.name]


def p_stft(tf, dtype="float32"):
    return [
        *_stft_and_gradient(tf, S11, dtype, 4, 2),
        *_stft_and_gradient(tf, S11, dtype, 5, 3),
        *_stft_and_gradient(tf, S11, dtype, 5, 2, fft_length=3),
        *_stft_and_gradient(tf, S11, dtype, 5, 2, fft_length=7, pad_end=True),
        *_stft_and_gradient(tf, S2x9, dtype, 4, 3, window_fn=None),
        *_stft_and_gradient(tf, S2x9, dtype, 3, 1, window_fn=tf.signal.hamming_window, pad_end=True),
        *_stft_and_gradient(tf, S2x9, dtype, 4, 2, window_fn=tf.signal.vorbis_window),
    ]


def p_stft_with_a_window_of_a_variable(tf, dtype="float32"):
    beta = tf.Variable(tf.constant(2.0, getattr(tf, dtype)))
    x = tf.constant(S11.astype(dtype))
    with tf.GradientTape() as tape:
        y = tf.signal.stft(x, 4, 2, window_fn=lambda n, dtype: tf.signal.kaiser_window(n, beta=beta, dtype=dtype))
        loss = tf.reduce_sum(tf.abs(y) ** 2)
    return [y, tape.gradient(loss, beta)]


def p_stft_training_step_inside_a_function(tf, dtype="float32"):
    x = tf.Variable(tf.constant(S2x9.astype(dtype)))

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            y = tf.signal.stft(x, 4, 2, pad_end=True)
            loss = tf.reduce_sum(tf.abs(y) ** 2)
        gradient = tape.gradient(loss, x)
        x.assign_sub(0.01 * gradient)
        return loss, gradient

    return [*step(), *step(), x]


def p_inverse_stft(tf, dtype="float32"):
    out = []
    for length, step, fft_length in ((4, 2, None), (5, 2, None), (6, 3, 4), (5, 1, 8), (3, 2, 5)):
        bins = (fft_length or int(2 ** np.ceil(np.log2(length)))) // 2 + 1
        rng = np.random.default_rng(length)
        z = rng.normal(size=(2, 4, bins)) + 1j * rng.normal(size=(2, 4, bins))
        v = tf.Variable(tf.constant(z.astype("complex64" if dtype == "float32" else "complex128")))
        with tf.GradientTape() as tape:
            y = tf.signal.inverse_stft(v, length, step, fft_length=fft_length)
            loss = tf.reduce_sum(y * _weights(tf, y)) + tf.reduce_sum(y**2)
        out += [y, tape.gradient(loss, v)]
    return out


def p_inverse_stft_window_fn_and_round_trip(tf, dtype="float32"):
    x = tf.constant(S2x9.astype(dtype))
    out = []
    for step, forward in ((2, tf.signal.hann_window), (1, tf.signal.vorbis_window), (3, tf.signal.hamming_window)):
        inverse = tf.signal.inverse_stft_window_fn(step, forward_window_fn=forward)
        out.append(inverse(4, getattr(tf, dtype)))
        out.append(inverse(5, dtype=getattr(tf, dtype)))
        y = tf.signal.stft(x, 4, step, window_fn=forward)
        out.append(tf.signal.inverse_stft(y, 4, step, window_fn=inverse))
    out.append(tf.signal.inverse_stft_window_fn(4)(5, getattr(tf, dtype)))  # zero sums: zeros, as TensorFlow
    return out


def p_frame_refuses_a_scalar(tf, dtype="float32"):
    return tf.signal.frame(tf.constant(1.0), 2, 1)


def p_frame_refuses_an_axis_out_of_range(tf, dtype="float32"):
    return tf.signal.frame(tf.zeros([3, 4]), 2, 1, axis=2)


def p_frame_refuses_a_vector_pad_value(tf, dtype="float32"):
    return tf.signal.frame(tf.range(7.0), 3, 2, pad_end=True, pad_value=[1.0])


def p_frame_refuses_a_pad_value_tensor_of_another_dtype(tf, dtype="float32"):
    return tf.signal.frame(tf.range(7.0), 3, 2, pad_end=True, pad_value=tf.constant(1, tf.int32))


def p_frame_refuses_a_fractional_pad_value_for_integers(tf, dtype="float32"):
    return tf.signal.frame(tf.range(7), 3, 2, pad_end=True, pad_value=0.5)


def p_overlap_and_add_refuses_a_vector(tf, dtype="float32"):
    return tf.signal.overlap_and_add(tf.ones([4]), 2)


def p_overlap_and_add_refuses_a_float_step(tf, dtype="float32"):
    return tf.signal.overlap_and_add(tf.ones([3, 4]), 2.0)


def p_stft_refuses_an_integer_signal(tf, dtype="float32"):
    return tf.signal.stft(tf.range(10), 4, 2)


def p_inverse_stft_refuses_a_real_input(tf, dtype="float32"):
    return tf.signal.inverse_stft(tf.ones([3, 3]), 4, 2)


def p_inverse_stft_refuses_a_list_fft_length(tf, dtype="float32"):
    return tf.signal.inverse_stft(tf.ones([3, 3], tf.complex64), 4, 2, fft_length=[4])


PROGRAMS = [v for k, v in sorted(globals().items()) if k.startswith("p_")]
# Run again in float64 by test_tf_parity_signal_float64.py.
FLOAT64 = [p_frame_batches_and_axes, p_overlap_and_add, p_stft, p_inverse_stft]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_parity(program):
    pytest.importorskip("tensorflow")
    from _signal_parity import run_both

    run_both(program)


def test_the_gradient_in_pad_value_is_exact():
    # TensorFlow's pad gives no gradient to its constant; its tape differentiates the same
    # padding written as a concatenation.
    tf = pytest.importorskip("tensorflow")
    from _signal_parity import _np, compare

    def ours(pad_value):
        return gtf.signal.frame(gtf.constant(S11.astype("float32")), 4, 3, pad_end=True, pad_value=pad_value)

    def theirs(pad_value):
        padded = tf.concat([tf.constant(S11.astype("float32")), pad_value * tf.ones([2])], 0)
        return tf.signal.frame(padded, 4, 3)

    results = []
    for module, framed in ((tf, theirs), (gtf, ours)):
        p = module.Variable(0.5)
        with module.GradientTape() as tape:
            y = framed(p)
            loss = module.reduce_sum(y * _weights(module, y))
        results.append(_np([y, tape.gradient(loss, p)]))
    compare(results[0], results[1], 2e-5)


def test_frame_and_overlap_and_add_are_adjoint():
    x = RNG.normal(size=(2, 13)).astype("float32")
    frames = RNG.normal(size=(2, 5, 4)).astype("float32")
    framed = gtf.signal.frame(x, 4, 2, pad_end=True).numpy()
    added = gtf.signal.overlap_and_add(frames, 2).numpy()
    assert framed.shape == (2, 7, 4) and added.shape == (2, 12)
    np.testing.assert_allclose(np.sum(framed[:, :5] * frames), np.sum(x[:, :12] * added), rtol=1e-5)


def test_a_zero_step_is_refused():
    # TensorFlow divides by it (a RuntimeWarning, then InvalidArgumentError).
    with pytest.raises(ValueError, match=r"^\[gradkit\] tf\.signal\.frame got frame_step=0, but it must be at least 1"):
        gtf.signal.frame(gtf.range(7.0), 3, 0)
    with pytest.raises(ValueError, match=r"^\[gradkit\] tf\.signal\.overlap_and_add got frame_step=0"):
        gtf.signal.overlap_and_add(gtf.ones([3, 4]), 0)


def test_shape_arguments_must_be_known_inside_a_function():
    f = gtf.function(lambda x, n: gtf.signal.frame(x, n, 1))
    with pytest.raises(TypeError, match=r"^\[gradkit\] tf\.signal\.frame inside tf\.function needs frame_length"):
        f(gtf.constant(S11.astype("float32")), gtf.constant(3))
