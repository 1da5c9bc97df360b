"""Inputs an op cannot take (shapes that do not broadcast or contract, a non-square matrix, an
axis out of range) raise a ``[gradkit]`` error that names the op and what came in, of the kind
JAX and TensorFlow raise (ValueError/TypeError), and leave every Variable unchanged. Real
TensorFlow, where installed, confirms that it refuses the same inputs."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

import gradkit as gk
import gradkit.numpy as gnp
import gradkit.tf as gtf

A23 = np.ones((2, 3), np.float32)
A24 = np.ones((2, 4), np.float32)
V3 = np.ones((3,), np.float32)
V4 = np.ones((4,), np.float32)

# (name in the message, the call on a module that is gradkit.tf or TensorFlow)
TF_CASES = {
    "the operator +": lambda tf: tf.constant(A23) + tf.constant(V4),
    "tf.matmul": lambda tf: tf.matmul(tf.constant(A23), tf.constant(A23)),
    "tf.linalg.inv": lambda tf: tf.linalg.inv(tf.constant(A23)),
    "tf.linalg.det": lambda tf: tf.linalg.det(tf.constant(V3)),
    "tf.linalg.trace": lambda tf: tf.linalg.trace(tf.constant(V3)),
    "tf.reshape": lambda tf: tf.reshape(tf.constant(A23), (4,)),
    "tf.concat": lambda tf: tf.concat([tf.constant(A23), tf.constant(A24)], 0),
    "tf.transpose": lambda tf: tf.transpose(tf.constant(A23), [0, 0]),
    "tf.reduce_sum": lambda tf: tf.reduce_sum(tf.constant(A23), axis=5),
    "tf.einsum": lambda tf: tf.einsum("ij,jk->ik", tf.constant(A23), tf.constant(A23)),
}


@pytest.mark.parametrize("what", sorted(TF_CASES))
def test_gradkit_tf_names_the_op_and_its_inputs(what):
    with pytest.raises((ValueError, TypeError)) as info:
        TF_CASES[what](gtf)
    message = str(info.value)
    assert isinstance(info.value, gk.GradkitError)
    assert message.startswith(f"[gradkit] {what}")
    assert "float32[" in message or "shape (" in message  # what came in


@pytest.mark.parametrize("what", sorted(TF_CASES))
def test_tensorflow_refuses_the_same_inputs(what):
    tf_real = pytest.importorskip("tensorflow")
    with pytest.raises((ValueError, TypeError, tf_real.errors.InvalidArgumentError)):
        TF_CASES[what](tf_real)


def test_the_message_says_what_came_in_and_why():
    with pytest.raises(TypeError) as info:
        gtf.reshape(gtf.constant(A23), (4,))
    assert str(info.value).startswith("[gradkit] tf.reshape cannot take float32[2,3]: ")
    assert "(size 6) into shape (4,)" in str(info.value)
    with pytest.raises(TypeError, match=r"tf.concat cannot take a list \[float32\[2,3\], float32\[2,4\]\]"):
        gtf.concat([gtf.constant(A23), gtf.constant(A24)], 0)


def test_recorded_ops_and_gk_numpy_raise_the_same_way_and_leave_variables_unchanged():
    v = gk.Variable(jnp.ones((2, 3)))
    before = np.asarray(v.value)
    with gk.GradientTape() as tape:
        with pytest.raises(ValueError, match=r"^\[gradkit\] the operator \* cannot take float32\[2,3\], float32\[4\]"):
            v * jnp.ones(4)
        with pytest.raises(TypeError, match=r"^\[gradkit\] gk.numpy.matmul cannot take float32\[2,3\], float32\[2,3\]"):
            gnp.matmul(v, v)
        with pytest.raises(ValueError, match=r"^\[gradkit\] gk.numpy.sum cannot take"):
            gnp.sum(v, axis=4)
        y = gnp.sum(v * 2.0)  # the tape still records after the failed ops
    np.testing.assert_array_equal(np.asarray(v.value), before)
    np.testing.assert_array_equal(np.asarray(tape.gradient(y, v)), np.full((2, 3), 2.0, np.float32))


def test_inside_tf_function_the_error_is_the_same():
    v = gtf.Variable(A23)

    @gtf.function
    def f():
        v.assign(v * 2.0)
        return gtf.matmul(v, v)

    with pytest.raises(TypeError, match=r"^\[gradkit\] tf.matmul cannot take float32\[2,3\], float32\[2,3\]"):
        f()
    np.testing.assert_array_equal(v.numpy(), A23)


def test_tracing_errors_of_jax_pass_through_unchanged():
    import jax

    @jax.jit
    def f(x):
        return gnp.zeros(int(x))  # a traced value used as a Python int

    with pytest.raises(jax.errors.ConcretizationTypeError):
        f(3.0)


FLOAT_ONLY = [
    "sin", "cos", "tan", "tanh", "sinh", "cosh", "exp", "log", "log1p", "expm1", "sqrt", "rsqrt", "softplus",
    "sigmoid", "reciprocal", "asin", "acos", "atan", "log_sigmoid", "erf", "lgamma", "digamma", "is_nan",
    "is_finite", "softmax", "log_softmax",
]  # fmt: skip


@pytest.mark.parametrize("name", FLOAT_ONLY)
def test_float_only_math_refuses_integers_and_takes_floats(name):
    op = getattr(gtf.math, name)
    with pytest.raises(
        TypeError, match=rf"^\[gradkit\] tf\.(math|nn)\.{name} takes (a tensor of dtype|floating-point) .* int32"
    ):
        op(gtf.constant([1, 2]))
    with pytest.raises(TypeError, match=r"int32"):
        op([1, 2])  # a Python list of ints is int32, as in TensorFlow
    x = np.array([0.25, 0.5], np.float32)
    want = {"is_nan": np.isnan(x), "is_finite": np.isfinite(x)}.get(name)
    got = np.asarray(op(x).numpy())
    assert got.shape == (2,)
    if want is not None:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", FLOAT_ONLY)
def test_tensorflow_refuses_integers_there_too(name):
    tf_real = pytest.importorskip("tensorflow")
    with pytest.raises((TypeError, ValueError, tf_real.errors.InvalidArgumentError, tf_real.errors.NotFoundError)):
        getattr(tf_real.math, name)(tf_real.constant([1, 2]))
