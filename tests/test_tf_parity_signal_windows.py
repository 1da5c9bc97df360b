"""``tf.signal``'s window functions against real TensorFlow 2.21: the same program text under
both modules (values, dtypes, TensorFlow's quirks for odd and short lengths, the gradient of
``kaiser_window`` in its ``beta``, and the exception classes for bad arguments). Each program
takes the dtype it runs in; ``test_tf_parity_signal_float64.py`` runs them again in float64.
"""

import numpy as np
import pytest

import gradkit.tf as gtf

LENGTHS = (0, 1, 2, 5, 8)


def p_hann_and_hamming(tf, dtype="float32"):
    out = []
    for window in (tf.signal.hann_window, tf.signal.hamming_window):
        for length in LENGTHS:
            for periodic in (True, False):
                w = window(length, periodic=periodic, dtype=getattr(tf, dtype))
                out += [w, w.dtype.name]
        out.append(window(tf.constant(6), periodic=tf.constant(False), dtype=getattr(tf, dtype)))
    return out


def p_periodic_flag_traced_inside_a_function(tf, dtype="float32"):
    f = tf.function(lambda periodic: tf.signal.hann_window(6, periodic=periodic, dtype=getattr(tf, dtype)))
    return [f(tf.constant(True)), f(tf.constant(False))]


def p_kaiser_and_kaiser_bessel_derived(tf, dtype="float32"):
    out = []
    for length in (1, 2, 5, 8):
        for beta in (0.5, 3, 12.0):
            out.append(tf.signal.kaiser_window(length, beta=beta, dtype=getattr(tf, dtype)))
    for length in (0, 1, 2, 5, 8):
        out.append(tf.signal.kaiser_bessel_derived_window(length, dtype=getattr(tf, dtype)))
        out.append(tf.signal.kaiser_bessel_derived_window(length, beta=4.0, dtype=getattr(tf, dtype)))
    out.append(tf.signal.kaiser_window(6, beta=tf.constant(3), dtype=getattr(tf, dtype)))
    return out + [out[-1].dtype.name]


def p_kaiser_gradient_in_beta(tf, dtype="float32"):
    beta = tf.Variable(tf.constant(3.0, getattr(tf, dtype)))
    with tf.GradientTape(persistent=True) as tape:
        w = tf.signal.kaiser_window(5, beta=beta, dtype=getattr(tf, dtype))
        kbd = tf.signal.kaiser_bessel_derived_window(6, beta=beta * 2.0, dtype=getattr(tf, dtype))
        loss = tf.reduce_sum(w * tf.range(5, dtype=getattr(tf, dtype)))
        one = tf.signal.kaiser_window(1, beta=beta, dtype=getattr(tf, dtype))
    return [
        w,
        tape.gradient(loss, beta),
        tape.gradient(kbd[1] + 3.0 * kbd[4], beta),
        tape.gradient(one, beta),
    ]


def p_vorbis(tf, dtype="float32"):
    return [tf.signal.vorbis_window(n, dtype=getattr(tf, dtype)) for n in LENGTHS]


def p_float16_windows_keep_their_dtype(tf, dtype="float32"):
    windows = [
        tf.signal.hann_window(4, dtype=tf.float16),
        tf.signal.hamming_window(5, periodic=False, dtype=tf.float16),
    ]
    return [tf.cast(w, tf.float32) for w in windows] + [w.dtype.name for w in windows]


def p_an_integer_dtype_is_refused(tf, dtype="float32"):
    return tf.signal.hann_window(4, dtype=tf.int32)


def p_an_integer_dtype_is_refused_by_kaiser(tf, dtype="float32"):
    return tf.signal.kaiser_window(4, dtype=tf.int32)


def p_a_vector_length_is_refused(tf, dtype="float32"):
    return tf.signal.vorbis_window([4])


def p_a_float_length_is_refused(tf, dtype="float32"):
    return tf.signal.hamming_window(4.0)


def p_a_negative_length_is_refused(tf, dtype="float32"):
    return tf.signal.hann_window(-2)


def p_an_empty_kaiser_window_is_refused(tf, dtype="float32"):
    return tf.signal.kaiser_window(0)


PROGRAMS = [v for k, v in sorted(globals().items()) if k.startswith("p_")]
# Run again in float64 by test_tf_parity_signal_float64.py.
FLOAT64 = [p_hann_and_hamming, p_kaiser_gradient_in_beta, p_vorbis]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_parity(program):
    pytest.importorskip("tensorflow")
    from _signal_parity import run_both

    run_both(program)


def test_windows_against_numpy():
    # NumPy's hanning/hamming/kaiser are the symmetric windows; TensorFlow's periodic window of
    # even length n is the first n points of the symmetric one of length n + 1.
    np.testing.assert_allclose(gtf.signal.hann_window(7, periodic=False).numpy(), np.hanning(7), atol=1e-6)
    np.testing.assert_allclose(gtf.signal.hamming_window(6).numpy(), np.hamming(7)[:6], atol=1e-6)
    np.testing.assert_allclose(gtf.signal.kaiser_window(6, beta=5.0).numpy(), np.kaiser(6, 5.0), rtol=1e-5)
