"""tf.linalg.svd, pinv, matrix_rank, lstsq, lu and the lu_* ops, eig, eigvals, expm and sqrtm
against real TensorFlow: values, gradients through Variables (first and second order), inside
tf.function, and the inputs TensorFlow refuses (integer dtypes, vector right-hand sides,
non-square matrices) for these and the older tf.linalg ops.

Singular vectors and eigenvectors are unique only up to sign or phase (and eigenvalues come
in LAPACK's order here, Eigen's there), so programs read them through quantities free of
that choice: ``u_k v_k^H`` products, ``|v|^2`` weighted by its eigenvalue, sums over
eigenvalues."""

from __future__ import annotations

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")

from refusals import assert_refused_like_tensorflow  # noqa: E402

import gradkit.tf as gtf  # noqa: E402

RNG = np.random.default_rng(0)
A = (RNG.normal(size=(3, 3)) + 3 * np.eye(3)).astype(np.float32)
TALL = RNG.normal(size=(4, 2)).astype(np.float32)
WIDE = RNG.normal(size=(2, 3)).astype(np.float32)
BATCH = RNG.normal(size=(2, 3, 2)).astype(np.float32)
B = RNG.normal(size=(3, 2)).astype(np.float32)
B4 = RNG.normal(size=(4, 2)).astype(np.float32)
C = (RNG.normal(size=(3, 2)) + 1j * RNG.normal(size=(3, 2))).astype(np.complex64)
SPD = (A @ A.T + np.eye(3)).astype(np.float32)
LU, PERM = (x.numpy() for x in tf_real.linalg.lu(A[[2, 0, 1]]))


def _dtype(x):
    return np.dtype(getattr(x.dtype, "as_numpy_dtype", x.dtype))


def _weighted(tf, y):
    w = np.cos(np.arange(int(np.prod(y.shape)))).reshape(tuple(y.shape)).astype(_dtype(y))
    return tf.reduce_sum(tf.math.real(y * w))


def _run(tf, program, inputs, differentiate=True):
    """Outputs and the gradients of a weighted sum of the float outputs, as NumPy."""
    variables = [tf.Variable(x) for x in inputs]
    with tf.GradientTape() as tape:
        out = program(tf, *variables)
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
        loss = sum(_weighted(tf, y) for y in outs if _dtype(y).kind in "fc")
    grads = tape.gradient(loss, variables) if differentiate else []
    return [np.asarray(y.numpy()) for y in outs] + [None if g is None else g.numpy() for g in grads]


def _close(got, want, rtol=2e-4):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if w is None:
            assert g is None
            continue
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol * max(1.0, float(np.abs(w).max(initial=0))))


def _uv(tf, a, full=False):
    s, u, v = tf.linalg.svd(a, full_matrices=full)
    k = s.shape[-1]
    # u_k cos(s_k) v_k^H: free of the singular vectors' signs (phases).
    return [s, tf.matmul(u[..., :k] * tf.cast(tf.cos(s), u.dtype)[..., None, :], v[..., :k], adjoint_b=True)]


def _eig(tf, a):
    e, v = tf.linalg.eig(a)
    weight = tf.math.real(v * tf.math.conj(v))[..., 0, :]
    return [tf.reduce_sum(e * e, -1), tf.reduce_sum(tf.math.real(e) * weight, -1)]


