"""``tf.linalg.diag``/``diag_part`` with ``k``, ``num_rows``, ``num_cols`` and ``padding_value``;
``cholesky`` and ``logdet`` read the lower triangle, as TensorFlow's do. Hand-built NumPy
oracles and ``check_grads``, and real TensorFlow where it is installed."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

import gradkit as gk
import gradkit.tf as gtf

X = np.array([1.0, 2.0, 3.0], np.float32)
M = np.arange(12, dtype=np.float32).reshape(3, 4)
SPD = np.array([[3.0, 1.0], [1.0, 2.0]], np.float32)
LOWER_ONLY = np.array([[4.0, 5.0], [1.0, 2.0]], np.float32)  # the 5 is not read


def test_diag_places_the_diagonal_at_k_with_padding():
    got = gtf.linalg.diag(X, k=1, padding_value=-1.0).numpy()
    want = np.full((4, 4), -1.0, np.float32)
    want[[0, 1, 2], [1, 2, 3]] = X
    np.testing.assert_array_equal(got, want)
    below = gtf.linalg.diag(X, k=-1, num_cols=3).numpy()  # 4 rows, 3 columns
    want = np.zeros((4, 3), np.float32)
    want[[1, 2, 3], [0, 1, 2]] = X
    np.testing.assert_array_equal(below, want)


def test_diag_part_reads_the_kth_diagonal():
    np.testing.assert_array_equal(gtf.linalg.diag_part(M, k=1).numpy(), np.diagonal(M, 1))
    np.testing.assert_array_equal(gtf.linalg.diag_part(M, k=-2).numpy(), np.diagonal(M, -2))
    with pytest.raises(ValueError, match="does not fit"):
        gtf.linalg.diag(X, num_rows=4, num_cols=4)


def test_the_diagonal_gradient_reaches_only_its_entries():
    v = gtf.Variable(M)
    with gtf.GradientTape() as tape:
        y = gtf.reduce_sum(gtf.linalg.diag_part(v, k=1) * [1.0, 2.0, 3.0])
    want = np.zeros_like(M)
    want[[0, 1, 2], [1, 2, 3]] = [1.0, 2.0, 3.0]
    np.testing.assert_array_equal(tape.gradient(y, v).numpy(), want)


def lower_hermitian(a):
    return jnp.tril(a) + jnp.swapaxes(jnp.tril(a, -1), -1, -2)


def test_cholesky_and_logdet_read_the_lower_triangle():
    np.testing.assert_allclose(
        gtf.linalg.cholesky(LOWER_ONLY).numpy(), np.linalg.cholesky(lower_hermitian(LOWER_ONLY)), rtol=1e-6
    )
    np.testing.assert_allclose(
        gtf.linalg.logdet(LOWER_ONLY).numpy(), np.log(np.linalg.det(lower_hermitian(LOWER_ONLY))), rtol=1e-6
    )
    assert np.isnan(gtf.linalg.logdet(np.diag([1.0, -2.0]).astype(np.float32)).numpy())  # not positive definite


def test_cholesky_and_logdet_gradients_against_finite_differences():
    # The gradient is that of the symmetrized matrix, as TensorFlow's (not the derivative of the
    # value with respect to an upper entry, which is not read): finite differences along
    # symmetric matrices check it.
    def on_symmetric(fn):
        return lambda b: fn(gk.Tensor((b + b.T) / 2)).__gradkit_value__()

    a = jnp.asarray(SPD, jnp.float32)
    for fn in (gtf.linalg.logdet, lambda t: gtf.reduce_sum(gtf.linalg.cholesky(t) * [[1.0, 0.0], [2.0, 3.0]])):
        check_grads(on_symmetric(fn), (a,), order=2, modes=("rev",), atol=2e-2, rtol=2e-2)
    v = gtf.Variable(SPD)
    with gtf.GradientTape() as tape:
        y = gtf.linalg.logdet(v)
    np.testing.assert_allclose(tape.gradient(y, v).numpy(), np.linalg.inv(SPD), rtol=1e-5)  # d log det / dA = A^-T
    with gtf.GradientTape() as tape:
        y = gtf.reduce_sum(gtf.linalg.cholesky(v) * [[1.0, 0.0], [2.0, 3.0]])
    want = jax.grad(lambda a: jnp.sum(jnp.linalg.cholesky((a + a.T) / 2) * jnp.array([[1.0, 0.0], [2.0, 3.0]])))(a)
    np.testing.assert_allclose(tape.gradient(y, v).numpy(), want, rtol=1e-5)


def program(tf):
    v = tf.Variable(LOWER_ONLY)
    s = tf.Variable(SPD)
    with tf.GradientTape(persistent=True) as tape:
        chol = tf.linalg.cholesky(v)
        loss = tf.reduce_sum(chol * [[1.0, 0.0], [2.0, 3.0]])
        ld = tf.linalg.logdet(s)
    return [
        tf.linalg.diag(X, k=1, padding_value=5.0),
        tf.linalg.diag(X, k=-1, num_cols=3),
        tf.linalg.diag_part(M, k=1),
        tf.linalg.diag_part(M, k=-2),
        chol,
        tape.gradient(loss, v),
        ld,
        tape.gradient(ld, s),
        tf.linalg.logdet(LOWER_ONLY),
    ]


def test_the_same_program_in_tensorflow():
    tf = pytest.importorskip("tensorflow")
    for want, got in zip(program(tf), program(gtf)):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)


def test_eigh_and_slogdet_keep_a_complex_input_dtype():
    h = np.array([[2.0, 1.0 - 1.0j], [1.0 + 1.0j, 3.0]], np.complex64)
    e, _ = gtf.linalg.eigh(h)
    assert e.dtype == np.complex64
    np.testing.assert_allclose(e.numpy(), np.linalg.eigvalsh(h), rtol=1e-5)
    sign, log_abs = gtf.linalg.slogdet(h)
    assert log_abs.dtype == np.complex64
    np.testing.assert_allclose(log_abs.numpy(), np.log(abs(np.linalg.det(h))), rtol=1e-5)


def test_triangular_solve_broadcasts_an_unbatched_right_hand_side():
    a = np.array([[[2.0, 0.0], [1.0, 4.0]], [[3.0, 0.0], [-1.0, 2.0]]], np.float32)
    b = np.array([[1.0, 2.0], [6.0, 8.0]], np.float32)  # (n, n): a matrix, not a batch of vectors
    got = gtf.linalg.triangular_solve(a, b).numpy()
    np.testing.assert_allclose(got, np.stack([np.linalg.solve(m, b) for m in a]), rtol=1e-6)
    with pytest.raises(ValueError, match="right-hand side"):
        gtf.linalg.triangular_solve(a, b[0])  # a vector, which TensorFlow refuses too
