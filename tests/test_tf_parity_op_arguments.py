"""Arguments TensorFlow reads in a way jax would not: ``tf.gather``'s negative ``axis`` and
``batch_dims``, ``tf.complex`` broadcasting its operands, and the shapes and dtypes that
``tf.nn.bias_add`` and ``tf.tensor_scatter_nd_*`` refuse (jax would broadcast or cast them).
NumPy oracles, and real TensorFlow where it is installed."""

from __future__ import annotations

import numpy as np
import pytest

import gradkit as gk
import gradkit.tf as gtf

P = np.arange(24, dtype=np.float32).reshape(2, 4, 3)
IDX = np.array([[2, 0], [1, 2]], np.int32)


def test_gather_with_batch_dims_and_a_negative_axis():
    got = gtf.gather(P, IDX, axis=-1, batch_dims=1).numpy()
    want = np.stack([P[b][:, IDX[b]] for b in range(2)])  # per batch, columns of the last axis
    np.testing.assert_array_equal(got, want)
    rows = gtf.gather(P, IDX, axis=1, batch_dims=-1).numpy()  # batch_dims counted from rank(indices)
    np.testing.assert_array_equal(rows, np.stack([P[b][IDX[b]] for b in range(2)]))
    v = gtf.Variable(P)
    with gtf.GradientTape() as tape:
        y = gtf.reduce_sum(gtf.gather(v, IDX, axis=-1, batch_dims=1))
    want = np.zeros_like(P)
    for b in range(2):
        for j in IDX[b]:
            want[b, :, j] += 1.0
    np.testing.assert_array_equal(tape.gradient(y, v).numpy(), want)
    with pytest.raises(gk.GradkitError, match="batch_dims"):
        gtf.gather(P, IDX, axis=0, batch_dims=1)


def test_complex_broadcasts_its_operands():
    got = gtf.complex(gtf.ones([3, 2]), gtf.constant([5.0, 6.0])).numpy()
    np.testing.assert_array_equal(got, np.ones((3, 2)) + 1j * np.array([5.0, 6.0]))


@pytest.mark.parametrize(
    "value, bias",
    [((1, 4, 4, 3), (1,)), ((3,), (3,)), ((1, 4, 4, 3), (4,)), ((1, 4, 4, 3), (1, 3))],
    ids=["bias_of_one", "rank_1_value", "bias_of_the_wrong_size", "rank_2_bias"],
)
def test_bias_add_refuses_what_tensorflow_refuses(value, bias):
    with pytest.raises(ValueError, match=r"^\[gradkit\] tf.nn.bias_add"):
        gtf.nn.bias_add(np.ones(value, np.float32), np.ones(bias, np.float32))


@pytest.mark.parametrize(
    "op, updates",
    [
        ("tensor_scatter_nd_sub", np.ones(2, np.float32)),
        ("tensor_scatter_nd_add", np.float32(1.0)),
        ("tensor_scatter_nd_update", np.float32(1.0)),
        ("tensor_scatter_nd_add", gtf.ones((1, 2), gtf.int32)),
        ("tensor_scatter_nd_max", np.ones((1, 3), np.float32)),
    ],
    ids=["sub_rank", "add_scalar", "update_scalar", "add_int32", "max_width"],
)
def test_tensor_scatter_refuses_updates_of_another_shape_or_dtype(op, updates):
    tensor = gtf.Variable(np.zeros((3, 2), np.float32))
    with pytest.raises(ValueError, match=rf"^\[gradkit\] tf.{op}"):
        getattr(gtf, op)(tensor, [[1]], updates)
    np.testing.assert_array_equal(tensor.numpy(), np.zeros((3, 2)))


def test_the_same_calls_in_tensorflow():
    tf = pytest.importorskip("tensorflow")
    for program in (
        lambda tf: tf.gather(P, IDX, axis=-1, batch_dims=1),
        lambda tf: tf.gather(P, IDX, axis=1, batch_dims=-1),
        lambda tf: tf.complex(tf.ones([3, 2]), tf.constant([5.0, 6.0])),
    ):
        np.testing.assert_array_equal(program(gtf).numpy(), program(tf).numpy())
    for value, bias in [((1, 4, 4, 3), (1,)), ((3,), (3,))]:
        with pytest.raises(tf.errors.InvalidArgumentError):
            tf.nn.bias_add(np.ones(value, np.float32), np.ones(bias, np.float32))
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.tensor_scatter_nd_add(tf.zeros([3, 2]), [[1]], tf.ones((1, 2), tf.int32))
    # NumPy updates take the tensor's dtype, in both
    for lib in (tf, gtf):
        got = lib.tensor_scatter_nd_add(lib.zeros([3, 2]), [[1]], np.ones((1, 2), np.int32))
        np.testing.assert_array_equal(got.numpy(), [[0, 0], [1, 1], [0, 0]])


@pytest.mark.parametrize("value", ["abc", ["a", "b"], np.array(["x", "y"])], ids=["str", "list", "numpy"])
def test_strings_are_refused_with_a_clear_error(value):
    with pytest.raises(gk.GradkitError, match="no string tensors"):
        gtf.constant(value)
