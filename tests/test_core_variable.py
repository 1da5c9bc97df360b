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


@pytest.mark.parametrize(
    ("value", "dtype"),
    [
        (1.5, jnp.int32),
        (np.array([1.5]), jnp.int8),
        (jnp.array([1.5j]), jnp.float32),
        ([0.5], jnp.bool_),
        (300, jnp.int8),
    ],
    ids=repr,
)
def test_an_initial_value_the_dtype_cannot_hold_is_refused_as_an_assignment_is(value, dtype):
    # Oracle: NumPy's same_kind casting rule, which assignment follows (a fraction, an imaginary
    # part, an out-of-range Python int would be lost).
    with pytest.raises((TypeError, ValueError), match=r"^\[gradkit\] cannot create Variable 'w' of dtype"):
        gk.Variable(value, dtype=dtype, name="w")
    held = gk.Variable(jnp.zeros(np.shape(value), dtype))
    with pytest.raises(Exception, match=r"\[gradkit\]"):
        held.assign(value)


@pytest.mark.parametrize(
    ("value", "dtype"), [(2, jnp.int8), (True, jnp.float32), (np.arange(3), jnp.float32)], ids=repr
)
def test_an_initial_value_cast_within_its_kind_is_kept(value, dtype):
    np.testing.assert_array_equal(gk.Variable(value, dtype=dtype).numpy(), np.asarray(value).astype(dtype))


def test_variables_are_hashable_handles(v):
    other = gk.Variable(M, name="m")
    assert len({v, other, v}) == 2
    assert v.ref().deref() is v and v.ref() == v.ref() and hash(v.ref()) == hash(v.ref())


def test_references_compare_by_identity_not_value():
    # TensorFlow's Reference: equal exactly when they wrap the same object, whatever the values
    # (a Variable's own == compares values elementwise).
    a, b = gk.Variable([1.0, 2.0]), gk.Variable([1.0, 2.0])
    assert a.ref() != b.ref() and a.ref() in [b.ref(), a.ref()] and b.ref() not in {a.ref()}
    assert {a.ref(): "a", b.ref(): "b"}[b.ref()] == "b"


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


def _error_type(call):
    try:
        call()
    except gk.GradkitError as e:
        return type(e)
    return None


@pytest.mark.parametrize(
    "value",
    [7, True, 2.7, np.float32(2.5), np.int64(4), np.int8(3), jnp.array(1.5), jnp.array(6, jnp.int32)],
    ids=repr,
)
@pytest.mark.parametrize("dtype", [np.int32, np.float32])
def test_slice_assignment_accepts_exactly_what_whole_assignment_accepts(value, dtype):
    # The oracle is whole assignment of the same scalar into a scalar Variable of the same dtype.
    whole = gk.Variable(np.zeros((), dtype), name="whole")
    sliced = gk.Variable(np.zeros(3, dtype), name="sliced")
    in_state = gk.State.of([sliced])
    whole_error = _error_type(lambda: whole.assign(value))
    assert _error_type(lambda: sliced[1].assign(value)) is whole_error
    assert _error_type(lambda: sliced[2].assign_add(value)) is whole_error
    assert _error_type(lambda: in_state.at[sliced][0].set(value)) is whole_error
    if whole_error is None:
        want = np.array([0, whole.numpy(), whole.numpy()], dtype)
        np.testing.assert_array_equal(sliced.numpy(), want)
        assert sliced.dtype == dtype
        np.testing.assert_array_equal(in_state.at[sliced][0].set(value)[sliced], [whole.numpy(), 0, 0])
    else:
        np.testing.assert_array_equal(sliced.numpy(), np.zeros(3, dtype))


class _Pending:
    """A value a layer above left pending, as the tape does: a compiled program computes it at the first read."""

    def __init__(self, x):
        self.x = x

    def __gradkit_value__(self):
        return _TRIPLE(self.x)


_TRIPLE = jax.jit(lambda x: x * 3.0)


def test_pending_value_first_read_inside_jax_jit_is_stored_concrete():
    w = gk.Variable(np.zeros(2, np.float32), name="w")
    w._value = _Pending(jnp.array([1.0, 2.0]))
    with pytest.warns(gk.GradkitWarning, match="constant of the compiled program"):
        out = jax.jit(lambda x: x * w.value)(jnp.array([1.0, 10.0]))
    np.testing.assert_array_equal(out, [3.0, 60.0])
    assert isinstance(w._value, jax.Array)  # concrete, not a tracer of the finished jit trace
    np.testing.assert_array_equal(w.numpy(), [3.0, 6.0])


