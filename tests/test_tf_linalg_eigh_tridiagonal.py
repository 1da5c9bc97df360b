"""``tf.linalg.eigh_tridiagonal``: eigenvalues against TensorFlow (skipped without it) and NumPy's
``eigh`` of the dense matrix; eigenvectors by their definition (A v = lambda v, orthonormal);
the gradient by first-order perturbation theory (d lambda_k / d alpha_i = v_ik^2)."""

import numpy as np
import pytest

import gradkit.tf as gtf

ALPHA = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
BETA = np.array([0.5, -1.0, 0.3], np.float32)
DENSE = np.diag(ALPHA) + np.diag(BETA, 1) + np.diag(BETA, -1)


@pytest.mark.parametrize("select, select_range", [("a", None), ("i", [1, 2]), ("v", [0.0, 3.0]), ("v", [5.0, 6.0])])
def test_eigenvalues(select, select_range):
    got = gtf.linalg.eigh_tridiagonal(ALPHA, BETA, select=select, select_range=select_range).numpy()
    every = np.linalg.eigvalsh(DENSE.astype(np.float64))
    if select == "i":
        want = every[1:3]
    elif select == "v":
        want = every[(every > select_range[0]) & (every <= select_range[1])]
    else:
        want = every
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    tf = pytest.importorskip("tensorflow")
    theirs = tf.linalg.eigh_tridiagonal(ALPHA, BETA, select=select, select_range=select_range).numpy()
    np.testing.assert_allclose(got, theirs, rtol=1e-5, atol=1e-5)


def test_eigenvectors_and_gradient():
    values, vectors = (t.numpy() for t in gtf.linalg.eigh_tridiagonal(ALPHA, BETA, eigvals_only=False))
    np.testing.assert_allclose(DENSE @ vectors, vectors * values, atol=1e-5)
    np.testing.assert_allclose(vectors.T @ vectors, np.eye(4), atol=1e-5)
    alpha = gtf.Variable(ALPHA)
    with gtf.GradientTape() as tape:
        largest = gtf.linalg.eigh_tridiagonal(alpha, BETA)[-1]
    np.testing.assert_allclose(tape.gradient(largest, alpha).numpy(), vectors[:, -1] ** 2, atol=1e-5)


def test_complex_hermitian_and_errors():
    got = gtf.linalg.eigh_tridiagonal(np.array([1.0, 2.0], np.complex64), np.array([1j], np.complex64)).numpy()
    np.testing.assert_allclose(got, np.linalg.eigvalsh(np.array([[1, 1j], [-1j, 2]])), rtol=1e-6)
    with pytest.raises(gtf.errors.InvalidArgumentError, match="n - 1 off-diagonal"):
        gtf.linalg.eigh_tridiagonal(ALPHA, ALPHA)
    with pytest.raises(ValueError, match="select="):
        gtf.linalg.eigh_tridiagonal(ALPHA, BETA, select="x")
