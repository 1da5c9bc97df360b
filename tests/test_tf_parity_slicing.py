"""tf.scatter_nd and tf.strided_slice: values, gradients, shapes and errors against real
TensorFlow; inside tf.function; and through a Variable assignment against a pure-JAX rewrite
(where real TensorFlow gives None)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
from test_tf_parity import run_both  # noqa: E402
from test_tf_parity import run_both_ok as _ok  # noqa: E402

import gradkit.tf as gtf  # noqa: E402
from gradkit import GradkitError  # noqa: E402

X = np.cos(np.arange(60, dtype=np.float32)).reshape(3, 4, 5)
U = np.sin(np.arange(1, 13, dtype=np.float32)).reshape(3, 4)


def _weighted_sum(tf, y):
    w = np.cos(np.arange(int(np.prod(y.shape)), dtype=np.float32) * 0.7).reshape(tuple(y.shape))
    return tf.reduce_sum(y * tf.constant(w))


def _with_gradient(f, x=X):
    def program(tf):
        xv = tf.Variable(x)
        with tf.GradientTape() as tape:
            y = f(tf, xv)
            loss = _weighted_sum(tf, y)
        return [y, tf.convert_to_tensor(tape.gradient(loss, xv))]

    return program


STRIDED = {
    "plain": lambda tf, x: tf.strided_slice(x, [0, 1, 0], [2, 3, 5]),
    "strides": lambda tf, x: tf.strided_slice(x, [0, 0, 0], [3, 4, 5], [2, 1, 2]),
    "negative_stride": lambda tf, x: tf.strided_slice(x, [2, 3], [0, 0], [-1, -2]),
    "negative_stride_masks": lambda tf, x: tf.strided_slice(x, [0, 0], [0, 0], [-1, -1], begin_mask=3, end_mask=3),
    "negative_begin_end": lambda tf, x: tf.strided_slice(x, [-2, -3], [-1, -1]),
    "out_of_range_clamps": lambda tf, x: tf.strided_slice(x, [-10, 1], [10, 100], [1, 2]),
    "begin_end_masks": lambda tf, x: tf.strided_slice(x, [1, 2, 3], [2, 3, 4], begin_mask=0b101, end_mask=0b010),
    "shrink": lambda tf, x: tf.strided_slice(x, [1, 0, -1], [2, 4, 0], [1, 1, 1], shrink_axis_mask=0b101),
    "shrink_negative": lambda tf, x: tf.strided_slice(x, [-1], [0], shrink_axis_mask=1),
    "new_axis": lambda tf, x: tf.strided_slice(x, [0, 0, 1], [0, 2, 3], new_axis_mask=1),
    "ellipsis": lambda tf, x: tf.strided_slice(x, [0, 1], [0, 4], [1, 2], ellipsis_mask=1),
    "ellipsis_middle_new_axis": lambda tf, x: tf.strided_slice(
        x, [1, 0, 0, 2], [3, 0, 0, 4], [1, 1, 1, 1], ellipsis_mask=0b0010, new_axis_mask=0b0100
    ),
    "ellipsis_shrink": lambda tf, x: tf.strided_slice(x, [0, 2], [0, 3], ellipsis_mask=1, shrink_axis_mask=2),
    "empty": lambda tf, x: tf.strided_slice(x, [2], [1]),
    "tensor_arguments": lambda tf, x: tf.strided_slice(
        x, tf.constant([0, 1]), tf.constant([3, 4]), tf.constant([2, 2])
    ),
}


@pytest.mark.parametrize("name", sorted(STRIDED))
def test_strided_slice_values_and_gradients_match_tensorflow(name):
    _ok(_with_gradient(STRIDED[name]))


def _scatter_program(f):
    def program(tf):
        u = tf.Variable(U)
        with tf.GradientTape() as tape:
            y = f(tf, u)
            loss = _weighted_sum(tf, y)
        return [y, tape.gradient(loss, u)]

    return program


SCATTER = {
    "rows": lambda tf, u: tf.scatter_nd([[2], [0], [4]], u, [5, 4]),
    "entries_with_duplicates": lambda tf, u: tf.scatter_nd([[1, 1], [0, 2], [1, 1]], u[:, 0], tf.constant([3, 3])),
    "batched_indices": lambda tf, u: tf.scatter_nd([[[0], [2]], [[2], [3]]], tf.reshape(u, [2, 2, 3]), [4, 3]),
    "vector": lambda tf, u: tf.scatter_nd([[3], [1]], u[0, :2], [6]),
    "integers": lambda tf, u: tf.cast(tf.scatter_nd([[3], [1]], [7, 8], [5]), tf.float32) * u[0, 0],
}


@pytest.mark.parametrize("name", sorted(SCATTER))
def test_scatter_nd_values_and_gradients_match_tensorflow(name):
    _ok(_scatter_program(SCATTER[name]))


def test_inside_tf_function_match_tensorflow():
    def program(tf):
        x, u = tf.Variable(X), tf.Variable(U)

        @tf.function
        def forward():
            s = tf.strided_slice(x, [0, 3, 0], [3, 0, 5], [1, -1, 2], shrink_axis_mask=0)
            return tf.scatter_nd([[1], [0], [2]], u, [4, 4]) + tf.reduce_sum(s)

        with tf.GradientTape() as tape:
            y = forward()
            loss = _weighted_sum(tf, y)
        return [y, tape.gradient(loss, [x, u])]

    _ok(program)


def test_the_gradient_through_an_assigned_variable_is_exact():
    """A Variable assigned from another one, then sliced and scattered: TensorFlow gives None."""

    def pure(source):
        v = jnp.tanh(source) * 2.0
        rows = v[::-1, 0, 1:4:2]  # strided_slice(v, [-1, 0, 1], [-4, 0, 4], [-1, 1, 2], shrink bit 1)
        return jnp.sum(jnp.sin(jnp.zeros((5, 2)).at[jnp.array([4, 0, 2])].add(rows)))

    source, v = gtf.Variable(X), gtf.Variable(np.zeros_like(X))
    with gtf.GradientTape() as tape:
        v.assign(gtf.tanh(source) * 2.0)
        rows = gtf.strided_slice(v, [-1, 0, 1], [-4, 0, 4], [-1, 1, 2], end_mask=1, shrink_axis_mask=2)
        loss = gtf.reduce_sum(gtf.sin(gtf.scatter_nd([[4], [0], [2]], rows, [5, 2])))
    np.testing.assert_allclose(loss.numpy(), pure(jnp.asarray(X)), rtol=1e-5)
    np.testing.assert_allclose(tape.gradient(loss, source).numpy(), jax.grad(pure)(jnp.asarray(X)), rtol=1e-5)


BAD = {
    "strided_lengths": lambda tf: tf.strided_slice(tf.constant(X), [0, 0], [1]),
    "strided_zero_stride": lambda tf: tf.strided_slice(tf.constant(X), [0], [2], [0]),
    "strided_shrink_out_of_range": lambda tf: tf.strided_slice(tf.constant(X), [3], [4], shrink_axis_mask=1),
    "strided_too_many_positions": lambda tf: tf.strided_slice(tf.constant(X), [0] * 4, [1] * 4),
    "scatter_index_out_of_range": lambda tf: tf.scatter_nd([[5]], [1.0], [5]),
    "scatter_negative_index": lambda tf: tf.scatter_nd([[-1]], [1.0], [5]),
    "scatter_updates_shape": lambda tf: tf.scatter_nd([[1], [2]], [[1.0, 2.0]], [5, 2]),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_arguments_raise_as_in_tensorflow_with_a_gradkit_message(name):
    assert isinstance(run_both(BAD[name]), Exception)
    with pytest.raises(Exception, match=r"^\[gradkit\] tf\.(strided_slice|scatter_nd)"):
        BAD[name](gtf)


def test_two_ellipses_are_a_gradkit_error():
    with pytest.raises(GradkitError, match="one ellipsis"):
        gtf.strided_slice(X, [0, 0], [1, 1], ellipsis_mask=3)
