"""Variable: a named handle whose expressions are plain arrays."""

import operator

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _oracles import assert_close

import gradkit as gk

M = np.array([[1.0, -2.0], [3.0, 0.5]], np.float32)


@pytest.fixture
def v():
    return gk.Variable(M, name="m")


def test_attributes(v):
    assert_close(v.value, M)
    assert isinstance(v.numpy(), np.ndarray)
    np.testing.assert_array_equal(v.numpy(), M)
    assert (v.shape, v.dtype, v.name, v.trainable) == ((2, 2), np.float32, "m", True)
    assert (v.ndim, v.size) == (2, 4)
    assert gk.Variable(1, trainable=False, dtype=jnp.float32).trainable is False
    assert gk.Variable(1).dtype == jnp.int32
    assert gk.Variable(1.5).dtype == jnp.float32


def test_numpy_is_a_copy(v):
    copy = v.numpy()
    copy[0, 0] = 100.0
    assert float(v.value[0, 0]) == 1.0


OPS = [operator.add, operator.sub, operator.mul, operator.truediv, operator.pow, operator.matmul]


@pytest.mark.parametrize("op", OPS, ids=lambda op: op.__name__)
def test_operators_give_plain_arrays(v, op):
    other = np.array([[2.0, 1.0], [0.5, 4.0]], np.float32)
    for result, want in [(op(v, other), op(jnp.asarray(M), other)), (op(other, v), op(other, jnp.asarray(M)))]:
        assert not isinstance(result, gk.Variable)
        assert isinstance(result, jax.Array)
        assert_close(result, want)


def test_unary_and_comparison_operators(v):
    assert_close(-v, -M)
    assert_close(abs(v), np.abs(M))
    np.testing.assert_array_equal(v > 0.0, M > 0.0)
    np.testing.assert_array_equal(v == M, np.ones((2, 2), bool))
    assert float(gk.Variable(2.5)) == 2.5
    assert bool(gk.Variable(True))


def test_in_jnp_calls(v):
    assert_close(jnp.sin(v), np.sin(M))
    assert_close(jnp.matmul(v, v), M @ M)
    assert_close(jnp.sum(v, axis=0), M.sum(axis=0))
    assert_close(jnp.stack([v, v]), np.stack([M, M]))


def test_array_protocol(v):
    assert_close(np.asarray(v), M)
    assert np.asarray(v, dtype=np.float64).dtype == np.float64
    assert_close(np.add(v, 1.0), M + 1.0)


def test_slice_reads(v):
    assert_close(v[0].numpy(), M[0])
    assert float(v[1, 0]) == 3.0
    assert_close(v[:, 1] * 2.0, M[:, 1] * 2.0)
    assert v[0:1].shape == (1, 2)


def test_assign_methods_return_the_variable_and_chain(v):
    assert v.assign(M * 2).assign_add(np.ones((2, 2), np.float32)).assign_sub(M) is v
    assert_close(v.value, M + 1.0)
    v[0, 1].assign(9.0)
    v[1].assign_add([1.0, 1.0])
    v[:, 0].assign_sub(1.0)
    want = M + 1.0
    want[0, 1] = 9.0
    want[1] += 1.0
    want[:, 0] -= 1.0
    assert_close(v.value, want)


def test_assign_casts_only_without_loss():
    f = gk.Variable(1.0)
    f.assign(3)  # int -> float is the same kind of value
    assert f.dtype == jnp.float32 and float(f.value) == 3.0


def test_variables_are_hashable_handles(v):
    other = gk.Variable(M, name="m")
    assert len({v, other, v}) == 2
    assert v.ref() is v and v.deref() is v


def test_repr(v):
    assert repr(v) == "<gk.Variable 'm' shape=(2, 2) dtype=float32, value=[[ 1. , -2. ],\n [ 3. ,  0.5]]>"


def test_variable_flattens_to_its_value(v):
    assert_close(jax.tree.leaves({"k": v}), [M])
    assert_close(jax.jit(lambda x: x * 2)(v), M * 2)


def test_assign_copies_a_numpy_array(v):
    # TensorFlow's assign copies; a later write into the NumPy array must not reach the Variable,
    # eagerly or under a tape.
    src = np.array([[5.0, 6.0], [7.0, 8.0]], np.float32)
    v.assign(src)
    src[0, 0] = 100.0
    assert isinstance(v.value, jax.Array)
    np.testing.assert_array_equal(v.numpy(), [[5.0, 6.0], [7.0, 8.0]])
    with gk.GradientTape():
        v.assign(src)
        src[0, 0] = -1.0
        y = gk.numpy.sum(v * v)
    np.testing.assert_array_equal(v.numpy(), [[100.0, 6.0], [7.0, 8.0]])
    assert float(y) == 100.0**2 + 6.0**2 + 7.0**2 + 8.0**2


def test_a_variable_copies_its_numpy_initial_value():
    for shape in [(2,), (64, 64)]:  # small and buffer-aligned arrays alike
        src = np.ones(shape, np.float32)
        v = gk.Variable(src)
        src[0] = 7.0
        np.testing.assert_array_equal(v.numpy(), np.ones(shape, np.float32))
