"""``tf.keras.utils.to_categorical``, ``normalize`` and ``pad_sequences`` against real Keras, on
NumPy inputs and tensors; the tensor forms' gradients against jax.grad."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gradkit.tf as gtf

RNG = np.random.default_rng(11)
X = RNG.standard_normal((4, 5)).astype(np.float32)
X[1] = 0.0  # a zero row: its norm is 0
SEQUENCES = [[1, 2, 3], [4], [], [5, 6, 7, 8, 9]]
STEPS = [np.ones((2, 3)), np.full((4, 3), 2.0), np.zeros((0, 3))]


@pytest.mark.parametrize(
    "labels,num_classes",
    [([0, 2, 1, 2], None), ([[0], [3], [1]], 5), (np.array([[1, 0], [2, 2]]), 3)],
)
def test_to_categorical_matches_keras(labels, num_classes):
    tf = pytest.importorskip("tensorflow")
    want = tf.keras.utils.to_categorical(labels, num_classes)
    got = gtf.keras.utils.to_categorical(labels, num_classes)
    assert isinstance(got, np.ndarray) and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    if num_classes:
        tensor = gtf.keras.utils.to_categorical(gtf.constant(np.asarray(labels, np.int32)), num_classes)
        want_tensor = tf.keras.utils.to_categorical(tf.constant(np.asarray(labels, np.int32)), num_classes)
        np.testing.assert_array_equal(tensor.numpy(), want_tensor.numpy())


@pytest.mark.parametrize("axis,order", [(-1, 2), (0, 2), (-1, 1), (1, 3)])
def test_normalize_matches_keras(axis, order):
    tf = pytest.importorskip("tensorflow")
    norm = np.linalg.norm(X, order, axis, keepdims=True)
    want_numpy = X / np.where(norm == 0, 1, norm)  # Keras' NumPy path fails for axis=0 (it reads `axis or -1`)
    np.testing.assert_allclose(gtf.keras.utils.normalize(X, axis, order), want_numpy, rtol=1e-6)
    if axis != 0:
        np.testing.assert_allclose(gtf.keras.utils.normalize(X, axis, order), tf.keras.utils.normalize(X, axis, order))
    got = gtf.keras.utils.normalize(gtf.constant(X), axis, order).numpy()
    want = tf.keras.utils.normalize(tf.constant(X), axis, order).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_normalize_of_a_tensor_is_differentiable():
    x0 = X[[0, 2]]
    v = gtf.Variable(x0)
    with gtf.GradientTape() as tape:
        y = gtf.reduce_sum(gtf.keras.utils.normalize(v) * np.arange(5, dtype=np.float32).reshape(1, 5))
    weights = jnp.arange(5.0).reshape(1, 5)
    want = jax.grad(lambda z: jnp.sum(z / jnp.linalg.norm(z, axis=-1, keepdims=True) * weights))(x0)
    np.testing.assert_allclose(tape.gradient(y, v).numpy(), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"maxlen": 3},
        {"maxlen": 2, "padding": "post", "truncating": "post"},
        {"padding": "post", "value": -1.0, "dtype": "float32"},
    ],
)
def test_pad_sequences_matches_keras(kwargs):
    tf = pytest.importorskip("tensorflow")
    want = tf.keras.utils.pad_sequences(SEQUENCES, **kwargs)
    got = gtf.keras.utils.pad_sequences(SEQUENCES, **kwargs)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(
        gtf.keras.utils.pad_sequences(STEPS, maxlen=3, dtype="float32"),
        tf.keras.utils.pad_sequences(STEPS, maxlen=3, dtype="float32"),
    )


def test_bad_arguments_are_refused():
    u = gtf.keras.utils
    with pytest.raises(ValueError, match=r"\[gradkit\].*not understood"):
        u.pad_sequences(SEQUENCES, padding="middle")
    with pytest.raises(ValueError, match=r"\[gradkit\].*iterables"):
        u.pad_sequences([[1], 2])
    with pytest.raises(ValueError, match=r"\[gradkit\].*num_classes"):
        u.to_categorical(gtf.constant([0, 1]))
    with pytest.raises(ValueError, match=r"\[gradkit\].*order"):
        u.normalize(gtf.constant(X), order=0)
