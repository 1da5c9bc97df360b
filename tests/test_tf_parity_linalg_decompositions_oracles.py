"""tf.linalg.svd, pinv, matrix_rank, lstsq, lu and the lu_* ops, eig, eigvals, expm and sqrtm
without TensorFlow: values against NumPy/SciPy, gradients through Variables against JAX's own
rules or finite differences (``check_grads``), tf.function against eager, and the inputs
gradkit refuses as TensorFlow does."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.linalg
from jax.test_util import check_grads
from refusals import assert_gradkit_refusal

import gradkit.tf as gtf

RNG = np.random.default_rng(1)
A = (RNG.normal(size=(3, 3)) + 3 * np.eye(3)).astype(np.float32)
TALL = RNG.normal(size=(4, 2)).astype(np.float32)
B4 = RNG.normal(size=(4, 2)).astype(np.float32)
B = RNG.normal(size=(3, 2)).astype(np.float32)
SPD = (A @ A.T + np.eye(3)).astype(np.float32)
W = np.cos(np.arange(6, dtype=np.float32)).reshape(3, 2)
TOL = dict(rtol=1e-4, atol=1e-4)
# JAX computes the Schur decomposition under sqrtm on the CPU only.
SCHUR = pytest.mark.skipif(jax.default_backend() != "cpu", reason="jax.scipy.linalg.sqrtm runs on the CPU only")


def tape_gradient(fn, *inputs):
    variables = [gtf.Variable(x) for x in inputs]
    with gtf.GradientTape() as tape:
        loss = fn(*variables)
    return [g.numpy() for g in tape.gradient(loss, variables)]


def test_svd_values_and_vectors():
    s, u, v = gtf.linalg.svd(TALL)
    np.testing.assert_allclose(s.numpy(), np.linalg.svd(TALL, compute_uv=False), **TOL)
    np.testing.assert_allclose((u.numpy() * s.numpy()) @ v.numpy().T, TALL, **TOL)  # v, not v^H
    np.testing.assert_allclose(u.numpy().T @ u.numpy(), np.eye(2), **TOL)
    assert gtf.linalg.svd(TALL, compute_uv=False).shape == (2,)
    s, u, v = gtf.linalg.svd(TALL, full_matrices=True)
    assert (u.shape, v.shape) == ((4, 4), (2, 2))
    s, u, v = gtf.linalg.svd(TALL.astype(np.complex64) * (1 + 1j))
    assert s.dtype == np.float32 and u.dtype == np.complex64


def test_svd_gradient_matches_jax_for_distinct_singular_values():
    w = np.cos(np.arange(8, dtype=np.float32)).reshape(4, 2)

    def loss(a):  # u_k cos(s_k) v_k^T: free of the singular vectors' signs
        s, u, v = gtf.linalg.svd(a)
        return gtf.reduce_sum(gtf.matmul(u * gtf.cos(s)[None], v, transpose_b=True) * w)

    def jax_loss(a):
        u, s, vh = jnp.linalg.svd(a, full_matrices=False)
        return jnp.sum((u * jnp.cos(s)[None]) @ vh * w)

    (got,) = tape_gradient(loss, TALL)
    np.testing.assert_allclose(got, jax.grad(jax_loss)(TALL), **TOL)


def test_svd_gradient_with_repeated_singular_values_is_finite():
    # TensorFlow's broadened 1/(s_j^2 - s_i^2) is 0 for equal singular values (JAX's is inf).
    (got,) = tape_gradient(lambda a: gtf.reduce_sum(gtf.linalg.svd(a)[1] * W[:, :1]), np.eye(3, dtype=np.float32))
    assert np.isfinite(got).all()


def test_svd_full_matrices_gradient_refused_two_sides_apart():
    v = gtf.Variable(TALL)
    with gtf.GradientTape() as tape:
        loss = gtf.reduce_sum(gtf.linalg.svd(v, full_matrices=True)[1])
    with pytest.raises(NotImplementedError, match=r"^\[gradkit\] tf.linalg.svd\(full_matrices=True\) of a 4x2"):
        tape.gradient(loss, v)


def test_pinv_and_matrix_rank_against_numpy():
    rcond = 10 * 4 * np.finfo(np.float32).eps  # TensorFlow's default, not NumPy's
    np.testing.assert_allclose(gtf.linalg.pinv(TALL).numpy(), np.linalg.pinv(TALL, rcond=rcond), **TOL)
    low_rank = np.c_[TALL, TALL[:, :1]]
    np.testing.assert_allclose(gtf.linalg.pinv(low_rank).numpy(), np.linalg.pinv(low_rank), **TOL)
    rank = gtf.linalg.matrix_rank(low_rank)
    assert rank.dtype == np.int32 and int(rank) == np.linalg.matrix_rank(low_rank) == 2
    assert int(gtf.linalg.matrix_rank(A, tol=1e6)) == 0
    (got,) = tape_gradient(lambda a: gtf.reduce_sum(gtf.linalg.pinv(a) * W[:2, :].repeat(2, 1)[:, :4]), TALL)
    want = jax.grad(lambda a: jnp.sum(jnp.linalg.pinv(a) * W[:2, :].repeat(2, 1)[:, :4]))(TALL)
    np.testing.assert_allclose(got, want, **TOL)


def test_matrix_rank_is_not_differentiable():
    v = gtf.Variable(A)
    with gtf.GradientTape() as tape:
        y = gtf.cast(gtf.linalg.matrix_rank(v), gtf.float32)
    assert tape.gradient(y, v) is None


@pytest.mark.parametrize("l2", [0.0, 0.5])
@pytest.mark.parametrize("shape", [(4, 2), (2, 4)])
def test_lstsq_against_the_normal_equations(shape, l2):
    a = RNG.normal(size=shape).astype(np.float32)
    b = B4[: shape[0]]

    def normal_equations(a, b):
        if shape[0] >= shape[1]:
            return jnp.linalg.solve(a.T @ a + l2 * jnp.eye(shape[1]), a.T @ b)
        return a.T @ jnp.linalg.solve(a @ a.T + l2 * jnp.eye(shape[0]), b)

    np.testing.assert_allclose(gtf.linalg.lstsq(a, b, l2_regularizer=l2).numpy(), normal_equations(a, b), **TOL)
    got = tape_gradient(lambda a, b: gtf.reduce_sum(gtf.cos(gtf.linalg.lstsq(a, b, l2_regularizer=l2))), a, b)
    want = jax.grad(lambda a, b: jnp.sum(jnp.cos(normal_equations(a, b))), argnums=(0, 1))(a, b)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, **TOL)


def test_lstsq_minimum_norm_solution_of_a_rank_deficient_matrix():
    low_rank = np.c_[TALL, TALL[:, :1]]
    want = np.linalg.lstsq(low_rank, B4, rcond=None)[0]
    np.testing.assert_allclose(gtf.linalg.lstsq(low_rank, B4, fast=False).numpy(), want, **TOL)
    # TensorFlow defines no gradient for fast=False; gradkit's is the pseudo-inverse solution's.
    (got,) = tape_gradient(lambda a: gtf.reduce_sum(gtf.linalg.lstsq(a, B4, fast=False)), TALL)
    want = jax.grad(lambda a: jnp.sum(jnp.linalg.pinv(a) @ B4))(TALL)
    np.testing.assert_allclose(got, want, **TOL)


def test_lu_against_scipy():
    lu, p = gtf.linalg.lu(A[[2, 0, 1]])
    assert p.dtype == np.int32
    _, lower, upper = scipy.linalg.lu(A[[2, 0, 1]])
    np.testing.assert_allclose(lu.numpy(), lower + upper - np.eye(3), **TOL)
    np.testing.assert_allclose(A[[2, 0, 1]][p.numpy()], lower @ upper, **TOL)  # x[p] == L @ U
    np.testing.assert_allclose(gtf.linalg.lu_reconstruct(lu, p).numpy(), A[[2, 0, 1]], **TOL)
    np.testing.assert_allclose(gtf.linalg.lu_solve(lu, p, B).numpy(), np.linalg.solve(A[[2, 0, 1]], B), **TOL)
    np.testing.assert_allclose(gtf.linalg.lu_matrix_inverse(lu, p).numpy(), np.linalg.inv(A[[2, 0, 1]]), **TOL)
    # TensorFlow has no gradient for lu (it raises); gradkit's gives solve's gradient through lu_solve.
    (got,) = tape_gradient(lambda a: gtf.reduce_sum(gtf.linalg.lu_solve(*gtf.linalg.lu(a), B) * W), A)
    np.testing.assert_allclose(got, jax.grad(lambda a: jnp.sum(jnp.linalg.solve(a, B) * W))(A), **TOL)


def test_lu_solve_reconstruct_and_inverse_gradients_by_finite_differences():
    lu, p = (x.numpy() for x in gtf.linalg.lu(A))
    for fn in (
        lambda lu: gtf.linalg.lu_solve(lu, p, B),
        lambda lu: gtf.linalg.lu_matrix_inverse(lu, p),
        lambda lu: gtf.linalg.lu_reconstruct(lu, p),
    ):
        check_grads(fn, (jnp.asarray(lu),), order=2, modes=("rev",), atol=3e-2, rtol=3e-2)


def test_lu_ops_broadcast_a_batch_of_right_hand_sides():
    lu, p = gtf.linalg.lu(np.stack([A, A.T]))
    want = np.stack([np.linalg.solve(A, B), np.linalg.solve(A.T, B)])
    np.testing.assert_allclose(gtf.linalg.lu_solve(lu, p, B).numpy(), want, **TOL)


def _phase_free(e, v):
    return gtf.reduce_sum(gtf.math.real(e) * gtf.math.real(v * gtf.math.conj(v))[0]) + gtf.reduce_sum(
        gtf.math.imag(e) ** 2
    )


def test_eig_against_numpy():
    e, v = gtf.linalg.eig(A)
    assert e.dtype == v.dtype == np.complex64
    np.testing.assert_allclose(A @ v.numpy(), v.numpy() * e.numpy(), **TOL)
    np.testing.assert_allclose(np.sort_complex(e.numpy()), np.sort_complex(np.linalg.eigvals(A)), **TOL)
    np.testing.assert_allclose(np.linalg.norm(v.numpy(), axis=0), 1.0, **TOL)
    np.testing.assert_allclose(
        np.sort_complex(gtf.linalg.eigvals(np.stack([A, A.T])).numpy()[1]), np.sort_complex(np.linalg.eigvals(A)), **TOL
    )


def test_eig_gradients_against_jax():
    a = RNG.normal(size=(3, 3)).astype(np.float32)

    def jax_phase_free(a):
        e, v = jax.lax.linalg.eig(a, compute_left_eigenvectors=False, enable_eigvec_derivs=True)
        return jnp.sum(jnp.real(e) * jnp.abs(v[0]) ** 2) + jnp.sum(jnp.imag(e) ** 2)

    v = gtf.Variable(a)
    with gtf.GradientTape() as outer:
        with gtf.GradientTape() as inner:
            loss = _phase_free(*gtf.linalg.eig(v))
        grad = inner.gradient(loss, v)
        norm = gtf.reduce_sum(grad**2)
    np.testing.assert_allclose(grad.numpy(), jax.grad(jax_phase_free)(a), **TOL)
    want = jax.grad(lambda a: jnp.sum(jax.grad(jax_phase_free)(a) ** 2))(a)
    np.testing.assert_allclose(outer.gradient(norm, v).numpy(), want, rtol=1e-3, atol=1e-3)
    (got,) = tape_gradient(lambda a: gtf.math.real(gtf.reduce_sum(gtf.linalg.eigvals(a) ** 3)), a)
    np.testing.assert_allclose(got, jax.grad(lambda a: jnp.real(jnp.sum(jnp.linalg.eigvals(a) ** 3)))(a), **TOL)


@pytest.mark.parametrize("scale", [0.1, 1.0, 8.0])
def test_expm_against_scipy(scale):
    a = A * scale
    want = scipy.linalg.expm(a.astype(np.float64))
    np.testing.assert_allclose(gtf.linalg.expm(a).numpy(), want, rtol=1e-4, atol=1e-5 * np.abs(want).max())
    assert np.isnan(gtf.linalg.expm(np.float32([[np.inf, 0.0], [0.0, 1.0]])).numpy()).all()


def test_expm_gradients_by_finite_differences():
    check_grads(gtf.linalg.expm, (jnp.asarray(A * 0.2),), order=2, modes=("rev",), atol=2e-2, rtol=2e-2)
    check_grads(gtf.linalg.expm, (jnp.asarray(A * 1.5),), order=1, modes=("rev",), atol=2e-2, rtol=2e-2)  # squarings


@SCHUR
def test_sqrtm_against_scipy():
    np.testing.assert_allclose(gtf.linalg.sqrtm(SPD).numpy(), scipy.linalg.sqrtm(SPD).real, **TOL)
    np.testing.assert_allclose(gtf.linalg.sqrtm(np.stack([A, SPD])).numpy()[0], scipy.linalg.sqrtm(A).real, **TOL)
    c = (A + 1j * A.T).astype(np.complex64)
    np.testing.assert_allclose(gtf.linalg.sqrtm(c).numpy(), scipy.linalg.sqrtm(c), **TOL)
    # No real root (a negative eigenvalue): NaN, as TensorFlow.
    assert np.isnan(gtf.linalg.sqrtm(np.diag([-1.0, 4.0]).astype(np.float32)).numpy()).all()


@SCHUR
def test_sqrtm_gradients_by_finite_differences():
    check_grads(gtf.linalg.sqrtm, (jnp.asarray(SPD),), order=2, modes=("rev",), atol=2e-2, rtol=2e-2)
    # Complex matrices: the derivative of the holomorphic root (TensorFlow's transposes without
    # conjugating there and differs).
    c = jnp.asarray(A + 0.5j * A.T, jnp.complex64)
    check_grads(gtf.linalg.sqrtm, (c,), order=1, atol=2e-2, rtol=2e-2)  # forward and reverse


@pytest.mark.parametrize(
    "program",
    [
        lambda tf, a: tf.linalg.svd(a)[0] + tf.reduce_sum(tf.linalg.pinv(a)),
        lambda tf, a: tf.linalg.lstsq(a, B, l2_regularizer=0.1),
        lambda tf, a: tf.math.real(tf.linalg.eigvals(a)) + tf.linalg.diag_part(tf.linalg.expm(a * 0.2)),
        pytest.param(
            lambda tf, a: tf.linalg.lu_solve(*tf.linalg.lu(a), B) + tf.linalg.sqrtm(a @ tf.transpose(a))[:, :2],
            marks=SCHUR,
        ),
    ],
)
def test_inside_tf_function_matches_eager(program):
    def run(fn):
        v = gtf.Variable(A)
        with gtf.GradientTape() as tape:
            y = fn(v)
            loss = gtf.reduce_sum(gtf.cos(y))
        return y.numpy(), tape.gradient(loss, v).numpy()

    eager = run(lambda v: program(gtf, v))
    traced = run(gtf.function(lambda v: program(gtf, v)))
    for e, t in zip(eager, traced):
        np.testing.assert_allclose(t, e, **TOL)


I32 = np.array([[2, 1], [1, 3]], np.int32)
BAD = {
    "inv_int": (lambda: gtf.linalg.inv(I32), TypeError),
    "solve_int": (lambda: gtf.linalg.solve(I32, I32), TypeError),
    "svd_int": (lambda: gtf.linalg.svd(I32), TypeError),
    "eig_int": (lambda: gtf.linalg.eig(I32), TypeError),
    "eigvals_float16": (lambda: gtf.linalg.eigvals(A.astype(np.float16)), TypeError),
    "expm_int": (lambda: gtf.linalg.expm(I32), ValueError),
    "pinv_complex": (lambda: gtf.linalg.pinv(A.astype(np.complex64)), TypeError),
    "solve_vector_rhs": (lambda: gtf.linalg.solve(A, B[:, 0]), ValueError),
    "solve_batch_broadcast": (lambda: gtf.linalg.solve(np.stack([A, A]), B), ValueError),
    "det_not_square": (lambda: gtf.linalg.det(TALL), ValueError),
    "lstsq_rows": (lambda: gtf.linalg.lstsq(TALL, B), ValueError),
    "lu_solve_vector_rhs": (lambda: gtf.linalg.lu_solve(A, [0, 1, 2], B[:, 0]), ValueError),
    "lu_output_idx_type": (lambda: gtf.linalg.lu(A, output_idx_type=np.float32), TypeError),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_refused_inputs_raise_gradkit_errors(name):
    call, error = BAD[name]
    assert_gradkit_refusal(call, error, r"tf\.linalg\.")
