"""The tf.math additions (special functions, NaN-safe arithmetic, counting, segment min/prod/
sqrt_n, cumulative_logsumexp) against NumPy/SciPy and hand-written derivatives, without
TensorFlow: values, gradients through a Variable and through an assigned Variable."""

import jax.numpy as jnp
import numpy as np
import pytest
import scipy.special as sp

import gradkit.tf as tf

X = np.array([0.3, 1.2, 2.5, 0.05, 0.7, 4.0], np.float32)


def _value_and_gradient(f, x):
    v = tf.Variable(x)
    with tf.GradientTape() as tape:
        y = f(v)
        loss = tf.reduce_sum(y)
    return y.numpy(), tape.gradient(loss, v).numpy()


def _close(got, want, rtol=2e-5):
    np.testing.assert_allclose(got, np.asarray(want, np.float64), rtol=rtol, atol=1e-6)


x64 = X.astype(np.float64)
SPECIAL = {
    # name: (gradkit op, SciPy value, derivative)
    "erfc": (tf.math.erfc, sp.erfc(x64), -2 / np.sqrt(np.pi) * np.exp(-(x64**2))),
    "erfinv": (
        lambda x: tf.math.erfinv(x / 5),
        sp.erfinv(x64 / 5),
        np.sqrt(np.pi) / 10 * np.exp(sp.erfinv(x64 / 5) ** 2),
    ),
    "erfcinv": (
        lambda x: tf.math.erfcinv(x / 2.5),
        sp.erfcinv(x64 / 2.5),
        -np.sqrt(np.pi) / 5 * np.exp(sp.erfcinv(x64 / 2.5) ** 2),
    ),
    "ndtri": (
        lambda x: tf.math.ndtri(x / 4.5),
        sp.ndtri(x64 / 4.5),
        np.sqrt(2 * np.pi) / 4.5 * np.exp(sp.ndtri(x64 / 4.5) ** 2 / 2),
    ),
    "bessel_i0": (tf.math.bessel_i0, sp.i0(x64), sp.i1(x64)),
    "bessel_i0e": (tf.math.bessel_i0e, sp.i0e(x64), sp.i1e(x64) - sp.i0e(x64)),
    "bessel_i1": (tf.math.bessel_i1, sp.i1(x64), sp.i0(x64) - sp.i1(x64) / x64),
    "bessel_i1e": (tf.math.bessel_i1e, sp.i1e(x64), sp.i0e(x64) - sp.i1e(x64) * (1 + 1 / x64)),
    "dawsn": (tf.math.special.dawsn, sp.dawsn(x64), 1 - 2 * x64 * sp.dawsn(x64)),
    "expint": (tf.math.special.expint, sp.expi(x64), np.exp(x64) / x64),
    "fresnel_sin": (tf.math.special.fresnel_sin, sp.fresnel(x64)[0], np.sin(np.pi / 2 * x64**2)),
    "fresnel_cos": (tf.math.special.fresnel_cos, sp.fresnel(x64)[1], np.cos(np.pi / 2 * x64**2)),
    "spence": (tf.math.special.spence, sp.spence(x64), np.log(x64) / (1 - x64)),
    "polygamma": (lambda x: tf.math.polygamma(2.0, x), sp.polygamma(2, x64), sp.polygamma(3, x64)),
    "zeta": (lambda x: tf.math.zeta(2.5, x), sp.zeta(2.5, x64), -2.5 * sp.zeta(3.5, x64)),
    "igamma": (
        lambda x: tf.math.igamma(1.5, x),
        sp.gammainc(1.5, x64),
        x64**0.5 * np.exp(-x64) / sp.gamma(1.5),
    ),
    "igammac": (
        lambda x: tf.math.igammac(1.5, x),
        sp.gammaincc(1.5, x64),
        -(x64**0.5) * np.exp(-x64) / sp.gamma(1.5),
    ),
    "betainc": (
        lambda x: tf.math.betainc(1.5, 2.0, x / 5),
        sp.betainc(1.5, 2.0, x64 / 5),
        (x64 / 5) ** 0.5 * (1 - x64 / 5) / sp.beta(1.5, 2.0) / 5,
    ),
}


