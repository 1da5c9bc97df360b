"""tf.math's special functions (erfc, erfinv, erfcinv, ndtri, lbeta, polygamma, zeta, igamma,
igammac, betainc, bessel_i0/i0e/i1/i1e) and tf.math.special (dawsn, expint, fresnel_cos,
fresnel_sin, spence) against real TensorFlow: values, dtypes, first and second derivatives
(None where TensorFlow defines none), their values at the edges, inside tf.function, through
a Variable, and the errors for dtypes TensorFlow has no kernel for."""

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
from test_tf_parity import run_both  # noqa: E402
from test_tf_parity import run_both_ok as _ok  # noqa: E402

import gradkit.tf as gtf  # noqa: E402

X = np.array([[0.3, 1.2, 2.5], [0.05, 0.7, 4.0]], np.float32)


def _weighted_sum(tf, y):
    w = np.cos(np.arange(int(np.prod(y.shape)), dtype=np.float32) + 0.5).reshape(tuple(y.shape))
    return tf.reduce_sum(y * tf.constant(w))


UNARY = {
    "erfc": lambda tf, x: tf.math.erfc(x - 1.0),
    "erfinv": lambda tf, x: tf.math.erfinv(x / 4.5 - 0.2),
    "erfcinv": lambda tf, x: tf.math.erfcinv(x / 2.5),
    "ndtri": lambda tf, x: tf.math.ndtri(x / 4.5),
    "lbeta": lambda tf, x: tf.math.lbeta(x),
    "bessel_i0": lambda tf, x: tf.math.bessel_i0(x - 1.0),
    "bessel_i0e": lambda tf, x: tf.math.bessel_i0e(x - 1.0),
    "bessel_i1": lambda tf, x: tf.math.bessel_i1(x - 1.0),
    "bessel_i1e": lambda tf, x: tf.math.bessel_i1e(x - 1.0),
    "dawsn": lambda tf, x: tf.math.special.dawsn(x - 1.0),
    "expint": lambda tf, x: tf.math.special.expint(x),
    "fresnel_cos": lambda tf, x: tf.math.special.fresnel_cos(x - 1.0),
    "fresnel_sin": lambda tf, x: tf.math.special.fresnel_sin(x - 1.0),
    "spence": lambda tf, x: tf.math.special.spence(x),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_values_dtypes_and_gradients_match_tensorflow(name):
    def program(tf):
        x = tf.Variable(X)
        with tf.GradientTape() as tape:
            y = UNARY[name](tf, x)
            loss = _weighted_sum(tf, y)
        return [y, tape.gradient(loss, x), y.dtype.name if tf is tf_real else np.dtype(y.dtype).name]

    _ok(program)


BINARY = {
    "polygamma": lambda tf, a, x: tf.math.polygamma(tf.round(a * 2.0), x),
    "polygamma_fractional_order": lambda tf, a, x: tf.math.polygamma(a, x),
    "zeta": lambda tf, a, x: tf.math.zeta(a + 1.5, x),
    "igamma": lambda tf, a, x: tf.math.igamma(a, x),
    "igammac": lambda tf, a, x: tf.math.igammac(a, x),
    "igamma_broadcast": lambda tf, a, x: tf.math.igamma(a[:, :1], x),
    "betainc": lambda tf, a, x: tf.math.betainc(a, x, tf.sigmoid(a - x)),
    "betainc_scalar_x": lambda tf, a, x: tf.math.betainc(a, x, 0.4),
}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_values_and_gradients_match_tensorflow(name):
    def program(tf):
        a, x = tf.Variable(X + 0.25), tf.Variable(X[::-1] + 0.5)
        with tf.GradientTape() as tape:
            y = BINARY[name](tf, a, x)
            loss = _weighted_sum(tf, y)
        return [y, tape.gradient(loss, [a, x])]

    _ok(program)


def test_no_gradient_for_the_arguments_tensorflow_does_not_differentiate():
    a = gtf.Variable(X + 0.25)
    with gtf.GradientTape(persistent=True) as tape:
        p = gtf.reduce_sum(gtf.math.polygamma(a, X + 1.0))
        z = gtf.reduce_sum(gtf.math.zeta(a + 1.5, X + 1.0))
        b = gtf.reduce_sum(gtf.math.betainc(a, a, X / 5.0))
    assert tape.gradient(p, a) is None and tape.gradient(z, a) is None and tape.gradient(b, a) is None
    np.testing.assert_array_equal(tape.gradient(b, a, unconnected_gradients="zero").numpy(), np.zeros_like(X))


# Six points each, shaped as X, so that the programs compiled for X serve them too.
EDGES = {
    "bessel_i1e": (lambda tf, x: tf.math.bessel_i1e(x), [0.0, -0.0, 1e-30, -3.0, 20.0, 1.0]),
    "bessel_i0e": (lambda tf, x: tf.math.bessel_i0e(x), [0.0, -0.0, 1e-30, -3.0, 20.0, 1.0]),
    "spence": (lambda tf, x: tf.math.special.spence(x), [1.0, 0.0, -2.0, 0.5, 1e-6, 30.0]),
    "expint": (lambda tf, x: tf.math.special.expint(x), [0.0, -2.0, 1e-3, 30.0, -0.0, 1.0]),
    "erfcinv": (lambda tf, x: tf.math.erfcinv(x), [0.0, 2.0, 2.5, 1.0, -0.5, 1e-6]),
    "ndtri": (lambda tf, x: tf.math.ndtri(x), [0.0, 1.0, 1.5, 0.5, 1e-6, -0.5]),
    "erfinv": (lambda tf, x: tf.math.erfinv(x), [-1.0, 1.0, 1.5, 0.0, 0.99, -2.0]),
    "lbeta_empty": (lambda tf, x: tf.math.lbeta(x[:, :0]), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]),
    "igamma_at_zero": (
        lambda tf, x: tf.math.igamma(tf.constant([[0.5, 1.0, 2.0], [-1.0, 1e-3, 1.0]]), x),
        [0.0, 0.0, 0.0, 1.0, 1.0, -1.0],
    ),
    "betainc_tails": (
        lambda tf, x: tf.math.betainc(
            tf.constant([[1.0, 2.0, 1.0], [0.5, 1.0, 1.0]]), tf.constant([[3.0, 1.0, 1.0], [2.0, 1.0, 1.0]]), x
        ),
        [0.0, 1.0, 0.5, 1.5, 1.0, -0.5],
    ),
    "zeta_poles": (
        lambda tf, x: tf.math.zeta(tf.constant([[1.0, 0.5, 2.0], [3.0, 2.0, 1.0]]), x),
        [1.0, 1.0, 0.0, -2.0, -1.5, 0.5],
    ),
    "zeta_below_one_at_poles": (
        lambda tf, x: tf.math.zeta(tf.constant([[0.0, -2.0, 0.0], [-2.0, 0.5, 1.0]]), x),
        [0.0, -1.0, -3.0, 0.0, -1.0, 0.0],
    ),
    "polygamma_negative_order": (
        lambda tf, x: tf.math.polygamma(tf.constant([[-1.0, 0.0, 3.0], [1.0, 2.0, 0.0]]), x),
        [2.0, -3.0, 2.0, 0.0, -0.5, 1e-3],
    ),
}


