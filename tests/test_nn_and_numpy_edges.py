"""gradkit.numpy's ufunc methods, vectorize and size over several axes; gradkit.nn's masked
BatchNorm with a non-binary mask and its refusals."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gradkit as gk
import gradkit.numpy as gnp
from gradkit import nn


def test_ufunc_methods_are_recorded():
    x = gk.Variable(jnp.array([1.0, 2.0, 3.0]))
    with gk.GradientTape() as tape:
        table = gnp.multiply.outer(x, x)
        total = gnp.add.reduce(gnp.add.accumulate(x)) + gnp.sum(table)
    np.testing.assert_allclose(np.asarray(table), np.multiply.outer([1.0, 2.0, 3.0], [1.0, 2.0, 3.0]))
    # oracle: jax.grad of the same formula
    expected = jax.grad(lambda v: jnp.add.reduce(jnp.add.accumulate(v)) + jnp.sum(jnp.multiply.outer(v, v)))(x.value)
    np.testing.assert_allclose(np.asarray(tape.gradient(total, x)), np.asarray(expected))
    np.testing.assert_allclose(
        np.asarray(gnp.add.at(jnp.zeros(3), jnp.array([0, 2, 2]), 1.0, inplace=False)), [1, 0, 2]
    )


def test_vectorized_function_is_recorded():
    x = gk.Variable(jnp.array([1.0, 2.0, 3.0]))
    with gk.GradientTape() as tape:
        y = gnp.sum(gnp.vectorize(lambda t: t**2)(x))
    np.testing.assert_allclose(np.asarray(tape.gradient(y, x)), [2.0, 4.0, 6.0])  # d/dx sum x^2 = 2x


def test_size_over_several_axes():
    a = jnp.ones((2, 3, 4))
    assert gnp.size(a, axis=(0, 2)) == 8 and gnp.size(a, axis=1) == 3


def test_batchnorm_counts_any_nonzero_mask_entry_once():
    x = jnp.asarray(np.random.RandomState(0).randn(2, 5, 3).astype("float32"))
    mask = jnp.array([[2, 2, 0, 2, 0], [0, 2, 2, 2, 2]], jnp.int32)
    layer = nn.BatchNorm(momentum=0.0)
    out = layer(x, training=True, mask=mask)
    kept = np.asarray(x)[np.asarray(mask) != 0]  # the rows the mask keeps, as a 0/1 mask would
    mean, var = kept.mean(0), kept.var(0)
    np.testing.assert_allclose(np.asarray(out)[0, 0], (np.asarray(x)[0, 0] - mean) / np.sqrt(var + 1e-3), rtol=1e-4)


def test_nn_refusals_say_what_to_do():
    with pytest.raises(ValueError, match=r"^\[gradkit\] Dense got units=0"):
        nn.Dense(0)
    with pytest.raises(TypeError, match=r"^\[gradkit\] set_seed got 'a'"):
        nn.set_seed("a")
    layer = nn.BatchNorm()
    layer(jnp.ones((2, 4)))
    with pytest.raises(ValueError, match=r"^\[gradkit\] BatchNorm .* built for 4 features"):
        layer(jnp.ones((2, 5)), training=True)
