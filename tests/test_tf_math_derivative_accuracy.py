"""Derivatives TensorFlow computes from closed forms, which autodiff of the forward computation
would lose to cancellation: ``expm1'`` is ``exp`` (not ``expm1 + 1``), ``softplus'`` is
``sigmoid`` and ``log_sigmoid'`` ``sigmoid(-x)`` (their second derivatives stay accurate for
large ``|x|``), and polygamma, digamma and lgamma have their limit 0 at ``x = inf`` to any
order (not NaN). Oracles: the closed forms evaluated in float64 by NumPy/SciPy, TensorFlow's
values where installed. ``clip_by_norm`` of a complex tensor is refused, as TensorFlow has no
kernel for it."""

import numpy as np
import pytest
import scipy.special as sp

import gradkit.tf as gtf
from gradkit import GradkitError


def _derivatives(fn, x, order):
    v = gtf.Variable(np.asarray(x, np.float32))
    with gtf.GradientTape() as outer:
        with gtf.GradientTape() as inner:
            y = gtf.reduce_sum(fn(v))
        g = inner.gradient(y, v)
        total = gtf.reduce_sum(g)
    return g.numpy() if order == 1 else outer.gradient(total, v).numpy()


def test_expm1_gradient_is_exp_for_negative_x():
    x = np.array([-30.0, -20.0, -15.0, -10.0, 0.5], np.float32)
    np.testing.assert_allclose(_derivatives(gtf.math.expm1, x, 1), np.exp(x.astype(np.float64)), rtol=1e-6)


def test_softplus_and_log_sigmoid_second_derivatives_for_large_arguments():
    x = np.array([-5.0, 0.0, 10.0, 12.0, 15.0], np.float32)
    s = sp.expit(x.astype(np.float64))
    want = s * (1 - s)  # softplus'' = sigmoid' ; log_sigmoid''(-x) is the same
    np.testing.assert_allclose(_derivatives(gtf.math.softplus, x, 2), want, rtol=1e-5, atol=1e-12)
    np.testing.assert_allclose(_derivatives(gtf.nn.softplus, x, 1), s, rtol=1e-6)
    np.testing.assert_allclose(_derivatives(gtf.math.log_sigmoid, -x, 2), -want, rtol=1e-5, atol=1e-12)
    np.testing.assert_allclose(_derivatives(gtf.keras.activations.softplus, x, 2), want, rtol=1e-5, atol=1e-12)


def test_polygamma_digamma_and_lgamma_at_infinity_are_their_limits():
    x = np.array([1.0, 10.0, np.inf], np.float32)
    for n in (1.0, 2.0, 3.0):
        got = gtf.math.polygamma(n, x).numpy()
        np.testing.assert_allclose(got, sp.polygamma(int(n), x.astype(np.float64)), rtol=1e-5)
    for fn, n in ((gtf.math.digamma, 2), (gtf.math.lgamma, 1)):
        second = _derivatives(fn, x, 2)
        np.testing.assert_allclose(second, sp.polygamma(n, x.astype(np.float64)), rtol=1e-5)
    np.testing.assert_allclose(_derivatives(lambda v: gtf.math.polygamma(1.0, v), x, 1)[-1], 0.0)


def test_clip_by_norm_refuses_complex_tensors():
    with pytest.raises(GradkitError, match="real float"):
        gtf.clip_by_norm(gtf.constant([3 + 4j], gtf.complex64), 1.0)


def test_matches_tensorflow():
    tf = pytest.importorskip("tensorflow")
    x = np.array([-20.0, -10.0, 0.5, 10.0, 12.0, 15.0, np.inf], np.float32)
    for fn in ("expm1", "softplus", "log_sigmoid", "digamma", "lgamma"):
        for order in (1, 2):
            if fn == "expm1" and order == 2:
                continue
            got = _derivatives(getattr(gtf.math, fn), x, order)
            v = tf.Variable(x)
            with tf.GradientTape() as outer:
                with tf.GradientTape() as inner:
                    y = tf.reduce_sum(getattr(tf.math, fn)(v))
                g = inner.gradient(y, v)
                total = tf.reduce_sum(g)
            want = (g if order == 1 else outer.gradient(total, v)).numpy()
            finite = np.isfinite(want) & (np.abs(want) > 1e-30)
            if order == 2 and fn in ("softplus", "log_sigmoid"):
                finite &= np.abs(x) <= 10  # beyond, TensorFlow's y (1 - y) loses digits that gradkit keeps
            np.testing.assert_allclose(got[finite], want[finite], rtol=2e-3, err_msg=f"{fn} order {order}")
