"""``tf.random.split``, ``fold_in``, ``stateless_categorical`` and ``stateless_binomial`` against real
TensorFlow: shapes and dtypes (the numbers come from another generator), determinism, that the seeds
they derive differ, the draws' distributions, and the errors."""

import jax
import numpy as np
import pytest

import gradkit.tf as gtf


def test_split_and_fold_in_shapes_dtypes_and_determinism():
    tf = pytest.importorskip("tensorflow")
    for num in (0, 1, 3):
        want, got = tf.random.split([1, 2], num), gtf.random.split([1, 2], num)
        assert got.shape == tuple(want.shape) and got.dtype == want.dtype.as_numpy_dtype
    seeds = gtf.random.split([1, 2], 4).numpy()
    np.testing.assert_array_equal(seeds, gtf.random.split([1, 2], 4).numpy())
    assert len({tuple(s) for s in seeds}) == 4
    folded = [tuple(gtf.random.fold_in([1, 2], d).numpy()) for d in range(5)]
    assert len(set(folded)) == 5 and gtf.random.fold_in([1, 2], 3).shape == tuple(tf.random.fold_in([1, 2], 3).shape)
    # Seeds made this way drive the stateless draws.
    a = gtf.random.stateless_normal([3], seed=seeds[0]).numpy()
    np.testing.assert_array_equal(a, gtf.random.stateless_normal([3], seed=gtf.random.split([1, 2], 4)[0]).numpy())
    assert not np.array_equal(a, gtf.random.stateless_normal([3], seed=seeds[1]).numpy())


def test_stateless_categorical():
    tf = pytest.importorskip("tensorflow")
    logits = np.log(np.array([[0.2, 0.5, 0.3], [0.9, 0.05, 0.05]], np.float32))
    want = tf.random.stateless_categorical(logits, 4, [3, 4])
    got = gtf.random.stateless_categorical(logits, 4, [3, 4])
    # int64 is int32 in gradkit while JAX's 64-bit mode is off.
    assert got.shape == tuple(want.shape) and got.dtype == jax.dtypes.canonicalize_dtype(want.dtype.as_numpy_dtype)
    np.testing.assert_array_equal(got.numpy(), gtf.random.stateless_categorical(logits, 4, [3, 4]).numpy())
    many = gtf.random.stateless_categorical(logits, 20000, [5, 6], dtype=np.int32).numpy()
    assert many.dtype == np.int32
    for row, p in zip(many, np.exp(logits)):
        np.testing.assert_allclose(np.bincount(row, minlength=3) / row.size, p, atol=0.02)


def test_stateless_binomial():
    tf = pytest.importorskip("tensorflow")
    want = tf.random.stateless_binomial([4, 2], [1, 2], counts=[10.0, 20.0], probs=[0.5, 0.25])
    got = gtf.random.stateless_binomial([4, 2], [1, 2], counts=[10.0, 20.0], probs=[0.5, 0.25])
    assert got.shape == tuple(want.shape) and got.dtype == want.dtype.as_numpy_dtype
    draws = gtf.random.stateless_binomial([20000, 2], [3, 4], [10.0, 20.0], [0.5, 0.25]).numpy()
    np.testing.assert_allclose(draws.mean(axis=0), [5.0, 5.0], rtol=0.03)
    np.testing.assert_allclose(draws.var(axis=0), [2.5, 3.75], rtol=0.08)
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.random.stateless_binomial([3], [1, 2], counts=[10.0], probs=[0.5, 0.5])
    with pytest.raises(gtf.errors.InvalidArgumentError, match=r"^\[gradkit\] .*must end with the broadcast shape"):
        gtf.random.stateless_binomial([3], [1, 2], counts=[10.0], probs=[0.5, 0.5])


def test_bad_split_and_fold_in_arguments():
    with pytest.raises(ValueError, match=r"^\[gradkit\] tf\.random\.split got num=-1"):
        gtf.random.split([1, 2], -1)
    with pytest.raises(TypeError, match=r"^\[gradkit\] tf\.random\.fold_in got data of dtype float32"):
        gtf.random.fold_in([1, 2], 1.5)
    with pytest.raises(ValueError, match="seed must have shape"):
        gtf.random.split([1, 2, 3])