@pytest.mark.parametrize("name", sorted(SPECIAL))
def test_special_functions_match_scipy_and_their_derivatives(name):
    f, value, derivative = SPECIAL[name]
    got, grad = _value_and_gradient(f, X)
    _close(got, value, rtol=1e-4 if name == "expint" else 2e-5)
    _close(grad, derivative, rtol=1e-4)


def test_lbeta_and_its_gradient_match_scipy():
    ab = np.array([[0.5, 2.0], [3.0, 1.5]], np.float32)
    got, grad = _value_and_gradient(tf.math.lbeta, ab)
    _close(got, sp.betaln(ab[:, 0], ab[:, 1]))
    _close(grad, sp.digamma(ab) - sp.digamma(ab.sum(-1, keepdims=True)))


def test_igamma_gradient_in_a_is_the_derivative():
    a, h = np.float64(1.5), 1e-6
    want = (sp.gammainc(a + h, x64) - sp.gammainc(a - h, x64)) / (2 * h)
    _, grad = _value_and_gradient(lambda v: tf.math.igamma(v * tf.ones([6]), X), np.float32(a))
    _close(grad, want.sum(), rtol=1e-4)


ARITHMETIC = {
    # name: (gradkit op of x, NumPy value, derivative)
    "asinh": (tf.math.asinh, np.arcsinh(x64), 1 / np.sqrt(x64**2 + 1)),
    "acosh": (lambda x: tf.math.acosh(x + 1.0), np.arccosh(x64 + 1), 1 / np.sqrt((x64 + 1) ** 2 - 1)),
    "atanh": (lambda x: tf.math.atanh(x / 5), np.arctanh(x64 / 5), 1 / (5 * (1 - (x64 / 5) ** 2))),
    "softsign": (tf.math.softsign, x64 / (1 + x64), 1 / (1 + x64) ** 2),
    "xlog1py": (lambda x: tf.math.xlog1py(x, x), sp.xlog1py(x64, x64), np.log1p(x64) + x64 / (1 + x64)),
    "xdivy": (lambda x: tf.math.xdivy(2.0, x), 2 / x64, -2 / x64**2),
    "multiply_no_nan": (lambda x: tf.math.multiply_no_nan(x, x), x64**2, 2 * x64),
    "reciprocal_no_nan": (tf.math.reciprocal_no_nan, 1 / x64, -1 / x64**2),
    "nextafter": (lambda x: tf.math.nextafter(x, 0.0), np.nextafter(X, np.float32(0)), np.ones(6)),
    "polyval": (lambda x: tf.math.polyval([2.0, -1.0, 0.5], x), np.polyval([2, -1, 0.5], x64), 4 * x64 - 1),
    "scalar_mul": (lambda x: tf.math.scalar_mul(3.0, x), 3 * x64, 3 * np.ones(6)),
    "accumulate_n": (lambda x: tf.math.accumulate_n([x, x * x]), x64 + x64**2, 1 + 2 * x64),
    "cumulative_logsumexp": (
        tf.math.cumulative_logsumexp,
        np.logaddexp.accumulate(x64),
        [np.sum(np.exp(x64[j] - np.logaddexp.accumulate(x64)[j:])) for j in range(6)],
    ),
}


@pytest.mark.parametrize("name", sorted(ARITHMETIC))
def test_arithmetic_matches_numpy_and_its_derivatives(name):
    f, value, derivative = ARITHMETIC[name]
    got, grad = _value_and_gradient(f, X)
    _close(got, value)
    _close(grad, derivative, rtol=1e-4)