def test_values_outside_the_gamma_domain_match_tensorflow():
    def program(tf):
        a = tf.constant([-1.0, np.nan, 0.0, 0.0, 0.0, 2.0, -1.0, 0.0])
        x = tf.constant([0.0, 0.0, 0.0, 1.0, np.inf, np.inf, -0.0, 1e-3])
        return [tf.math.igamma(a, x), tf.math.igammac(a, x)]

    _ok(program)


@pytest.mark.parametrize("name", sorted(EDGES))
def test_values_and_gradients_at_the_edges_match_tensorflow(name):
    f, values = EDGES[name]

    def program(tf):
        x = tf.Variable(np.array(values, np.float32).reshape(X.shape))
        with tf.GradientTape() as tape:
            y = f(tf, x)
            loss = _weighted_sum(tf, y)
        return [y, tape.gradient(loss, x)]

    _ok(program)


def test_bessel_i1_gradient_at_zero_is_the_derivative():
    # TensorFlow 2.21's BesselI1Grad gives 1 at 0; the derivative I1'(0) is 1/2 (as for i1e).
    x = gtf.Variable([0.0, 0.5])
    with gtf.GradientTape() as tape:
        y = gtf.reduce_sum(gtf.math.bessel_i1(x))
    np.testing.assert_allclose(tape.gradient(y, x).numpy()[0], 0.5)


SECOND = {
    "ndtri": lambda tf, x: tf.math.ndtri(x / 5.0),
    "bessel_i1e": lambda tf, x: tf.math.bessel_i1e(x - 1.0),
    "dawsn": lambda tf, x: tf.math.special.dawsn(x),
    "spence": lambda tf, x: tf.math.special.spence(x),
    "polygamma": lambda tf, x: tf.math.polygamma(tf.constant(1.0), x),
    "zeta": lambda tf, x: tf.math.zeta(tf.constant(2.5), x),
    "igamma_in_x": lambda tf, x: tf.math.igamma(tf.constant(1.5), x),
    "betainc_in_x": lambda tf, x: tf.math.betainc(tf.constant(1.5), tf.constant(2.0), x / 5.0),
}


