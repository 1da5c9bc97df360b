"""``tf.random.gamma``/``stateless_gamma``/``poisson``/``stateless_poisson`` against real TensorFlow:
shapes and dtypes (the draws themselves come from another generator), the gradient with respect
to ``alpha`` checked against TensorFlow's own ``RandomGammaGrad`` applied to gradkit's samples,
the gradient with respect to ``beta`` against its hand derivation, the moments, and the seeds."""

import numpy as np
import pytest

import gradkit.tf as gtf

SHAPES = [([4], [0.5, 2.0, 5.0], None), ([2, 3], 1.5, [1.0, 2.0]), ([3], [[1.0], [3.0]], [0.5, 1.0, 2.0])]


@pytest.mark.parametrize("shape, alpha, beta", SHAPES)
def test_shapes_and_dtypes_are_tensorflows(shape, alpha, beta):
    tf = pytest.importorskip("tensorflow")
    want = tf.random.gamma(shape, alpha, beta=beta, seed=3)
    got = gtf.random.gamma(shape, alpha, beta=beta, seed=3)
    assert got.shape == tuple(want.shape) and got.dtype == want.dtype.as_numpy_dtype
    stateless_shape = list(want.shape)
    want = tf.random.stateless_gamma(stateless_shape, [1, 2], alpha, beta=beta)
    got = gtf.random.stateless_gamma(stateless_shape, [1, 2], alpha, beta=beta)
    assert got.shape == tuple(want.shape)
    for lam in ([1.0, 4.0], 3.0):
        for dtype in (np.float32, np.int32):
            want = tf.random.poisson(shape, lam, dtype=dtype, seed=2)
            got = gtf.random.poisson(shape, lam, dtype=dtype, seed=2)
            assert got.shape == tuple(want.shape) and got.dtype == dtype
    want = tf.random.stateless_poisson([5, 2], [3, 4], [1.0, 4.0])
    got = gtf.random.stateless_poisson([5, 2], [3, 4], [1.0, 4.0])
    assert got.shape == tuple(want.shape) and got.dtype == want.dtype.as_numpy_dtype == np.int32


def test_gradient_with_respect_to_alpha_is_tensorflows_random_gamma_grad():
    tf = pytest.importorskip("tensorflow")
    alpha = gtf.Variable([0.3, 1.0, 2.5, 9.0])
    with gtf.GradientTape() as tape:
        x = gtf.random.gamma([50], alpha, seed=7)
        loss = gtf.reduce_sum(x)
    grad = tape.gradient(loss, alpha).numpy()
    # TensorFlow's gradient of its RandomGamma op: RandomGammaGrad(alpha, sample), summed over draws.
    partial = tf.raw_ops.RandomGammaGrad(alpha=tf.broadcast_to(alpha.numpy(), [50, 4]), sample=x.numpy())
    np.testing.assert_allclose(grad, partial.numpy().sum(axis=0), rtol=2e-3, atol=1e-4)


def test_gradient_with_respect_to_beta_and_alpha_under_a_rate():
    alpha, beta = gtf.Variable([2.0, 3.0]), gtf.Variable([0.5, 4.0])
    with gtf.GradientTape(persistent=True) as tape:
        x = gtf.random.stateless_gamma([6, 2], [5, 6], alpha, beta=beta)
        loss = gtf.reduce_sum(x * [[1.0, 2.0]])
    # x = g / beta: d/d beta = -sum(weight * x) / beta, by hand.
    want = -(x.numpy() * [1.0, 2.0]).sum(axis=0) / beta.numpy()
    np.testing.assert_allclose(tape.gradient(loss, beta).numpy(), want, rtol=1e-5)
    assert tape.gradient(loss, alpha).shape == (2,)


def test_moments_and_seeds():
    gtf.random.set_seed(0)
    x = gtf.random.gamma([20000], [0.5, 3.0], beta=[1.0, 2.0]).numpy()
    np.testing.assert_allclose(x.mean(axis=0), [0.5, 1.5], rtol=0.05)
    np.testing.assert_allclose(x.var(axis=0), [0.5, 0.75], rtol=0.1)
    assert (x > 0).all()
    counts = gtf.random.stateless_poisson([20000], [1, 2], 4.0).numpy()
    assert abs(counts.mean() - 4.0) < 0.1 and abs(counts.var() - 4.0) < 0.3
    a = gtf.random.stateless_gamma([3], [1, 2], 2.0).numpy()
    np.testing.assert_array_equal(a, gtf.random.stateless_gamma([3], [1, 2], 2.0).numpy())
    gtf.random.set_seed(5)
    first = gtf.random.gamma([3], 2.0, seed=1).numpy()
    gtf.random.set_seed(5)
    np.testing.assert_array_equal(first, gtf.random.gamma([3], 2.0, seed=1).numpy())


def test_poisson_has_no_gradient():
    lam = gtf.Variable([1.0, 4.0])
    with gtf.GradientTape() as tape:
        loss = gtf.reduce_sum(gtf.random.poisson([3], lam, seed=1))
    assert tape.gradient(loss, lam) is None


def test_bad_arguments_are_refused():
    with pytest.raises(TypeError, match=r"^\[gradkit\] tf\.random\.gamma got dtype=int32"):
        gtf.random.gamma([2], 1.0, dtype=np.int32)
    with pytest.raises(
        ValueError, match=r"^\[gradkit\] tf\.random\.gamma got alpha of shape \[2\] and beta of shape \[3\]"
    ):
        gtf.random.gamma([2], [1.0, 2.0], beta=[1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"^\[gradkit\] tf\.random\.stateless_gamma .* must broadcast"):
        gtf.random.stateless_gamma([2], [1, 2], [1.0, 2.0, 3.0])


def test_float_draws_of_a_huge_rate_are_poisson_not_wrapped_counts():
    # Counts past 2**31 do not fit jax's int32: a float draw of such a rate is Poisson's normal
    # limit (mean lam, standard deviation sqrt(lam)), and an infinite rate draws infinity, as in
    # TensorFlow (whose kernel never finishes an integer draw of an infinite rate).
    tf = pytest.importorskip("tensorflow")
    lam = 3e9
    got = gtf.random.stateless_poisson([4000], [1, 2], lam=lam, dtype=gtf.float32).numpy()
    want = tf.random.stateless_poisson([4000], [1, 2], lam=lam, dtype=tf.float32).numpy()
    for draws in (got, want):
        assert abs(draws.mean() - lam) < 5 * np.sqrt(lam / draws.size)
        assert 0.9 < draws.std() / np.sqrt(lam) < 1.1
    inf = float("inf")
    np.testing.assert_array_equal(
        gtf.random.stateless_poisson([2], [1, 2], lam=[inf, 2e9], dtype=gtf.float32).numpy()[:1],
        tf.random.stateless_poisson([2], [1, 2], lam=[inf, 2e9], dtype=tf.float32).numpy()[:1],
    )
    assert np.all(np.isinf(gtf.random.poisson([3], lam=inf, seed=1).numpy()))


def test_uniform_full_int_draws_unsigned_integers_by_default():
    tf = pytest.importorskip("tensorflow")
    want = tf.random.Generator.from_seed(1).uniform_full_int([2]).dtype
    got = gtf.random.Generator.from_seed(1).uniform_full_int([2]).dtype
    assert want == tf.uint64 and np.dtype(got).kind == "u"  # uint32 without jax's 64-bit mode
