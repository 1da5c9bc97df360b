"""``tf.math.divide`` / ``truediv`` / ``divide_no_nan`` differentiate the denominator as
TensorFlow's RealDiv does, ``(-x / y) / y``, which stays finite in float32 where ``x / y**2``
overflows; integer division's dtype; and ``tf.maximum`` / ``tf.minimum``, whose gradient at a
NaN follows TensorFlow's mask (``x >= y``) while the NaN value propagates.

Oracles: real TensorFlow, and hand derivations (which run without it)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

import gradkit.tf as gtf
from gradkit.tf._math import _tf_divide

X = np.array([1e-20, 0.0, 3e30, 1.0, -2.5], np.float32)
Y = np.array([1e-20, -1e-30, 1e30, 1e-20, 0.5], np.float32)


@pytest.mark.parametrize("op", ["divide", "truediv", "divide_no_nan"])
def test_the_denominators_gradient_does_not_overflow(op):
    x, y = gtf.constant(X), gtf.Variable(Y)
    with gtf.GradientTape() as tape:
        z = gtf.reduce_sum(getattr(gtf.math, op)(x, y))
    got = tape.gradient(z, y).numpy()
    # d(x/y)/dy = -x / y^2, here in float64: -1e20, -0, -3e-30, -inf (1e20 overflows float32), 10
    with np.errstate(over="ignore"):
        want = (-(X.astype(np.float64) / Y) / Y).astype(np.float32)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert np.signbit(got[1])  # -0 / -1e-30 / -1e-30


@pytest.mark.parametrize("op", ["divide", "divide_no_nan"])
def test_division_gradients_match_tensorflow(op):
    tf_real = pytest.importorskip("tensorflow")
    out = []
    for tf in (tf_real, gtf):
        x, y = tf.Variable(X), tf.Variable(Y)
        with tf.GradientTape() as tape:
            z = tf.reduce_sum(getattr(tf.math, op)(x, y) * tf.constant([1.0, 2.0, 3.0, 4.0, 5.0]))
        out.append([g.numpy() for g in tape.gradient(z, [x, y])])
    for got, want in zip(out[1], out[0]):
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_division_passes_finite_differences_to_second_order():
    x, y = jnp.array([1.5, -2.0, 3.0]), jnp.array([0.7, 2.0, -1.3])
    check_grads(_tf_divide, (x, y), order=2, modes=["fwd", "rev"])
    # d2(x/y)/dy2 = 2x / y^3
    hessian = jax.hessian(lambda y: jnp.sum(_tf_divide(x, y)))(y)
    np.testing.assert_allclose(jnp.diag(hessian), 2 * x / y**3, rtol=1e-5)


def test_integer_division_gives_floating_point_as_tensorflow():
    a, b = gtf.constant([1, 2], gtf.int32), gtf.constant([3, 3], gtf.int32)
    for z in (gtf.math.divide(a, b), gtf.math.truediv(a, b)):
        assert z.dtype == jax.dtypes.canonicalize_dtype(np.float64)  # float64 with 64-bit types on
        np.testing.assert_allclose(z.numpy(), [1 / 3, 2 / 3], rtol=1e-6)
    small = gtf.math.divide(gtf.constant([1], gtf.int8), gtf.constant([4], gtf.int8))
    assert small.dtype == np.float32 and small.numpy().tolist() == [0.25]


@pytest.mark.parametrize("op,pick", [("maximum", np.maximum), ("minimum", np.minimum)])
def test_a_nan_operand_propagates_and_the_gradient_follows_tensorflows_mask(op, pick):
    xs = np.array([np.nan, 1.0, np.nan, 2.0, 3.0], np.float32)
    ys = np.array([1.0, np.nan, np.nan, 2.0, -1.0], np.float32)
    x, y = gtf.Variable(xs), gtf.Variable(ys)
    with gtf.GradientTape() as tape:
        z = getattr(gtf, op)(x, y)
        loss = gtf.reduce_sum(z * gtf.constant([1.0, 2.0, 3.0, 4.0, 5.0]))
    dx, dy = tape.gradient(loss, [x, y])
    np.testing.assert_array_equal(z.numpy(), pick(xs, ys))  # NaN wherever either is NaN
    # TensorFlow's mask: x >= y (maximum) or x <= y (minimum), False at any NaN: y gets it.
    mask = (xs >= ys) if op == "maximum" else (xs <= ys)
    weights = np.array([1.0, 2.0, 3.0, 4.0, 5.0], np.float32)
    np.testing.assert_array_equal(dx.numpy(), np.where(mask, weights, 0.0))
    np.testing.assert_array_equal(dy.numpy(), np.where(mask, 0.0, weights))
    tf_real = pytest.importorskip("tensorflow")
    xt, yt = tf_real.Variable(xs), tf_real.Variable(ys)
    with tf_real.GradientTape() as tape:
        loss = tf_real.reduce_sum(getattr(tf_real, op)(xt, yt) * weights)
    for got, want in zip((dx, dy), tape.gradient(loss, [xt, yt])):
        np.testing.assert_array_equal(got.numpy(), want.numpy())
