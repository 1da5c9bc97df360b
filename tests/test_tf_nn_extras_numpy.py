"""gradkit.tf.nn's silu(beta), lrn, space_to_depth / depth_to_space, in_top_k, zero_fraction,
log_poisson_loss, weighted_cross_entropy_with_logits, compute_average_loss,
scale_regularization_loss and the moments helpers against NumPy references (no TensorFlow
needed): values, and gradients through Variables against float64 central differences of the
reference (or TensorFlow's documented rule at a kink)."""

import itertools

import numpy as np
import pytest

import gradkit.tf as tf

RNG = np.random.default_rng(4)
V = RNG.normal(size=(3, 4)).astype(np.float32)
X = RNG.normal(size=(1, 2, 4, 5)).astype(np.float32)
LABELS = np.array([[0.0, 1.0, 0.3, 1.0], [1.0, 0.0, 0.0, 0.5], [0.2, 1.0, 1.0, 0.0]], np.float32)


def _check(f, reference, *arrays, rtol=2e-4, atol=2e-5):
    """``f`` (gradkit) against ``reference`` (NumPy, float64): the value, and the gradient of the
    weighted sum of the value with respect to each argument against central differences."""
    variables = [tf.Variable(a) for a in arrays]
    with tf.GradientTape() as tape:
        y = f(*variables)
        c = np.cos(np.arange(int(np.prod(y.shape)), dtype=np.float64)).reshape(tuple(y.shape))
        loss = tf.reduce_sum(y * c.astype(np.float32))
    grads = tape.gradient(loss, variables)
    base = [np.array(a, np.float64) for a in arrays]
    np.testing.assert_allclose(y.numpy(), reference(*base), rtol=rtol, atol=atol)
    h = 1e-6
    for i, g in enumerate(grads):
        for flat in range(base[i].size):
            up, down = [b.copy() for b in base], [b.copy() for b in base]
            up[i].flat[flat] += h
            down[i].flat[flat] -= h
            want = np.sum((reference(*up) - reference(*down)) * c) / (2 * h)
            np.testing.assert_allclose(g.numpy().flat[flat], want, rtol=rtol, atol=atol)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def test_silu_with_a_beta_variable_matches_numpy():
    _check(lambda x, b: tf.nn.silu(x, b), lambda x, b: x * _sigmoid(b * x), V, np.float32(1.7))
    np.testing.assert_allclose(tf.nn.swish(V).numpy(), V * _sigmoid(V), rtol=1e-6)


def lrn_reference(x, radius, bias, alpha, beta):
    out = np.empty_like(x)
    depth = x.shape[-1]
    for d in range(depth):
        window = x[..., max(0, d - radius) : min(depth, d + radius + 1)]
        out[..., d] = x[..., d] / (bias + alpha * np.sum(window**2, axis=-1)) ** beta
    return out


@pytest.mark.parametrize("radius, bias, alpha, beta", [(5, 1.0, 1.0, 0.5), (1, 2.0, 0.3, 0.75), (0, 0.5, 0.1, 1.0)])
def test_lrn_matches_numpy(radius, bias, alpha, beta):
    _check(
        lambda x: tf.nn.local_response_normalization(x, radius, bias, alpha, beta),
        lambda x: lrn_reference(x, radius, bias, alpha, beta),
        X,
    )


