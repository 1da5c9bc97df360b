"""``tf.linalg`` of float16 matrices: computed in float32 and rounded back to float16.

The oracle is NumPy's float32 computation on the same (float16-rounded) matrix; for ``inv``
and ``qr``, which TensorFlow's CPU kernels compute in float16 too, real TensorFlow."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gradkit.tf as gtf

SPD = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.25], [0.5, 0.25, 2.0]], np.float16)
RHS = np.array([[1.0, 2.0], [0.5, -1.0], [2.0, 0.0]], np.float16)
A32, B32 = SPD.astype(np.float32), RHS.astype(np.float32)
# 4x4 and larger: jax's det/slogdet go through an LU factorization, which has no float16 kernel.
M4 = (np.random.default_rng(6).standard_normal((4, 4)) + 4 * np.eye(4)).astype(np.float16)
M4_32 = M4.astype(np.float32)

CASES = {
    "solve": (lambda tf, a: tf.linalg.solve(a, tf.constant(RHS)), lambda a: np.linalg.solve(a, B32)),
    "cholesky": (lambda tf, a: tf.linalg.cholesky(a), np.linalg.cholesky),
    "eigvalsh": (lambda tf, a: tf.linalg.eigvalsh(a), np.linalg.eigvalsh),
    "singular_values": (lambda tf, a: tf.linalg.svd(a, compute_uv=False), lambda a: np.linalg.svd(a, compute_uv=False)),
    "logdet": (lambda tf, a: tf.linalg.logdet(a), lambda a: np.linalg.slogdet(a)[1]),
    "lstsq": (lambda tf, a: tf.linalg.lstsq(a, tf.constant(RHS)), lambda a: np.linalg.lstsq(a, B32, rcond=None)[0]),
    "pinv": (lambda tf, a: tf.linalg.pinv(a), np.linalg.pinv),
    "spectral_norm": (lambda tf, a: tf.norm(a, ord=2, axis=[-2, -1]), lambda a: np.linalg.norm(a, 2)),
    "det_4x4": (lambda tf, a: tf.linalg.det(tf.constant(M4)), lambda a: np.linalg.det(M4_32)),
    "det_3x3": (lambda tf, a: tf.linalg.det(a), np.linalg.det),
    "slogdet_sign_4x4": (lambda tf, a: tf.linalg.slogdet(tf.constant(M4))[0], lambda a: np.linalg.slogdet(M4_32)[0]),
    "slogdet_log_abs_4x4": (lambda tf, a: tf.linalg.slogdet(tf.constant(M4))[1], lambda a: np.linalg.slogdet(M4_32)[1]),
    "slogdet_batched_4x4": (
        lambda tf, a: tf.linalg.slogdet(tf.constant(np.stack([M4, -M4[::-1]])))[1],
        lambda a: np.linalg.slogdet(np.stack([M4_32, -M4_32[::-1]]))[1],
    ),
    "keras_det_4x4": (lambda tf, a: tf.keras.ops.linalg.det(M4), lambda a: np.linalg.det(M4_32)),
    "lu_reconstructed": (
        lambda tf, a: tf.linalg.lu_reconstruct(*tf.linalg.lu(a)),
        lambda a: a,
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_float16_matrix_gives_the_float32_result_rounded_to_float16(name):
    ours, oracle = CASES[name]
    out = ours(gtf, gtf.constant(SPD))
    assert out.dtype == gtf.float16
    np.testing.assert_allclose(np.asarray(out, np.float32), oracle(A32), rtol=4e-3, atol=4e-3)


def test_matrix_rank_of_a_float16_matrix():
    singular = np.array([[1.0, 2.0], [2.0, 4.0]], np.float16)
    assert int(gtf.linalg.matrix_rank(gtf.constant(singular))) == 1
    assert int(gtf.linalg.matrix_rank(gtf.constant(SPD))) == 3


def _solve_loss(a):
    return jnp.sum(jnp.linalg.solve(a, B32) ** 2) + jnp.sum(jnp.linalg.eigvalsh(a))


def test_gradient_through_float16_solve_and_eigh_is_the_float32_gradient_rounded():
    a = gtf.Variable(SPD)
    with gtf.GradientTape() as tape:
        loss = gtf.reduce_sum(gtf.linalg.solve(a, gtf.constant(RHS)) ** 2) + gtf.reduce_sum(gtf.linalg.eigvalsh(a))
    grad = tape.gradient(loss, a)
    assert grad.dtype == gtf.float16
    expected = np.asarray(jax.grad(_solve_loss)(jnp.asarray(A32)))
    np.testing.assert_allclose(np.asarray(grad, np.float32), expected, rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("op", ["inv", "qr"])
def test_inv_and_qr_of_float16_match_tensorflow(op):
    tf = pytest.importorskip("tensorflow")
    ours, theirs = getattr(gtf.linalg, op)(gtf.constant(SPD)), getattr(tf.linalg, op)(tf.constant(SPD))
    for x, y in zip(ours if op == "qr" else [ours], theirs if op == "qr" else [theirs]):
        assert x.dtype.name == y.dtype.name == "float16"
        np.testing.assert_allclose(np.asarray(x, np.float32), y.numpy().astype(np.float32), atol=2e-3)


def test_gradient_through_float16_det_and_slogdet_of_a_4x4_matrix():
    a = gtf.Variable(M4)
    with gtf.GradientTape() as tape:
        loss = gtf.linalg.det(a) / 100 + gtf.linalg.slogdet(a)[1]
    grad = tape.gradient(loss, a)
    assert grad.dtype == gtf.float16

    def reference(m):
        return jnp.linalg.det(m) / 100 + jnp.linalg.slogdet(m)[1]

    expected = np.asarray(jax.grad(reference)(jnp.asarray(M4_32)))
    np.testing.assert_allclose(np.asarray(grad, np.float32), expected, rtol=1e-2, atol=1e-2)
