"""``tf.signal.dct``/``idct`` (types 1-4, ``norm``, ``n``), ``mdct``/``inverse_mdct``,
``linear_to_mel_weight_matrix`` and ``mfccs_from_log_mel_spectrograms`` against real TensorFlow
2.21: the same program text under both modules (values, gradients, exception classes), with
SciPy's DCTs as a second oracle. Each program takes the dtype it runs in;
``test_tf_parity_signal_float64.py`` runs them again in float64.
"""

import functools

import numpy as np
import pytest

import gradkit.tf as gtf

RNG = np.random.default_rng(11)
X5 = RNG.normal(size=5)
X2x6 = RNG.normal(size=(2, 6))
X2x3x4 = RNG.normal(size=(2, 3, 4))
S2x24 = RNG.normal(size=(2, 24))
M2x3x4 = RNG.normal(size=(2, 3, 4))
W = RNG.normal(size=64)


def _weights(tf, y):
    n = int(np.prod(y.shape))
    return tf.reshape(tf.constant(W[:n].astype(y.dtype.name)), y.shape)


def _with_gradient(tf, transform, value, dtype):
    x = tf.Variable(tf.constant(value.astype(dtype)))
    with tf.GradientTape() as tape:
        y = transform(x)
        loss = tf.reduce_sum(y * _weights(tf, y)) + tf.reduce_sum(y**2) / 8.0
    return [y, tape.gradient(loss, x)]


def p_dct_types_and_norms(tf, dtype="float32"):
    out = []
    for value in (X5, X2x3x4):
        for kind in (1, 2, 3, 4):
            for norm in (None, "ortho") if kind != 1 else (None,):
                out += _with_gradient(tf, lambda x, k=kind, m=norm: tf.signal.dct(x, type=k, norm=m), value, dtype)
    return out


def p_idct_types_and_norms(tf, dtype="float32"):
    out = []
    for value in (X2x6,):
        for kind in (1, 2, 3, 4):
            for norm in (None, "ortho") if kind != 1 else (None,):
                out += _with_gradient(tf, lambda x, k=kind, m=norm: tf.signal.idct(x, type=k, norm=m), value, dtype)
    return out


def p_dct_n_crops_and_pads(tf, dtype="float32"):
    out = []
    for kind in (1, 2, 3, 4):
        for n in (3, 9):
            out += _with_gradient(tf, lambda x, k=kind, n=n: tf.signal.dct(x, type=k, n=n), X2x6, dtype)
        out += _with_gradient(tf, lambda x, k=kind: tf.signal.idct(x, type=k, n=4), X2x6, dtype)
    return out


def p_dct_of_a_python_list_and_a_tensor_n(tf, dtype="float32"):
    return [
        tf.signal.dct([1.0, 2.0, 3.0]),
        tf.signal.idct([[1.0, 2.0], [3.0, 4.0]], norm="ortho"),
        tf.signal.dct(tf.constant(X2x6.astype(dtype)), n=tf.constant(4)),
    ]


def p_dct_refuses_an_axis_other_than_the_last(tf, dtype="float32"):
    return tf.signal.dct(tf.constant(X2x6.astype(dtype)), axis=0)


def p_dct_refuses_ortho_type_1(tf, dtype="float32"):
    return tf.signal.dct(tf.constant(X5.astype(dtype)), type=1, norm="ortho")


def p_dct_refuses_type_1_of_one_entry(tf, dtype="float32"):
    return tf.signal.dct(tf.constant([[1.0], [2.0]], getattr(tf, dtype)), type=1)


def p_dct_refuses_type_5(tf, dtype="float32"):
    return tf.signal.idct(tf.constant(X5.astype(dtype)), type=5)


def p_dct_refuses_n_0(tf, dtype="float32"):
    return tf.signal.dct(tf.constant(X5.astype(dtype)), n=0)


def p_dct_refuses_an_unknown_norm(tf, dtype="float32"):
    return tf.signal.dct(tf.constant(X5.astype(dtype)), norm="forward")


def p_dct_refuses_integers(tf, dtype="float32"):
    return tf.signal.dct(tf.constant([1, 2, 3]))


def p_mdct_and_inverse(tf, dtype="float32"):
    out = []
    for length, window, norm, pad_end in (
        (8, tf.signal.vorbis_window, None, False),
        (8, tf.signal.vorbis_window, "ortho", True),
        (4, None, None, False),
        (12, lambda n, dtype: tf.signal.kaiser_bessel_derived_window(n, dtype=dtype), "ortho", False),
        (8, tf.signal.hann_window, None, True),
    ):
        forward = functools.partial(tf.signal.mdct, frame_length=length, window_fn=window, pad_end=pad_end, norm=norm)
        inverse = functools.partial(tf.signal.inverse_mdct, window_fn=window, norm=norm)
        out += _with_gradient(tf, forward, S2x24, dtype)
        out += _with_gradient(tf, inverse, M2x3x4, dtype)
    return out


