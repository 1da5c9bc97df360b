"""tf.linalg.set_diag, tensor_diag, tensor_diag_part, cross, tridiagonal_solve,
tridiagonal_matmul, banded_triangular_solve, normalize and global_norm against real
TensorFlow: values, gradients through Variables (first and second order), inside tf.function,
and the inputs TensorFlow refuses."""

from __future__ import annotations

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")

from refusals import assert_refused_like_tensorflow  # noqa: E402

import gradkit.tf as gtf  # noqa: E402

RNG = np.random.default_rng(2)


def f32(*shape):
    return RNG.normal(size=shape).astype(np.float32)


X = f32(2, 3, 4)
DIAGONALS = f32(2, 3, 5)
DIAGONALS[..., 1, :] += 4.0 * np.sign(DIAGONALS[..., 1, :])  # well conditioned
NEEDS_PIVOTING = f32(3, 5)
NEEDS_PIVOTING[1, 0] = 0.0  # a zero first pivot: elimination must swap rows
RHS = f32(2, 5, 2)
BANDS = f32(2, 4)
BANDS[0] += 3.0 * np.sign(BANDS[0])
C = (f32(3, 4) + 1j * f32(3, 4)).astype(np.complex64)


def _dtype(x):
    return np.dtype(getattr(x.dtype, "as_numpy_dtype", x.dtype))


def _weighted(tf, y):
    w = np.cos(np.arange(int(np.prod(y.shape)))).reshape(tuple(y.shape)).astype(_dtype(y))
    return tf.reduce_sum(tf.math.real(y * w))


def _run(tf, program, inputs, order=1):
    variables = [tf.Variable(x) for x in inputs]
    with tf.GradientTape() as outer:
        with tf.GradientTape() as tape:
            out = program(tf, *variables)
            outs = list(out) if isinstance(out, (list, tuple)) else [out]
            loss = sum(_weighted(tf, y) for y in outs)
        grads = tape.gradient(loss, variables)
        norm = sum(tf.reduce_sum(g * g) for g in grads)
    if order == 2:
        return [g.numpy() for g in outer.gradient(norm, variables)]
    return [np.asarray(y.numpy()) for y in outs] + [g.numpy() for g in grads]


def _close(got, want, rtol=1e-4):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol * max(1.0, float(np.abs(w).max(initial=0))))


