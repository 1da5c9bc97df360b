"""The perm and l2_regularizer dtypes tf.linalg's LU and least-squares ops take: a batched int64
perm and a float32 tensor l2_regularizer with fast=False are refused, as TensorFlow refuses them;
an unbatched int64 perm and a Python or NumPy l2_regularizer are taken, as TensorFlow takes them."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from refusals import assert_gradkit_refusal, assert_refused_like_tensorflow

import gradkit.tf as gtf

A = np.array([[[4.0, 1.0], [2.0, 3.0]], [[1.0, 2.0], [3.0, 1.0]]], np.float32)
RHS = np.array([[[1.0], [2.0]], [[3.0], [-1.0]]], np.float32)


def _lu64(tf, as_tensor=True):
    lu, perm = tf.linalg.lu(A, output_idx_type=tf.int64)
    return lu, perm if as_tensor else np.asarray(perm)


@pytest.fixture(autouse=True)
def _x64():
    # gradkit.tf's int64 tensors are int64 only in jax's 64-bit mode.
    with jax.enable_x64(True):
        yield


REFUSED = {
    "lu_solve": lambda tf: tf.linalg.lu_solve(*_lu64(tf), RHS),
    "lu_matrix_inverse": lambda tf: tf.linalg.lu_matrix_inverse(*_lu64(tf)),
    "lu_reconstruct": lambda tf: tf.linalg.lu_reconstruct(*_lu64(tf)),
    "lstsq_float32_tensor_regularizer": lambda tf: tf.linalg.lstsq(A, RHS, l2_regularizer=tf.constant(0.5), fast=False),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_with_a_gradkit_error(name):
    assert_gradkit_refusal(lambda: REFUSED[name](gtf), Exception, r"tf\.linalg\.")


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_as_tensorflow_refuses(name):
    assert_refused_like_tensorflow(REFUSED[name], pytest.importorskip("tensorflow"), gtf, r"tf\.linalg\.")


def _taken(tf):
    lu, perm = _lu64(tf)
    _, batched = _lu64(tf, as_tensor=False)
    return [
        tf.linalg.lu_reconstruct(lu, batched),  # a NumPy int64 array is converted to int32
        tf.linalg.lu_solve(lu[0], perm[0], RHS[0]),
        tf.linalg.lu_matrix_inverse(lu[1], perm[1]),
        tf.linalg.lu_reconstruct(lu[0], perm[0]),
        tf.linalg.lstsq(A, RHS, l2_regularizer=0.5, fast=False),
        tf.linalg.lstsq(A, RHS, l2_regularizer=np.float32(0.5), fast=False),
    ]


def test_unbatched_int64_perm_and_number_regularizers_are_taken():
    got = _taken(gtf)
    np.testing.assert_allclose(got.pop(0).numpy(), A, rtol=1e-5)
    np.testing.assert_allclose(got[0].numpy(), np.linalg.solve(A[0], RHS[0]), rtol=1e-5)
    np.testing.assert_allclose(got[1].numpy(), np.linalg.inv(A[1]), rtol=1e-5)
    np.testing.assert_allclose(got[2].numpy(), A[0], rtol=1e-5)
    np.testing.assert_allclose(got[3].numpy(), np.linalg.solve(A, RHS), rtol=1e-4)  # fast=False ignores l2
    np.testing.assert_allclose(got[4].numpy(), got[3].numpy())


def test_the_same_calls_in_tensorflow():
    tf = pytest.importorskip("tensorflow")
    for g, w in zip(_taken(gtf), _taken(tf)):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.filterwarnings("ignore:Explicitly requested dtype float64:UserWarning")  # jax, without x64
def test_a_float64_tensor_regularizer_is_taken_with_or_without_x64():
    # Without x64 a float64 tensor is float32 in gradkit.tf: it cannot be told from a float32 one,
    # so it is taken, as TensorFlow takes the float64 tensor the program wrote.
    want = np.linalg.solve(A, RHS)
    for x64 in (True, False):
        with jax.enable_x64(x64):
            l2 = gtf.constant(0.5, gtf.float64)
            got = gtf.linalg.lstsq(A, RHS, l2_regularizer=l2, fast=False)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-4)
    tf = pytest.importorskip("tensorflow")
    theirs = tf.linalg.lstsq(A, RHS, l2_regularizer=tf.constant(0.5, tf.float64), fast=False)
    np.testing.assert_allclose(theirs.numpy(), want, rtol=1e-4)
