"""Three ops at the edges a differential hunt found: forward mode through
``cumulative_logsumexp`` (its TensorFlow gradient splits the upstream by sign), ``eigvalsh``'s
gradient inside a compiled ``tf.function``, and ``ssim_multiscale`` on odd-sized images.
Oracles: hand derivations, NumPy/JAX rewrites, and TensorFlow where installed."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gradkit.tf as gtf

X = np.array([0.5, -1.0, 2.0, 0.3], np.float32)
A = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]], np.float32)


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
def test_forward_mode_through_cumulative_logsumexp(exclusive, reverse):
    def rewrite(x):  # log(cumsum(exp(x))), shifted for exclusive, from the end for reverse
        e = jnp.exp(x[::-1] if reverse else x)
        s = jnp.cumsum(e)
        if exclusive:
            s = jnp.concatenate([jnp.zeros(1), s[:-1]])
        out = jnp.log(s)
        return out[::-1] if reverse else out

    for tangent in np.eye(4, dtype=np.float32):
        x = gtf.constant(X)
        with gtf.autodiff.ForwardAccumulator(x, gtf.constant(tangent)) as acc:
            y = gtf.math.cumulative_logsumexp(x, exclusive=exclusive, reverse=reverse)
        _, want = jax.jvp(rewrite, (X,), (tangent,))
        got = acc.jvp(y).numpy()
        finite = np.isfinite(np.asarray(rewrite(X)))  # an exclusive sum's empty entry is -inf: tangent 0
        np.testing.assert_allclose(got[finite], np.asarray(want)[finite], rtol=1e-5, atol=1e-6)


def _eigvalsh_gradient(tf):
    f = tf.function(lambda m: tf.reduce_sum(tf.linalg.eigvalsh(m) * [1.0, 2.0, 3.0]))
    x = tf.constant(A)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    return tape.gradient(y, x).numpy()


def test_eigvalsh_gradient_inside_a_function():
    # d sum(c_i e_i) / dA = sum_i c_i v_i v_i^T for eigenvalues in ascending order, taken from
    # the lower triangle as TensorFlow does (off-diagonal entries doubled below, zero above).
    e, v = np.linalg.eigh(A)
    full = (v * np.array([1.0, 2.0, 3.0])) @ v.T
    want = np.tril(full) + np.tril(full, -1)
    np.testing.assert_allclose(_eigvalsh_gradient(gtf), want, rtol=1e-4, atol=1e-5)


def test_eigvalsh_gradient_inside_a_function_matches_tensorflow():
    rtf = pytest.importorskip("tensorflow")
    np.testing.assert_allclose(_eigvalsh_gradient(gtf), _eigvalsh_gradient(rtf), rtol=1e-4, atol=1e-5)


def _ssim_ms(tf, size, **kwargs):
    rng = np.random.RandomState(0)
    a = rng.rand(1, *size, 1).astype(np.float32)
    b = np.clip(a + 0.05 * rng.randn(*a.shape), 0, 1).astype(np.float32)
    return tf.image.ssim_multiscale(tf.constant(a), tf.constant(b), 1.0, **kwargs).numpy()


def test_ssim_multiscale_takes_odd_sizes_that_halve_to_the_filter():
    # 45 -> 23 -> 12 -> 6 -> 3 rows at five scales (odd sizes padded, then halved): a 3-wide filter fits.
    got = _ssim_ms(gtf, (51, 45), filter_size=3)
    assert got.shape == (1,) and 0.9 < got[0] <= 1.0
    with pytest.raises(ValueError, match=r"\[gradkit\] tf.image.ssim_multiscale"):
        _ssim_ms(gtf, (51, 45), filter_size=4)


def test_ssim_multiscale_odd_sizes_match_tensorflow():
    rtf = pytest.importorskip("tensorflow")
    for size, kwargs in (((51, 45), {"filter_size": 3}), ((161, 161), {})):
        np.testing.assert_allclose(_ssim_ms(gtf, size, **kwargs), _ssim_ms(rtf, size, **kwargs), rtol=1e-4)


BOOL_REFUSED = ["reduce_sum", "reduce_mean", "reduce_prod", "reduce_max", "reduce_min", "cumsum", "cumprod"]


@pytest.mark.parametrize("name", BOOL_REFUSED)
def test_numeric_reductions_refuse_bool_tensors(name):
    mask = gtf.constant([[True, False, True]])
    with pytest.raises(gtf.errors.InvalidArgumentError, match=r"^\[gradkit\] .*dtype bool"):
        getattr(gtf.math, name)(mask)
    counted = getattr(gtf.math, name)(gtf.cast(mask, gtf.int32)).numpy()  # as the error says: cast first
    want = getattr(
        np, {"reduce_sum": "sum", "reduce_mean": "mean", "reduce_prod": "prod", "reduce_max": "max"}.get(name, "min")
    )
    if name in ("cumsum", "cumprod"):
        want = getattr(np, name)
        np.testing.assert_array_equal(counted, want(np.array([[1, 0, 1]]), axis=0))
    else:
        np.testing.assert_array_equal(counted, np.asarray(want(np.array([[1, 0, 1]]))).astype(counted.dtype))


def test_logsumexp_refuses_complex():
    with pytest.raises(TypeError, match=r"^\[gradkit\] tf.math.reduce_logsumexp takes a floating-point"):
        gtf.math.reduce_logsumexp(gtf.constant([1 + 1j, 2.0], dtype=gtf.complex64))


@pytest.mark.parametrize("name", BOOL_REFUSED)
def test_tensorflow_refuses_bool_too(name):
    rtf = pytest.importorskip("tensorflow")
    with pytest.raises(rtf.errors.InvalidArgumentError):
        getattr(rtf.math, name)(rtf.constant([[True, False, True]]))