def test_mixed_second_derivatives_through_the_arguments_tensorflow_does_not_differentiate():
    # No first-order gradient in betainc's a, b or zeta's x (None), but the gradient in the other
    # argument reads them, so a nested tape's derivative of it in them is TensorFlow's.
    def program(tf):
        a, b = tf.Variable(X + 0.5), tf.Variable(X * 2.0 + 1.0)
        x, q = tf.Variable(X / 5.0), tf.Variable(X + 1.0)
        with tf.GradientTape() as outer:
            with tf.GradientTape(persistent=True) as inner:
                beta = _weighted_sum(tf, tf.math.betainc(a, b, x))
                zeta = _weighted_sum(tf, tf.math.zeta(a + 1.5, q))
            firsts = [inner.gradient(beta, a), inner.gradient(beta, b), inner.gradient(zeta, a)]
            assert all(g is None for g in firsts)
            total = tf.reduce_sum(inner.gradient(beta, x)) + tf.reduce_sum(inner.gradient(zeta, q))
        return outer.gradient(total, [a, b, x, q])

    _ok(program)


def test_second_derivative_of_the_spectral_norm_at_repeated_singular_values():
    # TensorFlow's svd gradient rule, finite where singular values repeat (jax's divides by zero).
    def program(tf):
        out = []
        for start in (np.eye(3, dtype=np.float32), np.diag([2.0, 2.0, 1.0]).astype(np.float32)):
            w = tf.Variable(start)
            with tf.GradientTape() as outer:
                with tf.GradientTape() as inner:
                    norm = tf.norm(w, 2, axis=[0, 1])
                g = inner.gradient(norm, w)
                gg = tf.reduce_sum(g * g)
            out += [norm, g, outer.gradient(gg, w)]
        return out

    for value in _ok(program):
        assert np.all(np.isfinite(value))


@pytest.mark.parametrize("name", sorted(SECOND))
def test_second_derivatives_match_tensorflow(name):
    def program(tf):
        x = tf.Variable(X)
        with tf.GradientTape() as outer:
            with tf.GradientTape() as inner:
                loss = _weighted_sum(tf, SECOND[name](tf, x))
            g = inner.gradient(loss, x)
            gg = tf.reduce_sum(g * g)
        return [g, outer.gradient(gg, x)]

    _ok(program)


def test_inside_tf_function_match_tensorflow():
    def program(tf):
        x = tf.Variable(X)

        @tf.function
        def forward(a):
            return (
                tf.math.igamma(a, x)
                + tf.math.special.dawsn(x) * tf.math.bessel_i0e(x)
                + tf.math.betainc(a, x, x / 5.0)
                + tf.math.lbeta(tf.stack([a, x], -1))
            )

        with tf.GradientTape() as tape:
            y = forward(tf.constant(X + 1.0))
            loss = _weighted_sum(tf, y)
        return [y, tape.gradient(loss, x)]

    _ok(program)


BAD = {
    "int_erfc": lambda tf: tf.math.erfc(tf.constant([1, 2])),
    "half_ndtri": lambda tf: tf.math.ndtri(tf.constant([0.3], tf.float16)),
    "half_dawsn": lambda tf: tf.math.special.dawsn(tf.constant([0.3], tf.float16)),
    "bfloat16_bessel": lambda tf: tf.math.bessel_i0(tf.constant([0.3], tf.bfloat16)),
    "int_polygamma": lambda tf: tf.math.polygamma(tf.constant(1), tf.constant(2)),
    "python_int_float_polygamma": lambda tf: tf.math.polygamma(1, 2.0),
    "mixed_zeta": lambda tf: tf.math.zeta(tf.constant([2.0]), tf.constant([1.0], tf.float16)),
    "lbeta_scalar": lambda tf: tf.math.lbeta(tf.constant(2.0)),
    "betainc_shapes": lambda tf: tf.math.betainc(tf.constant([[0.5], [1.0]]), tf.constant([2.0, 1.0]), 0.3),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_inputs_raise_as_in_tensorflow_with_a_gradkit_message(name):
    assert isinstance(run_both(BAD[name]), Exception)
    with pytest.raises(Exception, match=r"^\[gradkit\] tf\.math"):
        BAD[name](gtf)


def test_zeta_at_large_and_infinite_x():
    # Beyond x ~ 1e4 jax's series is NaN; TensorFlow's values: 0 for q > 1, 1 at q = 1, inf below
    # (q ** -x), 0 at q = inf, inf at a pole, and a gradient in q of -x * zeta(x + 1, q).
    q = np.array([2.0, 1.0, 0.5, 1e6, 1.001, 0.999, -1.5, np.inf, np.nan], np.float32)
    for x in (30.0, 999.0, 1000.0, 1e4, 1e10, 3e38, np.inf):
        xs = np.full(q.size, x, np.float32)
        np.testing.assert_allclose(
            gtf.math.zeta(xs, q).numpy(), tf_real.math.zeta(xs, q).numpy(), rtol=1e-5, equal_nan=True
        )
    x = np.array([1000.0, 1e4], np.float32)
    _ok(lambda tf: _zeta_gradient(tf, x))


def _zeta_gradient(tf, x):
    qv = tf.Variable([1.001, 1.0005])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.math.zeta(tf.constant(x), qv))
    return tape.gradient(y, qv)