def space_to_depth_reference(x, b):
    n, h, w, c = x.shape
    out = np.empty((n, h // b, w // b, b * b * c), x.dtype)
    for i, j, di, dj in itertools.product(range(h // b), range(w // b), range(b), range(b)):
        out[:, i, j, (di * b + dj) * c : (di * b + dj + 1) * c] = x[:, i * b + di, j * b + dj, :]
    return out


def test_space_to_depth_and_back_match_numpy():
    x = RNG.normal(size=(2, 4, 6, 3)).astype(np.float32)
    _check(lambda v: tf.nn.space_to_depth(v, 2), lambda v: space_to_depth_reference(v, 2), x)
    y = space_to_depth_reference(x, 2)
    np.testing.assert_array_equal(tf.nn.depth_to_space(y, 2).numpy(), x)
    nchw = tf.nn.space_to_depth(np.moveaxis(x, -1, 1), 2, data_format="NCHW").numpy()
    np.testing.assert_array_equal(np.moveaxis(nchw, 1, -1), y)
    np.testing.assert_array_equal(
        tf.nn.depth_to_space(np.moveaxis(y, -1, 1), 2, data_format="NCHW").numpy(), np.moveaxis(x, -1, 1)
    )


def in_top_k_reference(targets, predictions, k):
    out = []
    for t, row in zip(targets, predictions):
        if not 0 <= t < len(row) or not np.all(np.isfinite(row)):
            out.append(False)
        else:
            out.append(int(np.sum(row > row[t])) < k)
    return out


P = np.array([[0.1, 0.3, 0.3, 0.2], [0.5, np.nan, 0.1, 0.2], [0.4, 0.4, 0.4, 0.4]], np.float32)


@pytest.mark.parametrize("k", [0, 1, 2, 5])
@pytest.mark.parametrize("targets", [[1, 0, 3], [2, 2, 2], [3, -1, 4]])
def test_in_top_k_matches_numpy(targets, k):
    assert tf.nn.in_top_k(targets, P, k).numpy().tolist() == in_top_k_reference(targets, P, k)


def test_zero_fraction_matches_numpy_and_has_no_gradient():
    v = tf.Variable(V)
    with tf.GradientTape() as tape:
        fraction = tf.nn.zero_fraction(tf.nn.relu(v))
    assert fraction.dtype == np.float32
    np.testing.assert_allclose(float(fraction), np.mean(np.maximum(V, 0) == 0))
    assert tape.gradient(fraction, v) is None
    assert np.isnan(float(tf.nn.zero_fraction(np.zeros((0, 2), np.float32))))


def test_log_poisson_loss_matches_numpy():
    targets = np.abs(LABELS) * 3 + 0.5

    def reference(log_input, t, full):
        result = np.exp(log_input) - log_input * t
        if full:
            stirling = t * np.log(t) - t + 0.5 * np.log(2 * np.pi * t)
            result = result + np.where((t >= 0) & (t <= 1), 0.0, stirling)
        return result

    _check(lambda x: tf.nn.log_poisson_loss(targets, x), lambda x: reference(x, targets, False), V)
    _check(
        lambda x, t: tf.nn.log_poisson_loss(t, x, compute_full_loss=True),
        lambda x, t: reference(x, t, True),
        V,
        targets,
    )


def test_weighted_cross_entropy_matches_numpy():
    def reference(z, x, q):
        return (1 - z) * x + (1 + (q - 1) * z) * (np.log1p(np.exp(-np.abs(x))) + np.maximum(-x, 0))

    q = np.array([0.5, 1.0, 2.0, 3.0], np.float32)
    _check(lambda z, x, w: tf.nn.weighted_cross_entropy_with_logits(z, x, w), reference, LABELS, V, q)


def test_weighted_cross_entropy_takes_tensorflows_gradient_at_zero():
    # TensorFlow's gradients of |x| and max(-x, 0) at x = 0 are 0, so there the logits' gradient
    # is 1 - z alone (the two-sided derivative would subtract half the log weight).
    z = np.array([0.0, 1.0, 0.4], np.float32)
    x = tf.Variable(np.zeros(3, np.float32))
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.nn.weighted_cross_entropy_with_logits(z, x, 3.0))
    np.testing.assert_allclose(tape.gradient(loss, x).numpy(), 1 - z)


def test_compute_average_loss_matches_numpy():
    w = V[:, 0] ** 2
    _check(lambda x: tf.nn.compute_average_loss(x), lambda x: np.sum(x) / 3, V)
    _check(lambda x, s: tf.nn.compute_average_loss(x, sample_weight=s), lambda x, s: np.sum(x * s[:, None]) / 3, V, w)
    _check(
        lambda x: tf.nn.compute_average_loss(x[:, 0], sample_weight=w[:, None], global_batch_size=8),
        lambda x: np.sum(x[:, 0] * w) / 8,
        V,
    )
    v = tf.Variable(V)
    with tf.GradientTape() as tape:
        zero = tf.nn.compute_average_loss(v, global_batch_size=0)
    assert float(zero) == 0.0
    np.testing.assert_array_equal(tape.gradient(zero, v).numpy(), np.zeros_like(V))


def test_scale_regularization_loss_is_the_sum():
    _check(lambda x: tf.nn.scale_regularization_loss(x), np.sum, V)


def test_moments_helpers_match_numpy():
    shift = V[0]
    _check(lambda x: tf.nn.sufficient_statistics(x, [0])[1], lambda x: np.sum(x, axis=0), V)
    _check(
        lambda x, s: tf.nn.sufficient_statistics(x, [0], shift=s)[2],
        lambda x, s: np.sum((x - s) ** 2, axis=0),
        V,
        shift,
    )
    counts, m_ss, v_ss, _ = tf.nn.sufficient_statistics(V, [0, 1], keepdims=True)
    assert float(counts) == 12.0 and m_ss.shape == (1, 1)
    _check(
        lambda m, v: tf.nn.normalize_moments(4.0, m, v, shift)[1],
        lambda m, v: v / 4 - (m / 4) ** 2,
        V[1],
        np.abs(V[2]) * 10,
    )
    mean, variance = tf.nn.normalize_moments(4.0, V[1], V[2], shift)
    np.testing.assert_allclose(mean.numpy(), V[1] / 4 + shift, rtol=1e-6)

    def weighted(x, w):
        w = np.broadcast_to(w, x.shape)
        m = np.sum(w * x, axis=0) / np.sum(w, axis=0)
        return np.sum(w * (x - m) ** 2, axis=0) / np.sum(w, axis=0)

    _check(lambda x, w: tf.nn.weighted_moments(x, [0], w)[1], weighted, V, np.abs(V[:, :1]) + 0.1)
    zero_mean, zero_var = tf.nn.weighted_moments(V, [0], np.zeros((3, 1), np.float32))
    np.testing.assert_array_equal(zero_mean.numpy(), 0.0)
    np.testing.assert_array_equal(zero_var.numpy(), 0.0)


def test_batch_norm_with_global_normalization_matches_numpy():
    mean, var, beta, gamma = V[0], V[1] ** 2, V[2], V[0] + 2.0
    got = tf.nn.batch_norm_with_global_normalization(V, mean, var, beta, gamma, 1e-3, True)
    np.testing.assert_allclose(got.numpy(), (V - mean) / np.sqrt(var + 1e-3) * gamma + beta, rtol=1e-5, atol=1e-5)
    got = tf.nn.batch_norm_with_global_normalization(V, mean, var, beta, gamma, 1e-3, False)
    np.testing.assert_allclose(got.numpy(), (V - mean) / np.sqrt(var + 1e-3) + beta, rtol=1e-5, atol=1e-5)