def p_mdct_round_trip(tf, dtype="float32"):
    x = tf.constant(S2x24.astype(dtype))
    return tf.signal.inverse_mdct(tf.signal.mdct(x, 8, norm="ortho"), norm="ortho")


def p_mdct_refuses_a_length_not_a_multiple_of_4(tf, dtype="float32"):
    return tf.signal.mdct(tf.constant(S2x24.astype(dtype)), 6)


def p_mdct_refuses_integers(tf, dtype="float32"):
    return tf.signal.mdct(tf.range(16), 8)


def p_inverse_mdct_refuses_a_vector(tf, dtype="float32"):
    return tf.signal.inverse_mdct(tf.constant(X5.astype(dtype)))


def p_mel_weight_matrix(tf, dtype="float32"):
    d = getattr(tf, dtype)
    return [
        tf.signal.linear_to_mel_weight_matrix(dtype=d),
        tf.signal.linear_to_mel_weight_matrix(4, 9, 8000, 125.0, 3800.0, dtype=d),
        tf.signal.linear_to_mel_weight_matrix(
            num_mel_bins=7,
            num_spectrogram_bins=33,
            sample_rate=16000,
            lower_edge_hertz=0.0,
            upper_edge_hertz=8000.0,
            dtype=d,
        ),
        tf.signal.linear_to_mel_weight_matrix(3, 5, tf.constant(1000.0), 20.0, 500.0, dtype=d),
    ]


def p_mel_weight_matrix_gradient_in_its_edges(tf, dtype="float32"):
    d = getattr(tf, dtype)
    upper = tf.Variable(tf.constant(3100.0, d))  # no bin on a band edge: no kink
    with tf.GradientTape() as tape:
        m = tf.signal.linear_to_mel_weight_matrix(4, 9, 8000, tf.constant(125.0, d), upper, dtype=d)
        loss = tf.reduce_sum(m * _weights(tf, m))
    return [m, tape.gradient(loss, upper)]


def p_mel_refuses_an_upper_edge_past_nyquist(tf, dtype="float32"):
    return tf.signal.linear_to_mel_weight_matrix(4, 9, 8000, 125.0, 4100.0)


def p_mel_refuses_crossed_edges(tf, dtype="float32"):
    return tf.signal.linear_to_mel_weight_matrix(4, 9, 8000, 300.0, 200.0)


def p_mel_refuses_no_bins(tf, dtype="float32"):
    return tf.signal.linear_to_mel_weight_matrix(0)


def p_mel_refuses_an_integer_dtype(tf, dtype="float32"):
    return tf.signal.linear_to_mel_weight_matrix(4, 9, dtype=tf.int32)


def p_mfccs(tf, dtype="float32"):
    return [
        *_with_gradient(tf, tf.signal.mfccs_from_log_mel_spectrograms, X2x3x4, dtype),
        *_with_gradient(tf, tf.signal.mfccs_from_log_mel_spectrograms, X5, dtype),
    ]


def p_mfccs_refuse_no_bins(tf, dtype="float32"):
    return tf.signal.mfccs_from_log_mel_spectrograms(tf.zeros([3, 0], getattr(tf, dtype)))


PROGRAMS = [v for k, v in sorted(globals().items()) if k.startswith("p_")]
# Run again in float64 by test_tf_parity_signal_float64.py.
FLOAT64 = [p_dct_types_and_norms, p_mdct_and_inverse, p_mel_weight_matrix, p_mfccs]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_parity(program):
    pytest.importorskip("tensorflow")
    from _signal_parity import run_both

    run_both(program)


@pytest.mark.parametrize("kind", [1, 2, 3, 4])
@pytest.mark.parametrize("norm", [None, "ortho"])
def test_dct_and_idct_against_scipy(kind, norm):
    fft = pytest.importorskip("scipy.fft")
    if kind == 1 and norm == "ortho":
        pytest.skip("TensorFlow has no orthonormal type-I DCT")
    x = X2x6.astype("float32")
    np.testing.assert_allclose(
        gtf.signal.dct(x, type=kind, norm=norm).numpy(), fft.dct(x, type=kind, norm=norm), rtol=1e-4, atol=1e-5
    )
    np.testing.assert_allclose(
        gtf.signal.idct(x, type=kind, norm=norm).numpy(),
        fft.idct(x, type=kind, norm=norm) * (1 if norm else (2 * (6 - 1) if kind == 1 else 2 * 6)),
        rtol=1e-4,
        atol=1e-4,
    )
