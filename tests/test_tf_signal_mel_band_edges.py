"""``linear_to_mel_weight_matrix`` differentiated in its sample rate and edges when a spectrogram
bin lies exactly on a band edge (the upper edge at 7000 Hz with bins every 250 Hz, or at the
Nyquist frequency): the filter is 0 there with a kink, and TensorFlow's Minimum/Maximum send the
gradient of a tie to the constant 0, so that bin adds nothing. Oracles: the gradient with the
bin's row left out of the sum (no tie left), and TensorFlow where installed."""

import numpy as np
import pytest

import gradkit.tf as gtf

CASES = [(8, 33, 16000.0, 100.0, 7000.0, 28), (8, 33, 16000.0, 0.0, 8000.0, 32)]


def _gradients(tf, case, keep=None):
    bands, bins, rate, low, high, _ = case
    variables = [tf.Variable(rate), tf.Variable(low), tf.Variable(high)]
    with tf.GradientTape() as tape:
        matrix = tf.signal.linear_to_mel_weight_matrix(bands, bins, *variables)
        weights = tf.reshape(tf.range(1.0, bands + 1.0), (1, bands))
        if keep is not None:
            weights = weights * tf.constant(keep)
        loss = tf.reduce_sum(matrix * weights)
    return np.array([float(g) for g in tape.gradient(loss, variables)])


@pytest.mark.parametrize("case", CASES)
def test_a_bin_on_a_band_edge_adds_no_gradient(case):
    got = _gradients(gtf, case)
    keep = np.ones((case[1], 1), np.float32)
    keep[case[-1]] = 0.0  # the bin on the edge
    np.testing.assert_allclose(got, _gradients(gtf, case, keep), rtol=1e-5, atol=1e-9)
    tf = pytest.importorskip("tensorflow")
    np.testing.assert_allclose(got, _gradients(tf, case), rtol=1e-4, atol=1e-9)


def test_the_last_band_edge_is_the_upper_edge_itself():
    # TensorFlow's linspace ends at ``stop`` exactly: the bin at 7000 Hz has weight 0 in every band.
    matrix = np.asarray(gtf.signal.linear_to_mel_weight_matrix(8, 33, 16000.0, 100.0, 7000.0))
    assert (matrix[28:] == 0).all() and (matrix[27] > 0).any()