def test_no_nan_ops_are_zero_with_tensorflows_gradients_where_nan_would_be():
    x, y = tf.Variable([0.0, 2.0, np.inf]), tf.Variable([0.0, 0.0, 0.0])
    with tf.GradientTape(persistent=True) as tape:
        a = tf.math.xdivy(x, y)
        b = tf.math.multiply_no_nan(x, y)
        c = tf.math.reciprocal_no_nan(y)
    np.testing.assert_array_equal(a.numpy(), [0.0, np.inf, np.inf])
    np.testing.assert_array_equal(b.numpy(), [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(c.numpy(), [0.0, 0.0, 0.0])
    # multiply_no_nan's y gradient is x (the derivative), also where y is 0.
    np.testing.assert_array_equal(tape.gradient(b, y).numpy(), [0.0, 2.0, np.inf])
    np.testing.assert_array_equal(tape.gradient(b, x).numpy(), [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(tape.gradient(c, y).numpy(), [0.0, 0.0, 0.0])


def test_truncated_division_matches_c():
    a, b = np.array([-7, 7, 6, -1], np.int32), np.array([2, -2, 4, 3], np.int32)
    np.testing.assert_array_equal(tf.truncatediv(a, b).numpy(), np.trunc(a / b).astype(np.int32))
    np.testing.assert_array_equal(tf.truncatemod(a, b).numpy(), np.fmod(a, b))
    np.testing.assert_array_equal(tf.truncatediv(a * 1.5, b * 1.0).numpy(), np.trunc(a * 1.5 / b))


def test_counting_matches_numpy():
    a = np.array([1, 1, 2, 3, 2, 4, 4, 5], np.int32)
    w = np.linspace(0, 1, 8).astype(np.float32)
    np.testing.assert_array_equal(tf.math.bincount(a).numpy(), np.bincount(a))
    np.testing.assert_allclose(tf.math.bincount(a, weights=w, minlength=9).numpy(), np.bincount(a, w, 9), rtol=1e-6)
    np.testing.assert_array_equal(tf.math.bincount(a, maxlength=3).numpy(), np.bincount(a)[:3])
    rows = np.array([[1, 2, 2], [0, 0, 3]], np.int32)
    np.testing.assert_array_equal(tf.math.bincount(rows, axis=-1).numpy(), [np.bincount(r, minlength=4) for r in rows])
    labels, predictions = np.array([1, 2, 4, 0]), np.array([2, 2, 4, 1])
    want = np.zeros((5, 5), np.int32)
    np.add.at(want, (labels, predictions), 1)
    np.testing.assert_array_equal(tf.math.confusion_matrix(labels, predictions).numpy(), want)
    scores = np.array([[0.1, 0.5, 0.5], [0.9, 0.2, 0.3], [0.2, np.inf, 0.1]], np.float32)
    targets = np.array([2, 2, 0], np.int32)
    higher = (scores > scores[np.arange(3), targets][:, None]).sum(1)
    want = (higher < 2) & np.isfinite(scores).all(1)
    np.testing.assert_array_equal(tf.math.in_top_k(targets, scores, 2).numpy(), want)
    perm = np.array([3, 4, 0, 2, 1], np.int32)
    np.testing.assert_array_equal(tf.math.invert_permutation(perm).numpy(), np.argsort(perm))
    assert bool(tf.math.is_non_decreasing([1, 1, 2])) and not bool(tf.math.is_strictly_increasing([1, 1, 2]))
    assert float(tf.math.zero_fraction([0.0, 1.0, 0.0, 3.0])) == 0.5


def test_counts_have_no_gradient():
    w = tf.Variable([1.0, 0.0, 2.0])
    with tf.GradientTape(persistent=True) as tape:
        b = tf.reduce_sum(tf.math.bincount([0, 1, 1], weights=w))
        z = tf.math.zero_fraction(w)
    assert tape.gradient(b, w) is None and tape.gradient(z, w) is None


D = np.array([[1.0, 2.0], [0.0, 3.0], [2.0, 0.0], [0.0, 0.0], [-1.0, 5.0], [2.0, 2.0]], np.float32)
IDS = np.array([0, 0, 1, 1, 3, 3])


def test_segment_min_prod_and_sqrt_n_match_numpy_loops():
    want_min = np.stack([D[IDS == s].min(0) if (IDS == s).any() else np.zeros(2) for s in range(4)])
    want_prod = np.stack([D[IDS == s].prod(0) for s in range(4)])
    counts = np.array([(IDS == s).sum() for s in range(5)])
    want_sqrt_n = np.stack([D[IDS == s].sum(0) for s in range(5)]) / np.sqrt(np.maximum(counts, 1))[:, None]
    np.testing.assert_allclose(tf.math.segment_min(D, IDS).numpy(), want_min)
    np.testing.assert_allclose(tf.math.segment_prod(D, IDS).numpy(), want_prod)
    np.testing.assert_allclose(tf.math.unsorted_segment_sqrt_n(D, IDS, 5).numpy(), want_sqrt_n, rtol=1e-6)
    unsorted_min = tf.math.unsorted_segment_min(D, IDS, 5).numpy()
    np.testing.assert_array_equal(unsorted_min[[2, 4]], np.full((2, 2), np.finfo(np.float32).max))


def test_segment_prod_gradient_is_the_product_of_the_others():
    # Segment 1's column 0 has a lone zero, its column 1 two zeros (so everything there is 0).
    _, grad = _value_and_gradient(lambda v: tf.math.unsorted_segment_prod(v, IDS, 4), D)
    want = np.zeros_like(D)
    for i, s in enumerate(IDS):
        others = np.delete(np.arange(len(D)), i)[IDS[np.delete(np.arange(len(D)), i)] == s]
        want[i] = D[others].prod(0)
    np.testing.assert_allclose(grad, want)


def test_segment_min_gradient_splits_among_ties():
    _, grad = _value_and_gradient(lambda v: tf.math.segment_min(v, [0, 0, 0]), np.array([1.0, -2.0, -2.0], np.float32))
    np.testing.assert_allclose(grad, [0.0, 0.5, 0.5])


def test_cumulative_logsumexp_propagates_nan_and_handles_minus_infinity():
    y = tf.math.cumulative_logsumexp([1.0, np.nan, 2.0]).numpy()
    assert y[0] == 1.0 and np.isnan(y[1:]).all()
    y = tf.math.cumulative_logsumexp([-np.inf, 0.0, 0.0], exclusive=True, reverse=True).numpy()
    np.testing.assert_allclose(y, [np.log(2), 0.0, -np.inf])


def test_gradients_flow_through_an_assigned_variable():
    source, v = tf.Variable(X), tf.Variable(np.zeros_like(X))
    with tf.GradientTape() as tape:
        v.assign(source * 2.0)
        loss = (
            tf.reduce_sum(tf.math.special.dawsn(v))
            + tf.reduce_sum(tf.math.unsorted_segment_prod(v, [0, 0, 1, 1, 2, 2], 3))
            + tf.reduce_sum(tf.math.cumulative_logsumexp(v))
        )
    s = 2.0 * X.astype(np.float64)
    want = 2.0 * (
        (1 - 2 * s * sp.dawsn(s))
        + s.reshape(3, 2)[:, ::-1].reshape(-1)
        + [np.sum(np.exp(s[j] - np.logaddexp.accumulate(s)[j:])) for j in range(6)]
    )
    np.testing.assert_allclose(tape.gradient(loss, source).numpy(), want, rtol=1e-4)


def test_the_special_namespace_and_errors():
    assert tf.math.special.bessel_i1e is tf.math.bessel_i1e
    with pytest.raises(AttributeError, match=r"^\[gradkit\] gradkit\.tf\.math\.special has no 'bessel_k2'"):
        _ = tf.math.special.bessel_k2
    with pytest.raises(TypeError, match=r"^\[gradkit\] tf\.math\.erfc takes a tensor of dtype"):
        tf.math.erfc(jnp.array([1, 2]))
