"""``tf.signal``'s refusals against real TensorFlow 2.21: the same program text under both
modules says which ``except`` clause catches each error, so ``except tf.errors.InvalidArgumentError``
catches exactly where TensorFlow's eager kernels raise it (and not where TensorFlow checks an
argument in Python with ValueError or TypeError)."""

import warnings

import pytest


def _caught_by(tf, make):
    try:
        with warnings.catch_warnings():  # TensorFlow's Python divides by a zero step (a NumPy warning) first
            warnings.simplefilter("ignore", RuntimeWarning)
            make()
    except tf.errors.InvalidArgumentError:
        return "InvalidArgumentError"
    except ValueError:
        return "ValueError"
    except TypeError:
        return "TypeError"
    return "no error"


def _real(tf):
    return tf.constant([1.0, 2.0, 3.0, 4.0])


def _complex(tf):
    return tf.complex(_real(tf), 0.0)


CASES = {
    # The complex transforms' kernels refuse a real tensor and too few axes.
    "fft_of_a_real_tensor": lambda tf: tf.signal.fft(_real(tf)),
    "ifft2d_of_a_real_tensor": lambda tf: tf.signal.ifft2d(tf.ones([2, 2])),
    "fft_of_a_scalar": lambda tf: tf.signal.fft(tf.complex(1.0, 0.0)),
    "fft2d_of_a_vector": lambda tf: tf.signal.fft2d(_complex(tf)),
    "ifft3d_of_a_matrix": lambda tf: tf.signal.ifft3d(tf.complex(tf.ones([2, 2]), 0.0)),
    # The real transforms check dtype and rank in Python: ValueError.
    "rfft_of_a_complex_tensor": lambda tf: tf.signal.rfft(_complex(tf)),
    "irfft_of_a_real_tensor": lambda tf: tf.signal.irfft(_real(tf)),
    "rfft2d_of_a_vector": lambda tf: tf.signal.rfft2d(_real(tf)),
    # fft_length: the kernel refuses a list of the wrong length or a negative length; a scalar or
    # floats fail Python's conversion (TypeError).
    "rfft_fft_length_too_long": lambda tf: tf.signal.rfft(_real(tf), fft_length=[4, 4]),
    "rfft2d_fft_length_too_short": lambda tf: tf.signal.rfft2d(tf.ones([2, 2]), fft_length=[2]),
    "irfft_fft_length_too_long": lambda tf: tf.signal.irfft(_complex(tf), fft_length=[2, 3]),
    "rfft_negative_fft_length": lambda tf: tf.signal.rfft(_real(tf), fft_length=[-1]),
    "rfft_scalar_fft_length": lambda tf: tf.signal.rfft(_real(tf), fft_length=4),
    "rfft_float_fft_length": lambda tf: tf.signal.rfft(_real(tf), fft_length=[4.0]),
    # Windows: a negative length (and a Kaiser window of none) fails the kernel; a float converts badly.
    "hann_window_negative": lambda tf: tf.signal.hann_window(-1),
    "hamming_window_negative": lambda tf: tf.signal.hamming_window(-2),
    "vorbis_window_negative": lambda tf: tf.signal.vorbis_window(-1),
    "kaiser_window_negative": lambda tf: tf.signal.kaiser_window(-1),
    "kaiser_window_of_0": lambda tf: tf.signal.kaiser_window(0),
    "kaiser_bessel_derived_window_negative": lambda tf: tf.signal.kaiser_bessel_derived_window(-3),
    "hann_window_float": lambda tf: tf.signal.hann_window(2.5),
    # Framing: the kernels refuse a zero step, a float step or length, a negative length.
    "frame_step_0": lambda tf: tf.signal.frame(tf.ones([6]), 2, 0),
    "frame_float_step": lambda tf: tf.signal.frame(tf.ones([6]), 2, 1.5),
    "frame_float_step_tensor": lambda tf: tf.signal.frame(tf.ones([6]), 2, tf.constant(1.0)),
    "frame_float_length": lambda tf: tf.signal.frame(tf.ones([6]), 2.5, 1),
    "frame_negative_length": lambda tf: tf.signal.frame(tf.ones([6]), -1, 1),
    "frame_length_a_vector": lambda tf: tf.signal.frame(tf.ones([6]), [2, 2], 1),
    "frame_of_a_scalar": lambda tf: tf.signal.frame(tf.constant(1.0), 2, 1),
    "overlap_and_add_step_0": lambda tf: tf.signal.overlap_and_add(tf.ones([3, 4]), 0),
    "overlap_and_add_negative_step": lambda tf: tf.signal.overlap_and_add(tf.ones([3, 4]), -1),
    "overlap_and_add_float_step": lambda tf: tf.signal.overlap_and_add(tf.ones([3, 4]), 1.5),
    "stft_step_0": lambda tf: tf.signal.stft(tf.ones([16]), 4, 0),
    "stft_float_step": lambda tf: tf.signal.stft(tf.ones([16]), 4, 2.5),
    "stft_float_length": lambda tf: tf.signal.stft(tf.ones([16]), 4.5, 2),
    "inverse_stft_step_0": lambda tf: tf.signal.inverse_stft(tf.complex(tf.ones([3, 5]), 0.0), 8, 0),
    "inverse_stft_float_step": lambda tf: tf.signal.inverse_stft(tf.complex(tf.ones([3, 5]), 0.0), 8, 2.5),
    "inverse_stft_float_length": lambda tf: tf.signal.inverse_stft(tf.complex(tf.ones([3, 5]), 0.0), 8.5, 2),
    "mdct_float_length": lambda tf: tf.signal.mdct(tf.ones([16]), 4.5),
    "mdct_length_not_a_multiple_of_4": lambda tf: tf.signal.mdct(tf.ones([16]), 6),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_except_clause_that_catches_it_is_tensorflows(name):
    pytest.importorskip("tensorflow")
    from test_tf_parity import run_both_ok

    caught = run_both_ok(lambda tf: _caught_by(tf, lambda: CASES[name](tf)))
    assert caught != "no error"


def test_each_refusal_says_what_came_in():
    import gradkit.tf as gtf

    for name in sorted(CASES):
        try:
            CASES[name](gtf)
        except Exception as error:  # each one a gradkit error, with its prefix
            assert str(error).startswith("[gradkit]"), (name, error)