CASES = {
    "set_diag": (lambda tf, x, d: tf.linalg.set_diag(x, d), [X, f32(2, 3)]),
    "set_diag_above": (lambda tf, x, d: tf.linalg.set_diag(x, d, k=1), [X, f32(2, 3)]),
    "set_diag_below": (lambda tf, x, d: tf.linalg.set_diag(x, d, k=-1), [X, f32(2, 2)]),
    "tensor_diag": (lambda tf, d: tf.linalg.tensor_diag(d), [f32(2, 3)]),
    "tensor_diag_part": (lambda tf, x: tf.linalg.tensor_diag_part(x), [f32(2, 3, 2, 3)]),
    "cross": (lambda tf, a, b: tf.linalg.cross(a, b), [f32(2, 3), f32(2, 3)]),
    "tridiagonal_matmul": (lambda tf, d, x: tf.linalg.tridiagonal_matmul(d, x), [DIAGONALS, RHS]),
    "tridiagonal_matmul_sequence": (
        lambda tf, a, b, c, x: tf.linalg.tridiagonal_matmul([a, b, c], x, diagonals_format="sequence"),
        [f32(5), f32(5), f32(5), RHS[0]],
    ),
    "tridiagonal_matmul_matrix": (
        lambda tf, m, x: tf.linalg.tridiagonal_matmul(m, x, diagonals_format="matrix"),
        [f32(5, 5), RHS[0]],
    ),
    "tridiagonal_solve": (lambda tf, d, x: tf.linalg.tridiagonal_solve(d, x), [DIAGONALS, RHS]),
    "tridiagonal_solve_no_pivoting": (
        lambda tf, d, x: tf.linalg.tridiagonal_solve(d, x, partial_pivoting=False),
        [DIAGONALS, RHS],
    ),
    "tridiagonal_solve_pivoting_needed": (
        lambda tf, d, x: tf.linalg.tridiagonal_solve(d, x),
        [NEEDS_PIVOTING, RHS[0]],
    ),
    "tridiagonal_solve_vector": (lambda tf, d, x: tf.linalg.tridiagonal_solve(d, x), [DIAGONALS, RHS[..., 0]]),
    "tridiagonal_solve_transpose_rhs": (
        lambda tf, d, x: tf.linalg.tridiagonal_solve(d, tf.linalg.matrix_transpose(x), transpose_rhs=True),
        [DIAGONALS, RHS],
    ),
    "tridiagonal_solve_sequence_short": (
        lambda tf, a, b, c, x: tf.linalg.tridiagonal_solve([a, b, c], x, diagonals_format="sequence"),
        [f32(4), f32(5) + 6.0, f32(4), RHS[0]],
    ),
    "tridiagonal_solve_matrix": (
        lambda tf, m, x: tf.linalg.tridiagonal_solve(m, x, diagonals_format="matrix"),
        [f32(5, 5) + 5.0 * np.eye(5, dtype=np.float32), RHS[0]],
    ),
    "banded_lower": (lambda tf, b, x: tf.linalg.banded_triangular_solve(b, x), [BANDS, RHS[0, :4]]),
    "banded_upper_adjoint_broadcast": (
        lambda tf, b, x: tf.linalg.banded_triangular_solve(b[::-1], x, lower=False, adjoint=True),
        [BANDS, RHS[:, :4]],
    ),
    "normalize": (lambda tf, x: list(tf.linalg.normalize(x)), [X]),
    "normalize_axis_ord1": (lambda tf, x: list(tf.linalg.normalize(x, ord=1, axis=-1)), [X]),
    "global_norm": (lambda tf, a, b: tf.linalg.global_norm([a, None, b * 2.0]), [X, f32(3)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients_match_tensorflow(name):
    program, inputs = CASES[name]
    _close(_run(gtf, program, inputs), _run(tf_real, program, inputs))


@pytest.mark.parametrize("name", ["tridiagonal_solve", "tridiagonal_matmul", "banded_lower", "cross", "normalize"])
def test_second_derivatives_match_tensorflow(name):
    program, inputs = CASES[name]
    _close(_run(gtf, program, inputs, order=2), _run(tf_real, program, inputs, order=2), rtol=1e-3)


@pytest.mark.parametrize("name", ["tridiagonal_solve_pivoting_needed", "set_diag_above", "banded_lower"])
def test_inside_tf_function_matches_tensorflow(name):
    program, inputs = CASES[name]
    compiled = gtf.function(lambda *xs: program(gtf, *xs))
    _close(_run(gtf, lambda tf, *xs: compiled(*xs), inputs), _run(tf_real, program, inputs))


def test_complex_tridiagonal_values_match_tensorflow():
    rhs = (f32(4, 2) + 1j * f32(4, 2)).astype(np.complex64)
    for kw in ({}, {"conjugate_rhs": True}):
        want = tf_real.linalg.tridiagonal_solve(tf_real.constant(C), tf_real.constant(rhs), **kw).numpy()
        np.testing.assert_allclose(gtf.linalg.tridiagonal_solve(C, rhs, **kw).numpy(), want, rtol=1e-4, atol=1e-4)
    want = tf_real.linalg.tridiagonal_matmul(tf_real.constant(C), tf_real.constant(rhs)).numpy()
    np.testing.assert_allclose(gtf.linalg.tridiagonal_matmul(C, rhs).numpy(), want, rtol=1e-5, atol=1e-5)


I32 = np.ones((3, 4), np.int32)
BAD = {
    "set_diag_wrong_length": lambda tf: tf.linalg.set_diag(np.ones((2, 3), np.float32), [1.0, 2.0, 3.0], k=1),
    "set_diag_no_batch_broadcast": lambda tf: tf.linalg.set_diag(X, np.ones(3, np.float32)),
    "set_diag_vector": lambda tf: tf.linalg.set_diag(np.ones(3, np.float32), np.ones(3, np.float32)),
    "set_diag_k_outside": lambda tf: tf.linalg.set_diag(np.ones((3, 3), np.float32), np.ones(1, np.float32), k=3),
    "tensor_diag_scalar": lambda tf: tf.linalg.tensor_diag(np.float32(2.0)),
    "tensor_diag_bool": lambda tf: tf.linalg.tensor_diag(tf.constant([True])),
    "tensor_diag_part_odd_rank": lambda tf: tf.linalg.tensor_diag_part(np.ones((2, 3, 2), np.float32)),
    "tensor_diag_part_mismatch": lambda tf: tf.linalg.tensor_diag_part(np.ones((2, 3, 3, 2), np.float32)),
    "cross_broadcast": lambda tf: tf.linalg.cross(np.ones((2, 3), np.float32), np.ones(3, np.float32)),
    "cross_not_3": lambda tf: tf.linalg.cross(np.ones((2, 4), np.float32), np.ones((2, 4), np.float32)),
    "cross_complex": lambda tf: tf.linalg.cross(
        tf.constant([1, 2, 3], tf.complex64), tf.constant([3, 4, 5], tf.complex64)
    ),
    "tridiagonal_solve_int": lambda tf: tf.linalg.tridiagonal_solve(tf.constant(I32), tf.constant(I32[0][:, None])),
    "tridiagonal_solve_float16": lambda tf: tf.linalg.tridiagonal_solve(
        tf.constant(DIAGONALS[0], tf.float16), tf.constant(RHS[0], tf.float16)
    ),
    "tridiagonal_solve_rhs_rank": lambda tf: tf.linalg.tridiagonal_solve(
        tf.constant(DIAGONALS[0]), tf.constant(RHS[:, :, :, None])
    ),
    "tridiagonal_solve_batch": lambda tf: tf.linalg.tridiagonal_solve(
        tf.constant(DIAGONALS), tf.constant(f32(3, 5, 1))
    ),
    "tridiagonal_solve_not_3": lambda tf: tf.linalg.tridiagonal_solve(tf.constant(f32(4, 5)), tf.constant(RHS[0])),
    "tridiagonal_solve_format": lambda tf: tf.linalg.tridiagonal_solve(DIAGONALS, RHS, diagonals_format="banded"),
    "tridiagonal_solve_perturb_without_pivoting": lambda tf: tf.linalg.tridiagonal_solve(
        DIAGONALS, RHS, partial_pivoting=False, perturb_singular=True
    ),
    "tridiagonal_matmul_vector": lambda tf: tf.linalg.tridiagonal_matmul(DIAGONALS[0], tf.constant(RHS[0, :, 0])),
    "tridiagonal_matmul_batch": lambda tf: tf.linalg.tridiagonal_matmul(DIAGONALS[0], tf.constant(RHS)),
    "tridiagonal_matmul_short_sequence": lambda tf: tf.linalg.tridiagonal_matmul(
        [tf.ones(4), tf.ones(5), tf.ones(4)], tf.constant(RHS[0]), diagonals_format="sequence"
    ),
    "banded_vector_rhs": lambda tf: tf.linalg.banded_triangular_solve(BANDS, np.ones(4, np.float32)),
    "banded_int": lambda tf: tf.linalg.banded_triangular_solve(I32, tf.ones((4, 1), tf.int32)),
    "normalize_int": lambda tf: tf.linalg.normalize(tf.ones((2, 3), tf.int32)),
    "global_norm_of_a_tensor": lambda tf: tf.linalg.global_norm(tf.ones(3)),
    "global_norm_int": lambda tf: tf.linalg.global_norm([tf.ones(3, tf.int32)]),
    "global_norm_complex": lambda tf: tf.linalg.global_norm([tf.ones(3, tf.complex64)]),
    "global_norm_mixed_dtypes": lambda tf: tf.linalg.global_norm([tf.ones(3), tf.ones(3, tf.float16)]),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_inputs_tensorflow_refuses_raise_gradkit_errors(name):
    assert_refused_like_tensorflow(BAD[name], tf_real, gtf, r"tf\.linalg\.")
