"""tf.linalg.set_diag, tensor_diag, tensor_diag_part, cross, tridiagonal_solve,
tridiagonal_matmul, banded_triangular_solve, normalize, global_norm, eye and l2_normalize
without TensorFlow: values against NumPy on dense matrices, gradients through Variables
against JAX rewrites or finite differences, tf.function against eager, and refused inputs."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads
from refusals import assert_gradkit_refusal

import gradkit.tf as gtf

RNG = np.random.default_rng(3)
TOL = dict(rtol=1e-4, atol=1e-4)


def f32(*shape):
    return RNG.normal(size=shape).astype(np.float32)


def dense(diagonals):
    """The tridiagonal matrix of compact diagonals [3, M] (the two unread corners left out)."""
    sup, main, sub = diagonals
    return np.diag(main) + np.diag(sup[:-1], 1) + np.diag(sub[1:], -1)


DIAGONALS = f32(3, 5)
DIAGONALS[0, -1] = DIAGONALS[2, 0] = np.nan  # never read
RHS = f32(5, 2)


def tape_gradient(fn, *inputs):
    variables = [gtf.Variable(x) for x in inputs]
    with gtf.GradientTape() as tape:
        loss = fn(*variables)
    return [None if g is None else g.numpy() for g in tape.gradient(loss, variables)]


def test_set_diag_writes_one_diagonal():
    x, d = f32(2, 3, 4), f32(2, 3)
    want = x.copy()
    want[:, [0, 1, 2], [1, 2, 3]] = d
    np.testing.assert_array_equal(gtf.linalg.set_diag(x, d, k=1).numpy(), want)
    want = x.copy()
    want[:, [1, 2], [0, 1]] = d[:, :2]
    np.testing.assert_array_equal(gtf.linalg.set_diag(x, d[:, :2], k=(-1, -1)).numpy(), want)
    gx, gd = tape_gradient(lambda x, d: gtf.reduce_sum(gtf.linalg.set_diag(x, d) * 2.0), x, d)
    mask = np.ones_like(x)
    mask[:, [0, 1, 2], [0, 1, 2]] = 0.0
    np.testing.assert_array_equal(gx, 2.0 * mask)
    np.testing.assert_array_equal(gd, np.full_like(d, 2.0))
    assert gtf.linalg.set_diag(np.zeros((2, 2), np.int32), [1, 2]).dtype == np.int32


def test_set_diag_writes_a_band_of_diagonals():
    # k=(lower, upper): the upper diagonal first; "RIGHT_LEFT" pads the subdiagonal on the right.
    got = gtf.linalg.set_diag(np.zeros((3, 3), np.float32), [[1.0, 2.0, 3.0], [4.0, 5.0, 9.0]], k=(-1, 0))
    np.testing.assert_array_equal(got.numpy(), [[1.0, 0.0, 0.0], [4.0, 2.0, 0.0], [0.0, 5.0, 3.0]])


def test_tensor_diag_and_diag_part():
    d = f32(2, 3)
    out = gtf.linalg.tensor_diag(d).numpy()
    want = np.zeros((2, 3, 2, 3), np.float32)
    for i in range(2):
        for j in range(3):
            want[i, j, i, j] = d[i, j]
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(gtf.linalg.tensor_diag_part(want).numpy(), d)
    assert gtf.linalg.tensor_diag_part(np.float32(2.0)).numpy() == 2.0
    (g,) = tape_gradient(lambda x: gtf.reduce_sum(gtf.linalg.tensor_diag_part(x) * d), want)
    np.testing.assert_array_equal(g, want)


def test_cross_against_numpy():
    a, b = f32(4, 3), f32(4, 3)
    np.testing.assert_allclose(gtf.linalg.cross(a, b).numpy(), np.cross(a, b), **TOL)
    assert gtf.linalg.cross([1, 0, 0], [0, 1, 0]).numpy().tolist() == [0, 0, 1]
    check_grads(gtf.linalg.cross, (jnp.asarray(a), jnp.asarray(b)), order=2)


def test_tridiagonal_matmul_against_the_dense_matrix():
    np.testing.assert_allclose(gtf.linalg.tridiagonal_matmul(DIAGONALS, RHS).numpy(), dense(DIAGONALS) @ RHS, **TOL)
    matrix = f32(5, 5)
    band = np.triu(np.tril(matrix, 1), -1)
    np.testing.assert_allclose(
        gtf.linalg.tridiagonal_matmul(matrix, RHS, diagonals_format="matrix").numpy(), band @ RHS, **TOL
    )
    gd, gx = tape_gradient(lambda d, x: gtf.reduce_sum(gtf.linalg.tridiagonal_matmul(d, x)), DIAGONALS, RHS)
    assert gd[0, -1] == gd[2, 0] == 0.0  # the unread corners get no gradient (nor NaN)
    np.testing.assert_allclose(gx, dense(DIAGONALS).T @ np.ones_like(RHS), **TOL)


@pytest.mark.parametrize("pivoting", [True, False])
def test_tridiagonal_solve_against_the_dense_solve(pivoting):
    d = DIAGONALS.copy()
    d[1] += 4.0 * np.sign(d[1])
    got = gtf.linalg.tridiagonal_solve(d, RHS, partial_pivoting=pivoting).numpy()
    np.testing.assert_allclose(got, np.linalg.solve(dense(d), RHS), **TOL)
    np.testing.assert_allclose(
        gtf.linalg.tridiagonal_solve(d, RHS[:, 0]).numpy(), np.linalg.solve(dense(d), RHS[:, 0]), **TOL
    )
    np.testing.assert_allclose(
        gtf.linalg.tridiagonal_solve(d, RHS.T, transpose_rhs=True).numpy(), np.linalg.solve(dense(d), RHS), **TOL
    )


def test_tridiagonal_solve_pivots_past_a_zero_diagonal_entry():
    d = np.nan_to_num(DIAGONALS)
    d[1, 0] = 0.0
    np.testing.assert_allclose(gtf.linalg.tridiagonal_solve(d, RHS).numpy(), np.linalg.solve(dense(d), RHS), **TOL)
    batch = np.stack([d, d * 2.0])
    want = np.stack([np.linalg.solve(dense(m), RHS) for m in batch])
    np.testing.assert_allclose(gtf.linalg.tridiagonal_solve(batch, np.stack([RHS, RHS])).numpy(), want, **TOL)


def test_tridiagonal_solve_sequence_format_pads_short_diagonals():
    d = np.nan_to_num(DIAGONALS) + np.array([[0.0], [5.0], [0.0]], np.float32)
    got = gtf.linalg.tridiagonal_solve([d[0, :-1], d[1], d[2, 1:]], RHS, diagonals_format="sequence")
    np.testing.assert_allclose(got.numpy(), np.linalg.solve(dense(d), RHS), **TOL)


def test_tridiagonal_solve_gradients_against_the_dense_solve():
    d = np.nan_to_num(DIAGONALS) + np.array([[0.0], [4.0], [0.0]], np.float32)

    def via_dense(diagonals, rhs):
        matrix = jnp.diag(diagonals[1]) + jnp.diag(diagonals[0, :-1], 1) + jnp.diag(diagonals[2, 1:], -1)
        return jnp.sum(jnp.real(jnp.cos(jnp.linalg.solve(matrix, rhs))))

    got = tape_gradient(lambda d, x: gtf.reduce_sum(gtf.cos(gtf.linalg.tridiagonal_solve(d, x))), d, RHS)
    want = jax.grad(via_dense, argnums=(0, 1))(d, RHS)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, **TOL)

    v = gtf.Variable(d)  # second order: the gradient of the gradient's squared norm
    with gtf.GradientTape() as outer:
        with gtf.GradientTape() as inner:
            loss = gtf.reduce_sum(gtf.cos(gtf.linalg.tridiagonal_solve(v, RHS)))
        norm = gtf.reduce_sum(inner.gradient(loss, v) ** 2)
    want = jax.grad(lambda d: jnp.sum(jax.grad(via_dense)(d, RHS) ** 2))(d)
    np.testing.assert_allclose(outer.gradient(norm, v).numpy(), want, rtol=1e-3, atol=1e-3)

    # Complex: the gradient of the holomorphic solve, in TensorFlow's convention (the conjugate
    # of JAX's); TensorFlow's own transposes without conjugating and differs.
    c = (d + 1j * np.nan_to_num(DIAGONALS)).astype(np.complex64)
    rhs = RHS.astype(np.complex64)
    (got,) = tape_gradient(lambda c: gtf.math.real(gtf.reduce_sum(gtf.cos(gtf.linalg.tridiagonal_solve(c, rhs)))), c)
    np.testing.assert_allclose(got, np.conj(jax.grad(via_dense)(c, rhs)), **TOL)


def test_tridiagonal_solve_perturb_singular_is_not_implemented():
    with pytest.raises(NotImplementedError, match=r"^\[gradkit\] tf.linalg.tridiagonal_solve\(perturb_singular"):
        gtf.linalg.tridiagonal_solve(DIAGONALS, RHS, perturb_singular=True)


@pytest.mark.parametrize("lower", [True, False])
def test_banded_triangular_solve_against_the_dense_solve(lower):
    bands = f32(2, 4)
    bands[0 if lower else 1] += 3.0
    if lower:  # LEFT_RIGHT: the subdiagonal is bands[1, 1:]
        matrix = np.diag(bands[0]) + np.diag(bands[1, 1:], -1)
    else:  # the superdiagonal is bands[0, :-1], the diagonal the last row
        matrix = np.diag(bands[1]) + np.diag(bands[0, :-1], 1)
    rhs = f32(4, 3)
    got = gtf.linalg.banded_triangular_solve(bands, rhs, lower=lower)
    np.testing.assert_allclose(got.numpy(), np.linalg.solve(matrix, rhs), **TOL)
    got = gtf.linalg.banded_triangular_solve(bands, rhs, lower=lower, adjoint=True)
    np.testing.assert_allclose(got.numpy(), np.linalg.solve(matrix.T, rhs), **TOL)
    check_grads(
        lambda b, r: gtf.linalg.banded_triangular_solve(b, r, lower=lower), (bands, rhs), order=2, atol=2e-2, rtol=2e-2
    )


def test_normalize_global_norm_and_aliases():
    x = f32(2, 3)
    unit, norm = gtf.linalg.normalize(x, axis=1)
    np.testing.assert_allclose(norm.numpy(), np.linalg.norm(x, axis=1, keepdims=True), **TOL)
    np.testing.assert_allclose(unit.numpy(), x / np.linalg.norm(x, axis=1, keepdims=True), **TOL)
    unit, norm = gtf.linalg.normalize(x.astype(np.complex64))
    assert unit.dtype == norm.dtype == np.complex64 and norm.shape == (1, 1)
    (g,) = tape_gradient(lambda v: gtf.reduce_sum(gtf.linalg.normalize(v, ord=1)[0] * x), x)
    np.testing.assert_allclose(g, jax.grad(lambda v: jnp.sum(v / jnp.sum(jnp.abs(v)) * x))(x), **TOL)

    y = f32(4)
    assert float(gtf.linalg.global_norm([x, None, y])) == pytest.approx(np.sqrt((x**2).sum() + (y**2).sum()), 1e-5)
    slices = gtf.IndexedSlices(gtf.constant(y), gtf.constant([0, 2, 3, 5]))
    assert float(gtf.linalg.global_norm([slices])) == pytest.approx(np.linalg.norm(y), 1e-5)
    assert float(gtf.linalg.global_norm([])) == 0.0
    gx, gy = tape_gradient(lambda a, b: gtf.linalg.global_norm([a, b]), x, y)
    total = np.sqrt((x**2).sum() + (y**2).sum())
    np.testing.assert_allclose(gx, x / total, **TOL)
    np.testing.assert_allclose(gy, y / total, **TOL)

    assert gtf.linalg.eye(2, 3, batch_shape=[4]).shape == (4, 2, 3)
    np.testing.assert_allclose(gtf.linalg.l2_normalize([3.0, 4.0]).numpy(), [0.6, 0.8], **TOL)


def test_inside_tf_function_matches_eager():
    d = np.nan_to_num(DIAGONALS)
    d[1, 0] = 0.0

    def program(diagonals, x):
        return gtf.reduce_sum(gtf.cos(gtf.linalg.tridiagonal_solve(diagonals, x))) + gtf.reduce_sum(
            gtf.linalg.set_diag(gtf.linalg.tridiagonal_matmul(diagonals, x), [1.0, 2.0], k=-1)
        )

    eager = tape_gradient(program, d, RHS)
    traced = tape_gradient(gtf.function(program), d, RHS)
    for e, t in zip(eager, traced):
        np.testing.assert_allclose(t, e, **TOL)


BAD = {
    "set_diag_shape": (lambda: gtf.linalg.set_diag(np.ones((2, 3), np.float32), [1.0, 2.0, 3.0], k=1), ValueError),
    "set_diag_dtype": (lambda: gtf.linalg.set_diag(np.ones((2, 2), np.float32), np.ones(2, np.int32)), TypeError),
    "tensor_diag_bool": (lambda: gtf.linalg.tensor_diag([True]), TypeError),
    "tensor_diag_part_shape": (lambda: gtf.linalg.tensor_diag_part(np.ones((2, 3), np.float32)), ValueError),
    "cross_shape": (lambda: gtf.linalg.cross(np.ones((2, 3), np.float32), np.ones(3, np.float32)), ValueError),
    "tridiagonal_solve_rows": (lambda: gtf.linalg.tridiagonal_solve(DIAGONALS, RHS[:4]), ValueError),
    "tridiagonal_solve_format": (lambda: gtf.linalg.tridiagonal_solve(DIAGONALS, RHS, "banded"), ValueError),
    "tridiagonal_solve_int": (lambda: gtf.linalg.tridiagonal_solve(np.ones((3, 4), np.int32), [1, 2, 3, 4]), TypeError),
    "tridiagonal_matmul_vector": (lambda: gtf.linalg.tridiagonal_matmul(DIAGONALS, RHS[:, 0]), ValueError),
    "banded_vector": (lambda: gtf.linalg.banded_triangular_solve(DIAGONALS[:2], RHS[:, 0]), ValueError),
    "normalize_int": (lambda: gtf.linalg.normalize([1, 2]), TypeError),
    "global_norm_tensor": (lambda: gtf.linalg.global_norm(gtf.ones(3)), TypeError),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_refused_inputs_raise_gradkit_errors(name):
    call, error = BAD[name]
    assert_gradkit_refusal(call, error, r"tf\.linalg\.")