def test_pending_value_first_read_inside_gk_jit():
    w = gk.Variable(np.zeros(2, np.float32), name="w")
    w._value = _Pending(jnp.array([1.0, 2.0]))
    evaluate = gk.jit(lambda x: jnp.sum(w.value) * x)
    # sum(3 * [1, 2]) * 2, on the first call and on the next (which reads the stored value).
    assert float(evaluate(2.0)) == 18.0
    assert float(evaluate(2.0)) == 18.0
    np.testing.assert_array_equal(w.numpy(), [3.0, 6.0])


def test_pending_value_made_concrete_inside_a_trace():
    from gradkit._core import frames

    pending, seen = _Pending(jnp.array(2.0)), []
    jax.jit(lambda x: seen.append(frames.concrete(pending)) or x)(1.0)
    assert isinstance(seen[0], jax.Array) and float(seen[0]) == 6.0


def test_a_slice_reads_as_the_value_when_it_was_taken_and_assigns_into_the_current_one():
    v = gk.Variable(jnp.array([1.0, 2.0, 3.0]))
    first = v[0]  # TensorFlow's v[0] is a snapshot: a later assignment does not change it
    v.assign(jnp.array([5.0, 6.0, 7.0]))
    assert float(first + 0.0) == 1.0
    snapshots = []
    for _ in range(3):
        snapshots.append(v[:2])
        v.assign_add(jnp.ones(3))
    assert [np.asarray(s + 0.0).tolist() for s in snapshots] == [[5.0, 6.0], [6.0, 7.0], [7.0, 8.0]]
    v[1:].assign(jnp.zeros(2))  # into the current value [8, 9, 10]
    np.testing.assert_array_equal(np.asarray(v.value), [8.0, 0.0, 0.0])


def test_assigning_a_slice_of_a_variable_stores_its_value_not_the_slice():
    v = gk.Variable(jnp.array([1.0, 2.0, 3.0]))
    w = gk.Variable(jnp.array([4.0, 5.0, 6.0, 7.0]))
    v.assign(w[1:])
    assert isinstance(v.value, jax.Array)
    v.assign_add(w[:3])
    np.testing.assert_array_equal(np.asarray(v.value), [9.0, 11.0, 13.0])


def test_a_slice_of_a_local_variable_assigned_under_transforms():
    u = gk.Variable(jnp.array([1.0, 2.0, 3.0]))

    def f(x):
        local = gk.Variable(u * x)  # a local accumulator from a traced value
        u.assign(local[::-1])  # only its value reaches u: the local Variable does not outlive the call
        return jnp.sum(u)

    def g(x):
        local = gk.Variable(u * x)
        kept = gk.Variable(jnp.zeros(3))
        kept.assign(local[::-1])
        return jnp.sum(kept)

    np.testing.assert_allclose(float(gk.grad(f)(jnp.float32(2.0))), 6.0)  # d sum(u x)/dx = sum(u)
    np.testing.assert_allclose(np.asarray(gk.vmap(g)(jnp.array([2.0, 3.0]))), [12.0, 18.0])
    np.testing.assert_allclose(float(gk.jit(f)(jnp.float32(2.0))), 12.0)
    np.testing.assert_array_equal(np.asarray(u.value), [6.0, 4.0, 2.0])


def test_round_divmod_and_format_read_the_value_as_a_jax_array_does():
    v = gk.Variable(2.345, name="v")
    a = jnp.float32(2.345)  # the oracle: the same value as a jax.Array
    assert round(v) == round(a) and float(round(v, 1)) == float(round(a, 1))
    for got, want in zip(divmod(v, 2.0) + divmod(7.0, v), divmod(a, 2.0) + divmod(7.0, a)):
        np.testing.assert_allclose(got, want)
    assert f"{v:.2f}" == f"{a:.2f}" == "2.35"
    assert f"{v}" == str(v)
    # The remainder's derivative is 1: d(r^2)/dv = 2 r, as jax.grad of the pure rewrite gives.
    np.testing.assert_allclose(
        gk.grad(lambda: divmod(v, 2.0)[1] ** 2, wrt=v)(), jax.grad(lambda x: (x % 2.0) ** 2)(a), rtol=1e-6
    )
