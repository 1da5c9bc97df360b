"""tf.linalg at its edges, against TensorFlow (and NumPy where it has the same answer):
cholesky_solve broadcasting batch axes, norms and SVD-based functions of matrices with no
elements, and the refusals TensorFlow makes (transpose and adjoint together, products of
dtypes without a kernel, an einsum output that drops broadcast axes)."""

import numpy as np
import pytest

import gradkit.tf as gtf

CHOL = np.array([[2.0, 0.0], [1.0, 3.0]], np.float32)


@pytest.mark.parametrize(
    ("chol", "rhs"),
    [(CHOL, np.ones((2, 2, 1), np.float32)), (np.stack([CHOL, CHOL * 2.0]), np.eye(2, 3, dtype=np.float32))],
    ids=["rhs-batched", "chol-batched"],
)
def test_cholesky_solve_broadcasts_batch_axes(chol, rhs):
    got = gtf.linalg.cholesky_solve(chol, rhs).numpy()
    full = chol @ np.swapaxes(chol, -1, -2)
    np.testing.assert_allclose(got, np.linalg.solve(full, np.broadcast_to(rhs, got.shape)), rtol=1e-5)
    tf = pytest.importorskip("tensorflow")
    np.testing.assert_allclose(got, tf.linalg.cholesky_solve(chol, rhs).numpy(), rtol=1e-5)


EMPTY_SHAPES = [(0, 0), (2, 0, 0), (0, 3), (3, 0)]


def _empty_cases(tf, shape):
    x = np.zeros(shape, np.float32)
    cases = {f"norm ord={o}": lambda o=o: tf.norm(x, ord=o, axis=[-2, -1]) for o in (2, 1, np.inf, "fro")}
    cases["pinv"] = lambda: tf.linalg.pinv(x)
    cases["matrix_rank"] = lambda: tf.linalg.matrix_rank(x)
    if shape[-1] == shape[-2]:
        cases["sqrtm"] = lambda: tf.linalg.sqrtm(x)
    cases["vector inf-norm"] = lambda: tf.norm(x, ord=np.inf, axis=-1)
    return {name: np.asarray(f()) for name, f in cases.items()}


@pytest.mark.parametrize("shape", EMPTY_SHAPES, ids=str)
def test_matrices_with_no_elements_give_tensorflows_results(shape):
    got = _empty_cases(gtf, shape)
    # By hand: a norm of nothing is the max of nothing (-inf), except sums of nothing (0).
    assert got["norm ord=2"].shape == shape[:-2]
    tf = pytest.importorskip("tensorflow")
    for name, want in _empty_cases(tf, shape).items():
        assert got[name].shape == want.shape and got[name].dtype == want.dtype, name
        np.testing.assert_array_equal(got[name], want, err_msg=name)


def _refusals(tf):
    return {
        "matvec transpose and adjoint": lambda: tf.linalg.matvec(
            tf.ones((2, 2)), tf.ones(2), transpose_a=True, adjoint_a=True
        ),
        "bool matmul": lambda: tf.matmul(tf.ones((2, 2), tf.bool), tf.ones((2, 2), tf.bool)),
        "int8 matmul": lambda: tf.matmul(tf.ones((2, 2), tf.int8), tf.ones((2, 2), tf.int8)),
        "implicit output": lambda: tf.einsum("...ij,...jk", tf.ones((3, 2, 2)), tf.ones((3, 2, 2))),
        "output without ellipsis": lambda: tf.einsum("bi...,b...->bi", tf.ones((2, 3, 4)), tf.ones((2, 4))),
    }


@pytest.mark.parametrize("case", sorted(_refusals(gtf)))
def test_refused_as_tensorflow_refuses(case):
    with pytest.raises((ValueError, TypeError, gtf.errors.InvalidArgumentError), match=r"^\[gradkit\]"):
        _refusals(gtf)[case]()
    tf = pytest.importorskip("tensorflow")
    with pytest.raises((ValueError, TypeError, tf.errors.InvalidArgumentError, tf.errors.NotFoundError)):
        _refusals(tf)[case]()


def test_what_tensorflow_accepts_still_runs():
    ones = np.ones((3, 2, 2), np.float32)
    np.testing.assert_array_equal(gtf.einsum("...ij,...jk->...ik", ones, ones).numpy(), ones @ ones)
    np.testing.assert_array_equal(gtf.einsum("...ij,...jk", ones[0], ones[0]).numpy(), ones[0] @ ones[0])
    i8 = np.ones((2, 2), np.int8)
    product = gtf.matmul(i8, i8, output_type=gtf.int32)
    assert product.dtype == np.int32 and product.numpy().tolist() == [[2, 2], [2, 2]]