CASES = {
    "svd_values": (lambda tf, a: tf.linalg.svd(a, compute_uv=False), [BATCH]),
    "svd_vectors_square": (lambda tf, a: _uv(tf, a), [A]),
    "svd_vectors_tall": (lambda tf, a: _uv(tf, a), [TALL]),
    "svd_vectors_wide_batch": (lambda tf, a: _uv(tf, tf.linalg.matrix_transpose(a)), [BATCH]),
    "svd_full_one_longer": (lambda tf, a: _uv(tf, a[:, :2], full=True), [A]),
    "svd_repeated_singular_values": (lambda tf, a: _uv(tf, a), [np.eye(3, dtype=np.float32)]),
    "svd_complex": (lambda tf, a: _uv(tf, a), [C]),
    "pinv": (lambda tf, a: tf.linalg.pinv(a), [TALL]),
    "pinv_batch_rcond": (lambda tf, a: tf.linalg.pinv(a, rcond=[0.05, 0.9]), [BATCH]),
    "lstsq_tall": (lambda tf, a, b: tf.linalg.lstsq(a, b), [TALL, B4]),
    "lstsq_wide_l2": (lambda tf, a, b: tf.linalg.lstsq(a, b[:2], l2_regularizer=0.3), [WIDE, B]),
    "lstsq_square_broadcast": (lambda tf, a, b: tf.linalg.lstsq(tf.stack([a, a * 2.0]), b), [A, B]),
    "lu_solve": (lambda tf, lu, b: tf.linalg.lu_solve(lu, PERM, b), [LU, B]),
    "lu_matrix_inverse": (lambda tf, lu: tf.linalg.lu_matrix_inverse(lu, PERM), [LU]),
    "lu_reconstruct": (lambda tf, lu: tf.linalg.lu_reconstruct(lu, PERM), [LU]),
    "eig": (_eig, [A]),
    "eig_batch": (_eig, [np.stack([A, A.T * 0.5])]),
    "eig_complex": (_eig, [(A + 1j * A.T).astype(np.complex64)]),
    "eigvals": (lambda tf, a: tf.reduce_sum(tf.linalg.eigvals(a) ** 3), [RNG.normal(size=(3, 3)).astype(np.float32)]),
    "expm": (lambda tf, a: tf.linalg.expm(a), [A * 0.3]),
    "expm_large_norm_batch": (lambda tf, a: tf.linalg.expm(tf.stack([a, -a])), [A]),
    "expm_complex": (lambda tf, a: tf.linalg.expm(a), [(A + 1j * A.T).astype(np.complex64) * 0.2]),
    "sqrtm": (lambda tf, a: tf.linalg.sqrtm(a), [SPD]),
    "sqrtm_nonsymmetric": (lambda tf, a: tf.linalg.sqrtm(a), [A]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients_match_tensorflow(name):
    program, inputs = CASES[name]
    _close(_run(gtf, program, inputs), _run(tf_real, program, inputs))


VALUE_CASES = {
    # TensorFlow defines no gradient for these (it raises); gradkit's are tested against JAX.
    "lu": lambda tf: list(tf.linalg.lu(A[[2, 0, 1]])),
    "lu_batch": lambda tf: list(tf.linalg.lu(np.stack([A, A.T]))),
    "lstsq_min_norm_rank_deficient": lambda tf: tf.linalg.lstsq(np.c_[TALL, TALL[:, :1]], B4, fast=False),
    "matrix_rank": lambda tf: [tf.linalg.matrix_rank(np.c_[TALL, TALL[:, :1]]), tf.linalg.matrix_rank(A, tol=3.5)],
    "svd_full": lambda tf: [tf.linalg.svd(TALL, full_matrices=True)[0], tf.abs(tf.linalg.svd(TALL, True)[1][:, :2])],
    "sqrtm_no_real_root": lambda tf: tf.linalg.sqrtm(np.diag([-1.0, 4.0]).astype(np.float32)),
    "sqrtm_complex": lambda tf: tf.linalg.sqrtm((A + 1j * A.T).astype(np.complex64)),
    "eigvals_rotation": lambda tf: tf.math.imag(
        tf.reduce_prod(tf.linalg.eigvals(tf.constant([[0.0, 2.0], [-2.0, 0.0]])))
    ),
}


@pytest.mark.parametrize("name", sorted(VALUE_CASES))
def test_values_match_tensorflow(name):
    def run(tf):
        out = VALUE_CASES[name](tf)
        return [np.asarray(y.numpy()) for y in (out if isinstance(out, list) else [out])]

    _close(run(gtf), run(tf_real))


@pytest.mark.parametrize("name", ["svd_vectors_tall", "pinv", "eig", "eigvals", "sqrtm", "lstsq_wide_l2", "lu_solve"])
def test_second_derivatives_match_tensorflow(name):
    program, inputs = CASES[name]

    def run(tf):
        variables = [tf.Variable(x) for x in inputs]
        with tf.GradientTape() as outer:
            with tf.GradientTape() as inner:
                outs = program(tf, *variables)
                loss = sum(_weighted(tf, y) for y in (outs if isinstance(outs, list) else [outs]))
            grads = inner.gradient(loss, variables)
            norm = sum(tf.reduce_sum(tf.math.real(g * tf.math.conj(g))) for g in grads)
        return [g.numpy() for g in outer.gradient(norm, variables)]

    _close(run(gtf), run(tf_real), rtol=1e-3)


@pytest.mark.parametrize("name", ["svd_vectors_tall", "eig", "lstsq_tall", "lu_solve", "sqrtm", "expm"])
def test_inside_tf_function_matches_eager(name):
    program, inputs = CASES[name]
    compiled = gtf.function(lambda *xs: program(gtf, *xs))
    _close(_run(gtf, lambda tf, *xs: compiled(*xs), inputs), _run(tf_real, program, inputs))


def test_full_matrices_gradient_refused_as_in_tensorflow():
    for tf in (tf_real, gtf):
        v = tf.Variable(TALL)
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.linalg.svd(v, full_matrices=True)[0])
        with pytest.raises(NotImplementedError, match="full_matrices" if tf is gtf else "full_matrices is True"):
            tape.gradient(loss, v)


I32 = np.array([[2, 1], [1, 3]], np.int32)
F32 = np.array([[2.0, 1.0], [1.0, 3.0]], np.float32)
BAD = {
    # integer matrices: TensorFlow's kernels take float and complex types only
    "inv_int": lambda tf: tf.linalg.inv(I32),
    "det_int": lambda tf: tf.linalg.det(I32),
    "cholesky_int": lambda tf: tf.linalg.cholesky(I32),
    "logdet_int": lambda tf: tf.linalg.logdet(I32),
    "slogdet_int": lambda tf: tf.linalg.slogdet(I32),
    "eigh_int": lambda tf: tf.linalg.eigh(I32),
    "eigvalsh_int": lambda tf: tf.linalg.eigvalsh(I32),
    "qr_int": lambda tf: tf.linalg.qr(I32),
    "solve_int": lambda tf: tf.linalg.solve(I32, I32),
    "triangular_solve_int": lambda tf: tf.linalg.triangular_solve(I32, I32),
    "cholesky_solve_int": lambda tf: tf.linalg.cholesky_solve(I32, I32),
    "svd_int": lambda tf: tf.linalg.svd(I32),
    "lu_int": lambda tf: tf.linalg.lu(I32),
    "sqrtm_int": lambda tf: tf.linalg.sqrtm(I32),
    "expm_int": lambda tf: tf.linalg.expm(I32),
    "lstsq_int": lambda tf: tf.linalg.lstsq(I32, I32),
    "pinv_int": lambda tf: tf.linalg.pinv(I32),
    "pinv_complex": lambda tf: tf.linalg.pinv(tf.cast(F32, tf.complex64)),
    "matrix_rank_complex": lambda tf: tf.linalg.matrix_rank(tf.cast(F32, tf.complex64)),
    "inv_bfloat16": lambda tf: tf.linalg.inv(tf.cast(F32, tf.bfloat16)),
    # shapes
    "solve_vector_rhs": lambda tf: tf.linalg.solve(F32, np.ones(2, np.float32)),
    "solve_rhs_rows": lambda tf: tf.linalg.solve(F32, np.ones((3, 1), np.float32)),
    "solve_not_square": lambda tf: tf.linalg.solve(np.ones((2, 3), np.float32), np.ones((2, 1), np.float32)),
    "solve_no_batch_broadcast": lambda tf: tf.linalg.solve(np.stack([F32, F32]), np.ones((2, 1), np.float32)),
    "solve_batch_mismatch": lambda tf: tf.linalg.solve(np.stack([F32, F32]), np.ones((1, 2, 1), np.float32)),
    "inv_not_square": lambda tf: tf.linalg.inv(np.ones((2, 3), np.float32)),
    "inv_vector": lambda tf: tf.linalg.inv(np.ones(2, np.float32)),
    "det_not_square": lambda tf: tf.linalg.det(np.ones((2, 3), np.float32)),
    "det_scalar": lambda tf: tf.linalg.det(np.float32(2.0)),
    "cholesky_not_square": lambda tf: tf.linalg.cholesky(np.ones((2, 3), np.float32)),
    "logdet_not_square": lambda tf: tf.linalg.logdet(np.ones((2, 3), np.float32)),
    "slogdet_not_square": lambda tf: tf.linalg.slogdet(np.ones((2, 3), np.float32)),
    "eigh_not_square": lambda tf: tf.linalg.eigh(np.ones((2, 3), np.float32)),
    "svd_vector": lambda tf: tf.linalg.svd(np.ones(3, np.float32)),
    "pinv_vector": lambda tf: tf.linalg.pinv(np.ones(3, np.float32)),
    "pinv_rcond_other_dtype": lambda tf: tf.linalg.pinv(F32, rcond=tf.constant(0.1, tf.float16)),
    "lstsq_vector_rhs": lambda tf: tf.linalg.lstsq(TALL, np.ones(4, np.float32)),
    "lstsq_rhs_rows": lambda tf: tf.linalg.lstsq(TALL, np.ones((3, 1), np.float32)),
    "lstsq_min_norm_no_broadcast": lambda tf: tf.linalg.lstsq(np.stack([TALL, TALL]), B4, fast=False),
    "eig_not_square": lambda tf: tf.linalg.eig(np.ones((2, 3), np.float32)),
    "lu_solve_vector_rhs": lambda tf: tf.linalg.lu_solve(LU, PERM, np.ones(3, np.float32)),
    "lu_reconstruct_perm_rank": lambda tf: tf.linalg.lu_reconstruct(LU, PERM[None]),
    "lu_reconstruct_not_square": lambda tf: tf.linalg.lu_reconstruct(LU[:2], PERM),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_inputs_tensorflow_refuses_raise_gradkit_errors(name):
    assert_refused_like_tensorflow(BAD[name], tf_real, gtf, r"tf\.linalg\.")
